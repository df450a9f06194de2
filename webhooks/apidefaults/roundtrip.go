package apidefaults

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The conversion round trip: the API server converts a v1 object to its
// internal version for admission and back to v1 for the webhooks. Most
// fields come back as they went; these do not (Kubernetes 1.36,
// pkg/apis/core/v1/conversion.go, pkg/apis/apps/v1/conversion.go).

// initContainerAnnotations are dropped from pods and pod templates.
var initContainerAnnotations = []string{
	"pod.beta.kubernetes.io/init-containers",
	"pod.alpha.kubernetes.io/init-containers",
	"pod.beta.kubernetes.io/init-container-statuses",
	"pod.alpha.kubernetes.io/init-container-statuses",
}

// roundTripPodSpec: the deprecated serviceAccount is an alias of
// serviceAccountName. The internal spec has only the name, taken from
// serviceAccount when serviceAccountName is empty; on the way back both
// carry it.
func roundTripPodSpec(spec *corev1.PodSpec) {
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
}

func roundTripAnnotations(annotations map[string]string) {
	for _, k := range initContainerAnnotations {
		delete(annotations, k)
	}
}

func roundTripPod(pod *corev1.Pod) {
	roundTripAnnotations(pod.Annotations)
	roundTripPodSpec(&pod.Spec)
	// A negative grace period means 1 second, for Pods only.
	if p := pod.Spec.TerminationGracePeriodSeconds; p != nil && *p < 0 {
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
	}
}

func roundTripTemplate(t *corev1.PodTemplateSpec) {
	roundTripAnnotations(t.Annotations)
	roundTripPodSpec(&t.Spec)
}

// roundTripDaemonSet: the internal DaemonSet keeps its template generation
// in a field, read from and written back to a deprecated annotation, so
// every DaemonSet comes back with it ("0" on a create; the server sets 1
// only after mutating admission).
func roundTripDaemonSet(ds *appsv1.DaemonSet) error {
	generation := int64(0)
	if v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("annotation %s must be an integer (the API server's conversion refuses it)", appsv1.DeprecatedTemplateGeneration)
		}
		generation = n
	}
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(generation, 10)
	return nil
}

// roundTripDeployment: the deprecated rollback annotation becomes a field
// of the internal Deployment and comes back as the same annotation; an empty
// one does not come back.
func roundTripDeployment(d *appsv1.Deployment) error {
	v, ok := d.Annotations[appsv1.DeprecatedRollbackTo]
	if !ok {
		return nil
	}
	if v == "" {
		delete(d.Annotations, appsv1.DeprecatedRollbackTo)
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("annotation %s must be an integer (the API server's conversion refuses it)", appsv1.DeprecatedRollbackTo)
	}
	d.Annotations[appsv1.DeprecatedRollbackTo] = strconv.FormatInt(n, 10)
	return nil
}
