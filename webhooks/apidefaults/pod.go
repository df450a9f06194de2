package apidefaults

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Pod specs, everywhere they occur (Kubernetes 1.36, pkg/apis/core/v1:
// SetDefaults_PodSpec, SetDefaults_Volume, SetDefaults_Container and the
// generated SetObjectDefaults_* that walk into every nested struct).
//
// Reads: a v1 pod spec. Sets: dnsPolicy, restartPolicy, securityContext {},
// terminationGracePeriodSeconds, schedulerName; per volume the source's
// defaults (modes, hostPath type, ...); per container imagePullPolicy,
// terminationMessagePath/Policy, port protocol, fieldRef apiVersion, probe
// and HTTP action defaults, quantities rounded up to milli scale.

func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUp(spec.Overhead)
	if spec.Resources != nil {
		roundUp(spec.Resources.Limits)
		roundUp(spec.Resources.Requests)
	}
}

func defaultVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	if *src == (corev1.VolumeSource{}) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if src.Image != nil && src.Image.PullPolicy == "" { // ImageVolume: GA in 1.36
		src.Image.PullPolicy = pullPolicyFor(src.Image.Reference)
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr(corev1.HostPathUnset)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if src.RBD != nil {
		defaultString(&src.RBD.RBDPool, "rbd")
		defaultString(&src.RBD.RadosUser, "admin")
		defaultString(&src.RBD.Keyring, "/etc/ceph/keyring")
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptr(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIItems(src.DownwardAPI.Items)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := src.AzureDisk; d != nil {
		if d.CachingMode == nil {
			d.CachingMode = ptr(corev1.AzureDataDiskCachingReadWrite)
		}
		if d.FSType == nil {
			d.FSType = ptr("ext4")
		}
		if d.ReadOnly == nil {
			d.ReadOnly = ptr(false)
		}
		if d.Kind == nil {
			d.Kind = ptr(corev1.AzureSharedBlobDisk)
		}
	}
	if p := src.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptr(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			s := &p.Sources[i]
			if s.DownwardAPI != nil {
				defaultDownwardAPIItems(s.DownwardAPI.Items)
			}
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				s.ServiceAccountToken.ExpirationSeconds = ptr(int64(3600))
			}
		}
	}
	if s := src.ScaleIO; s != nil {
		defaultString(&s.StorageMode, "ThinProvisioned")
		defaultString(&s.FSType, "xfs")
	}
	if e := src.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		defaultClaimSpec(&e.VolumeClaimTemplate.Spec)
	}
}

func defaultDownwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			defaultString(&items[i].FieldRef.APIVersion, "v1")
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		if from.FieldRef != nil {
			defaultString(&from.FieldRef.APIVersion, "v1")
		}
		if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
			from.FileKeyRef.Optional = ptr(false)
		}
	}
	roundUp(c.Resources.Limits)
	roundUp(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p == nil {
			continue
		}
		defaultInt32(&p.TimeoutSeconds, 1)
		defaultInt32(&p.PeriodSeconds, 10)
		defaultInt32(&p.SuccessThreshold, 1)
		defaultInt32(&p.FailureThreshold, 3)
		defaultHTTPGet(p.HTTPGet)
		if p.GRPC != nil && p.GRPC.Service == nil {
			p.GRPC.Service = ptr("")
		}
	}
	if l := c.Lifecycle; l != nil {
		if l.PostStart != nil {
			defaultHTTPGet(l.PostStart.HTTPGet)
		}
		if l.PreStop != nil {
			defaultHTTPGet(l.PreStop.HTTPGet)
		}
	}
}

func defaultHTTPGet(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	defaultString(&a.Path, "/")
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

// pullPolicyFor is Always for an image tagged latest, else IfNotPresent
// (an untagged reference counts as latest, one pinned by digest does not).
func pullPolicyFor(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// imageTag is the tag parsers.ParseImageName finds in an image reference:
// "latest" when a valid reference names neither a tag nor a digest, "" when
// it names only a digest or does not parse (the server then defaults
// IfNotPresent, and validation decides about the reference).
func imageTag(image string) string {
	m := imageReference.FindStringSubmatch(image)
	if m == nil || len(m[1]) > 255 {
		return ""
	}
	tag, digest := m[2], m[3]
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}

// imageReference is the grammar of github.com/distribution/reference
// (name, optional tag, optional digest), which the API server parses image
// references with; the digest's hex length is that of sha256, sha384 or
// sha512.
var imageReference = func() *regexp.Regexp {
	const (
		domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain          = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
		pathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
		name            = `(?:` + domain + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
		tag             = `[\w][\w.-]{0,127}`
		digest          = `(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})`
	)
	return regexp.MustCompile(`^(` + name + `)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
}()

// roundUp rounds every quantity up to milli scale, as SetDefaults_ResourceList does.
func roundUp(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(resource.Milli)
		list[name] = q
	}
}

func defaultString(s *string, value string) {
	if *s == "" {
		*s = value
	}
}

func defaultInt32(n *int32, value int32) {
	if *n == 0 {
		*n = value
	}
}

func ptr[T any](v T) *T { return &v }
