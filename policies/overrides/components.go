// This file is the table of components an override can target: for each
// component the workload kinds it runs as, whether it is a cluster singleton
// or runs one workload per Site, and the labels that name a per-Site
// workload's Site. The table is configuration (docs/component-overrides.md,
// "Component table"): Validate takes one, built by NewTable from a list or
// by Preset from the name of one of the tables below.
//
// The presets are the tables of the overrides engine of Azure unbounded
// (internal/operator/override/validate.go, knownComponents) at the commits
// named, read from upstream's sources:
//
//   - upstream-59fa209 (validate.go @ 59fa2096c94de42e266bdd47e483a392c9846c50):
//     net, machina, gantry, metalman, storage;
//   - upstream-9064e39 (validate.go @ 9064e3909e7f8ee96cc3a768b55a08eeb0d53348):
//     token-refresher added;
//   - upstream-605ff92 (validate.go @ 605ff92383cbf8d22acf100dae4350407959fcad):
//     racer-controlplane and racer-dataplane added;
//   - upstream-26f231b (validate.go @ 26f231bdbbb0c84113a6826564c0e5f71964bf85):
//     storage removed;
//   - upstream-2878749 (validate.go @ 287874959b2c91e3dbc8aad8a1e3d7d8e82676da):
//     racer, one Deployment, instead of racer-controlplane and
//     racer-dataplane;
//   - upstream-d738fa9 (validate.go @ d738fa9f8f0fbebf7e877ed64cf0b21a4f054bff):
//     racer as a Deployment and a DaemonSet.
//
// The default, any, holds every component of every preset (each has the same
// scope in every table that lists it, and its kinds are those of all of
// them): gatehouse never denies an entry some released engine accepts, and a
// platform team that knows which release runs picks its preset to refuse
// what that release refuses as well.
//
// Site labels, as upstream's operator stamps them on each per-Site workload:
// metalman unbounded-cloud.io/site (metalmanDeployment, MachineSiteLabelKey);
// storage unbounded-cloud.io/site (components/storage scopeDaemonSetToSite,
// component.SiteLabelKey, @ 9064e390) and, on the workloads of the releases
// before the component packages, net.unbounded-cloud.io/site
// (scopeStorageDaemonSetToSite in internal/operator/reconciler.go);
// racer-dataplane racer.unbounded-cloud.io/universe on its pod template,
// whose value is the Site name (components/racer/resources.go
// dataplaneDaemonSet @ 605ff923, racer.UniverseForSite).

package overrides

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// Component is one entry of a component table.
type Component struct {
	// Name is the component as an override's component field names it.
	Name string
	// Kinds are the workload kinds it runs as: Deployment, DaemonSet or both.
	Kinds []string
	// PerSite is set for a component with one workload per Site; the others
	// are cluster singletons, on which sites is an error.
	PerSite bool
	// SiteLabels are the label keys, in order, whose value names the Site of
	// one of its workloads: the first one the workload carries (on itself,
	// or else on its pod template) wins. Per-Site components only.
	SiteLabels []string
}

// component is what the checks need of a table entry.
type component struct {
	kinds   workloadKind
	perSite bool
}

// Table is a validated component table.
type Table struct {
	byName     map[string]component
	siteLabels map[string][]string
	// names lists the components for messages, "a, b or c".
	names string
}

// Preset names.
const (
	// PresetAny is the default: every component of every upstream table.
	PresetAny = "any"
)

// presets are the upstream tables (see the file comment), oldest first as
// far as their content tells.
var presets = []struct {
	name       string
	components []Component
}{
	{"upstream-59fa209", []Component{netComponent, machinaComponent, gantryComponent, metalmanComponent, storageComponent}},
	{"upstream-9064e39", []Component{netComponent, machinaComponent, gantryComponent, tokenRefresherComponent, metalmanComponent, storageComponent}},
	{"upstream-605ff92", []Component{netComponent, machinaComponent, gantryComponent, tokenRefresherComponent, metalmanComponent, storageComponent,
		racerControlPlaneComponent, racerDataplaneComponent}},
	{"upstream-26f231b", []Component{netComponent, machinaComponent, gantryComponent, tokenRefresherComponent, metalmanComponent,
		racerControlPlaneComponent, racerDataplaneComponent}},
	{"upstream-2878749", []Component{netComponent, machinaComponent, gantryComponent, tokenRefresherComponent, racerDeploymentComponent, metalmanComponent}},
	{"upstream-d738fa9", []Component{netComponent, machinaComponent, gantryComponent, racerBothComponent, tokenRefresherComponent, metalmanComponent}},
}

// The components of the presets.
var (
	netComponent               = Component{Name: "net", Kinds: []string{kindDaemonSet, kindDeployment}}
	machinaComponent           = Component{Name: "machina", Kinds: []string{kindDeployment}}
	gantryComponent            = Component{Name: "gantry", Kinds: []string{kindDaemonSet}}
	tokenRefresherComponent    = Component{Name: "token-refresher", Kinds: []string{kindDeployment}}
	metalmanComponent          = Component{Name: "metalman", Kinds: []string{kindDeployment}, PerSite: true, SiteLabels: []string{"unbounded-cloud.io/site"}}
	storageComponent           = Component{Name: "storage", Kinds: []string{kindDaemonSet}, PerSite: true, SiteLabels: []string{"unbounded-cloud.io/site", "net.unbounded-cloud.io/site"}}
	racerControlPlaneComponent = Component{Name: "racer-controlplane", Kinds: []string{kindDeployment}}
	racerDataplaneComponent    = Component{Name: "racer-dataplane", Kinds: []string{kindDaemonSet}, PerSite: true, SiteLabels: []string{"racer.unbounded-cloud.io/universe"}}
	racerDeploymentComponent   = Component{Name: "racer", Kinds: []string{kindDeployment}}
	racerBothComponent         = Component{Name: "racer", Kinds: []string{kindDeployment, kindDaemonSet}}
)

