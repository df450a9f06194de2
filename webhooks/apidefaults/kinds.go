package apidefaults

import (
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Default applies to obj, in place, the defaults the API server applies when
// it decodes a v1 object of a kind gatehouse intercepts, then the effects of
// its conversion to the internal version and back (what admission webhooks
// are sent). Other kinds are left as decoded. An error is what the server's
// conversion would refuse (a deprecated annotation that must be an integer).
func Default(obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		defaultPod(o)
		roundTripPod(o)
	case *corev1.PodTemplate:
		defaultPodSpec(&o.Template.Spec)
		roundTripTemplate(&o.Template)
	case *corev1.ReplicationController:
		defaultReplicationController(o)
		if o.Spec.Template != nil {
			defaultPodSpec(&o.Spec.Template.Spec)
			roundTripTemplate(o.Spec.Template)
		}
	case *appsv1.Deployment:
		defaultDeployment(o)
		defaultPodSpec(&o.Spec.Template.Spec)
		roundTripTemplate(&o.Spec.Template)
		return roundTripDeployment(o)
	case *appsv1.DaemonSet:
		defaultDaemonSet(o)
		defaultPodSpec(&o.Spec.Template.Spec)
		roundTripTemplate(&o.Spec.Template)
		return roundTripDaemonSet(o)
	case *appsv1.StatefulSet:
		defaultStatefulSet(o)
		defaultPodSpec(&o.Spec.Template.Spec)
		roundTripTemplate(&o.Spec.Template)
	case *appsv1.ReplicaSet:
		if o.Spec.Replicas == nil {
			o.Spec.Replicas = ptr(int32(1))
		}
		defaultPodSpec(&o.Spec.Template.Spec)
		roundTripTemplate(&o.Spec.Template)
	case *batchv1.Job:
		defaultJob(o)
		defaultJobSpec(&o.Spec)
	case *batchv1.CronJob:
		defaultCronJob(o)
		defaultJobSpec(&o.Spec.JobTemplate.Spec)
	case *corev1.PersistentVolumeClaim:
		defaultClaim(o)
	case *corev1.Namespace:
		if o.Name != "" {
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels[corev1.LabelMetadataName] = o.Name
		}
		if o.Status.Phase == "" {
			o.Status.Phase = corev1.NamespaceActive
		}
	case *corev1.Secret:
		if o.Type == "" {
			o.Type = corev1.SecretTypeOpaque
		}
		// The internal Secret has no stringData: it is merged into data.
		if len(o.StringData) > 0 && o.Data == nil {
			o.Data = map[string][]byte{}
		}
		for k, v := range o.StringData {
			o.Data[k] = []byte(v)
		}
		o.StringData = nil
	}
	return nil
}

// defaultPod is SetDefaults_Pod and the Pod's generated defaults: requests
// default to limits per container, service links are on, and a pod on the
// host network gets its container ports as host ports.
func defaultPod(pod *corev1.Pod) {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			r := &list[i].Resources
			if r.Limits == nil {
				continue
			}
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	if pod.Spec.EnableServiceLinks == nil {
		pod.Spec.EnableServiceLinks = ptr(corev1.DefaultEnableServiceLinks)
	}
	if pod.Spec.HostNetwork {
		for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				for j := range list[i].Ports {
					if list[i].Ports[j].HostPort == 0 {
						list[i].Ports[j].HostPort = list[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	defaultPodSpec(&pod.Spec)
}

func defaultReplicationController(rc *corev1.ReplicationController) {
	if rc.Spec.Template != nil && rc.Spec.Template.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = rc.Spec.Template.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = rc.Spec.Template.Labels
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr(int32(1))
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr(int32(1))
	}
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr(int32(600))
	}
}

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	s := &ds.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr(int32(10))
	}
}

// defaultStatefulSet: MaxUnavailableStatefulSet is off by default in 1.36,
// so rollingUpdate.maxUnavailable is not defaulted.
func defaultStatefulSet(ss *appsv1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && spec.UpdateStrategy.RollingUpdate != nil &&
		spec.UpdateStrategy.RollingUpdate.Partition == nil {
		spec.UpdateStrategy.RollingUpdate.Partition = ptr(int32(0))
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr(int32(10))
	}
	for i := range spec.VolumeClaimTemplates {
		defaultClaim(&spec.VolumeClaimTemplates[i])
		// The conversion round trip states each template's type.
		spec.VolumeClaimTemplates[i].APIVersion = "v1"
		spec.VolumeClaimTemplates[i].Kind = "PersistentVolumeClaim"
	}
}

func defaultJob(job *batchv1.Job) {
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr(int32(1))
		spec.Parallelism = ptr(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr(int32(1))
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr(int32(math.MaxInt32))
		} else {
			spec.BackoffLimit = ptr(int32(6))
		}
	}
	if spec.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr(false)
	}
	if spec.PodReplacementPolicy == nil { // JobPodReplacementPolicy: GA
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr(false)
	}
}

// defaultJobSpec is what a Job and a CronJob's job template share: the pod
// failure policy's condition patterns and the pod template.
func defaultJobSpec(spec *batchv1.JobSpec) {
	if spec.PodFailurePolicy != nil {
		for i := range spec.PodFailurePolicy.Rules {
			for j := range spec.PodFailurePolicy.Rules[i].OnPodConditions {
				p := &spec.PodFailurePolicy.Rules[i].OnPodConditions[j]
				if p.Status == "" {
					p.Status = corev1.ConditionTrue
				}
			}
		}
	}
	defaultPodSpec(&spec.Template.Spec)
	roundTripTemplate(&spec.Template)
}

func defaultCronJob(cj *batchv1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr(int32(3))
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr(int32(1))
	}
}

// defaultClaim is SetDefaults_PersistentVolumeClaim with its spec's defaults.
func defaultClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	defaultClaimSpec(&pvc.Spec)
	roundUp(pvc.Status.Capacity)
	roundUp(pvc.Status.AllocatedResources)
}

func defaultClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
	}
	roundUp(spec.Resources.Limits)
	roundUp(spec.Resources.Requests)
}
