// This file checks the names that scope entries carry, wherever they are
// written: the value of service=<name> and listener-volume=<name> in the
// scope annotation (grammar.go) and CredentialsScope services[i] and
// listenerVolumes[i] in product custom resources (crwalk.go). It allows:
//
//   - a service name that is a Service's name: a DNS-1035 label (at most 63
//     lowercase letters, digits and "-", starting with a letter, ending with
//     a letter or digit). secret-operator (upstream, pod_info.go getFQDN)
//     puts <name>.<namespace>.svc.cluster.local into the certificate's SANs
//     unchecked, so "*" becomes the wildcard *.<namespace>.svc.cluster.local,
//     "*.x" covers every pod of the headless Service x, and "a.b" names pod
//     a of the headless Service b;
//   - a listener volume name that is a pod volume's name: a DNS-1123 label.
//     secret-operator looks the name up among the pod's volumes and silently
//     skips one it does not find, so any other name drops the listener's
//     addresses from the certificate.
//
// The checks are the API server's own (k8s.io/apimachinery validation).
// Messages describe the SAN a name would produce by its shape only
// ("*.<label>.<namespace>.svc.cluster.local"), never by its text.
package scope

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	msgServiceNameRule = "a Service name is a DNS-1035 label: at most 63 lowercase letters, digits and \"-\", " +
		"starting with a letter and ending with a letter or digit"
	msgVolumeNameRule = "a volume name is a DNS-1123 label: at most 63 lowercase letters, digits and \"-\", " +
		"starting and ending with a letter or digit"
	msgListenerVolumeUnmatched = "no pod volume has such a name, so secret-operator would match none and silently " +
		"issue the certificate without the listener's addresses"
	sanSuffix = ".<namespace>.svc.cluster.local"
)

// validServiceName reports whether name can be a Service's name.
func validServiceName(name string) bool { return len(validation.IsDNS1035Label(name)) == 0 }

// validVolumeName reports whether name can be a pod volume's name.
func validVolumeName(name string) bool { return len(validation.IsDNS1123Label(name)) == 0 }

// describeServiceSAN says, by shape only, which SAN secret-operator would
// put into the certificate for a service name that is not a Service name,
// and what that SAN covers.
func describeServiceSAN(name string) string {
	labels := strings.Split(name, ".")
	shapes := make([]string, len(labels))
	wildcard := false
	for i, label := range labels {
		switch {
		case label == "*":
			shapes[i] = "*"
			wildcard = true
		case strings.Contains(label, "*"):
			shapes[i] = "<label with *>"
			wildcard = true
		case label == "":
			shapes[i] = "<empty label>"
		default:
			shapes[i] = "<label>"
		}
	}
	san := strings.Join(shapes, ".") + sanSuffix
	switch {
	case name == "*":
		return "the wildcard SAN " + san + ", which covers every Service of the namespace"
	case labels[0] == "*" && len(labels) == 2:
		return "the wildcard SAN " + san + ", which covers every pod of a headless Service"
	case wildcard:
		return "the wildcard SAN " + san + ", which covers names no single Service has"
	case len(labels) > 1:
		return "the SAN " + san + " of " + strconv.Itoa(len(labels)) + " labels before the namespace, which names a pod of a " +
			"headless Service (or another host), not a Service"
	case len(name) > validation.DNS1035LabelMaxLength:
		return "the SAN " + san + " whose first label is longer than 63 characters, which no Service has"
	default:
		return "the SAN " + san + " whose first label has characters or a first or last character no Service name has"
	}
}
