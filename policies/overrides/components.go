// This file is the table of components an override can target (upstream):
//
//   - net: a DaemonSet and a Deployment, cluster singleton;
//   - machina: a Deployment, cluster singleton;
//   - gantry: a DaemonSet, cluster singleton;
//   - metalman: a Deployment per Site;
//   - storage: a DaemonSet per Site.

package overrides

import "strings"

// workloadKind is a set of the two workload kinds the operator emits.
type workloadKind uint8

const (
	deployment workloadKind = 1 << iota
	daemonSet

	// eitherKind stands for an entry whose kind is not known: the patch is
	// then checked against what either kind allows.
	eitherKind = deployment | daemonSet
)

// Kind names, as an entry's kind field and Workload.Kind hold them.
const (
	kindDeployment = "Deployment"
	kindDaemonSet  = "DaemonSet"
)

// parseKind returns the kind named s.
func parseKind(s string) (workloadKind, bool) {
	switch s {
	case kindDeployment:
		return deployment, true
	case kindDaemonSet:
		return daemonSet, true
	}
	return 0, false
}

// String names the kinds in k, "a Deployment and a DaemonSet" style.
func (k workloadKind) String() string {
	var names []string
	if k&deployment != 0 {
		names = append(names, "a "+kindDeployment)
	}
	if k&daemonSet != 0 {
		names = append(names, "a "+kindDaemonSet)
	}
	return strings.Join(names, " and ")
}

// component is what the operator emits for one component.
type component struct {
	// kinds are the workload kinds the component runs as.
	kinds workloadKind
	// perSite is set for components with one workload per Site; the others
	// are cluster singletons.
	perSite bool
}

var components = map[string]component{
	"net":      {kinds: daemonSet | deployment},
	"machina":  {kinds: deployment},
	"gantry":   {kinds: daemonSet},
	"metalman": {kinds: deployment, perSite: true},
	"storage":  {kinds: daemonSet, perSite: true},
}

// componentNames lists the components for messages.
const componentNames = "net, machina, gantry, metalman or storage"