// PresetNames lists the presets, the default first.
func PresetNames() []string {
	names := []string{PresetAny}
	for _, p := range presets {
		names = append(names, p.name)
	}
	return names
}

// PresetComponents returns the components of a preset, in its order.
func PresetComponents(name string) ([]Component, bool) {
	if name == PresetAny {
		return anyComponents(), true
	}
	for _, p := range presets {
		if p.name == name {
			return slices.Clone(p.components), true
		}
	}
	return nil, false
}

// anyComponents is every component of every preset, in the order they
// first appear, with the kinds of all of them.
func anyComponents() []Component {
	var out []Component
	for _, p := range presets {
		for _, c := range p.components {
			i := slices.IndexFunc(out, func(o Component) bool { return o.Name == c.Name })
			if i < 0 {
				c.Kinds = slices.Clone(c.Kinds)
				out = append(out, c)
				continue
			}
			for _, kind := range c.Kinds {
				if !slices.Contains(out[i].Kinds, kind) {
					out[i].Kinds = append(out[i].Kinds, kind)
				}
			}
		}
	}
	return out
}

// Preset returns the table of a preset.
func Preset(name string) (*Table, error) {
	cs, ok := PresetComponents(name)
	if !ok {
		return nil, fmt.Errorf("no such component table; the presets are %s", strings.Join(PresetNames(), ", "))
	}
	t, errs := NewTable(nil, cs)
	return t, errs.ToAggregate()
}

// MustPreset is Preset for a name known to exist.
func MustPreset(name string) *Table {
	t, err := Preset(name)
	if err != nil {
		panic(name + ": " + err.Error())
	}
	return t
}

// NewTable checks a component list and returns its table, or every problem
// found, each attributed to its field below at, the path of the list
// (components[1].kinds[0] when at is components; the field names are those
// of the configuration's overrides.components). A list that is empty, a name
// that is not a DNS label or is repeated, kinds that are missing, repeated
// or neither Deployment nor DaemonSet, and Site labels on a singleton,
// missing on a per-Site component, not label keys or repeated are errors.
func NewTable(at *field.Path, cs []Component) (*Table, field.ErrorList) {
	if len(cs) == 0 {
		return nil, field.ErrorList{field.Required(at, "the component table is empty, so every override would be denied; list at least one component")}
	}
	var errs field.ErrorList
	duplicate := func(p *field.Path, value, what string, first *field.Path) {
		e := field.Duplicate(p, value)
		e.Detail = "the same " + what + " as " + first.String()
		errs = append(errs, e)
	}
	t := &Table{byName: map[string]component{}, siteLabels: map[string][]string{}}
	firstName := map[string]int{}
	for i, c := range cs {
		entry := at.Index(i)
		switch j, seen := firstName[c.Name]; {
		case len(validation.IsDNS1123Label(c.Name)) > 0:
			errs = append(errs, field.Invalid(entry.Child("name"), field.OmitValueType{},
				"must be a lowercase RFC 1123 label, as upstream's component names are"))
		case seen:
			duplicate(entry.Child("name"), c.Name, "component", at.Index(j).Child("name"))
		default:
			firstName[c.Name] = i
		}
		var kinds workloadKind
		kindsAt := entry.Child("kinds")
		if len(c.Kinds) == 0 {
			errs = append(errs, field.Required(kindsAt, "list the kinds the component runs as: Deployment, DaemonSet or both"))
		}
		for j, name := range c.Kinds {
			kind, ok := parseKind(name)
			switch {
			case !ok:
				errs = append(errs, field.NotSupported(kindsAt.Index(j), name, []string{kindDeployment, kindDaemonSet}))
			case kinds&kind != 0:
				duplicate(kindsAt.Index(j), name, "kind", kindsAt.Index(slices.Index(c.Kinds, name)))
			}
			kinds |= kind
		}
		labelsAt := entry.Child("siteLabels")
		switch {
		case c.PerSite && len(c.SiteLabels) == 0:
			errs = append(errs, field.Required(labelsAt, "a per-Site component needs the label that names each workload's Site"))
		case !c.PerSite && len(c.SiteLabels) > 0:
			errs = append(errs, field.Forbidden(labelsAt, "a cluster singleton has no Site; omit siteLabels"))
		}
		for j, key := range c.SiteLabels {
			if len(validation.IsQualifiedName(key)) > 0 {
				errs = append(errs, field.Invalid(labelsAt.Index(j), field.OmitValueType{}, "must be a label key"))
			} else if first := slices.Index(c.SiteLabels, key); first != j {
				duplicate(labelsAt.Index(j), key, "label", labelsAt.Index(first))
			}
		}
		if c.Name != "" && !t.has(c.Name) {
			t.byName[c.Name] = component{kinds: kinds, perSite: c.PerSite}
			t.siteLabels[c.Name] = slices.Clone(c.SiteLabels)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// In the table's order, so that a message reads as the table does.
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	t.names = names[0]
	if len(names) > 1 {
		t.names = strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	return t, nil
}

func (t *Table) has(name string) bool {
	_, ok := t.byName[name]
	return ok
}

// lookup returns the entry of the named component.
func (t *Table) lookup(name string) (component, bool) {
	c, ok := t.byName[name]
	return c, ok
}

// SiteLabels returns the Site label keys of a per-Site component, in order;
// nil for a singleton or a component the table does not hold.
func (t *Table) SiteLabels(name string) []string {
	return slices.Clone(t.siteLabels[name])
}
