// This file refuses, at admission, what the overrides engine (upstream)
// refuses when it composes the entries that reach one workload, in any data
// key. The entries of a component and kind reach the workload of a Site when
// they select every Site or name it; a cluster singleton has one workload.
// It reads the patches, extraArgs and add lists of those entries and
// rejects:
//
//   - two entries, or two keys of one entry (list entries with the same
//     merge key), that set the same field to different values; strategic
//     merge would let list order decide, and the engine refuses to: tolerations,
//     topologySpreadConstraints and affinity are combined, not set, so they
//     never conflict; args and command are replaced whole, so they are
//     compared whole: OverrideConflict;
//   - two entries appending extraArgs to the same container (the result
//     would depend on key order), or adding the same container with
//     different definitions: OverrideConflict;
//   - a Recreate (OnDelete) strategy in one entry and rollingUpdate in
//     another: OverrideStrategyInvalid;
//   - required node affinity terms that, multiplied as the engine combines
//     them (the operator's first, then each entry's), exceed
//     maxRequiredTerms: OverrideAffinityInvalid.
//
// Each finding is reported at every entry involved, so the verdict and the
// findings of an entry do not depend on the order of the entries or Sites.

package overrides

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// maxRequiredTerms bounds the required node affinity terms the engine's
// product may reach (upstream).
const maxRequiredTerms = 128

// Messages of the refusals across entries.
const (
	msgConflict         = "%s also sets this field, to another value; overrides do not resolve disagreement by order, so set it in one place"
	msgConflictArgs     = "%s also appends extraArgs to container %s; arguments concatenate in key order, so put them in one entry"
	msgConflictAddition = "%s also adds %s %s, defined differently; define it in one place"
	msgStrategyAcross   = "%s sets %s strategy type %s, which cannot be combined with rollingUpdate; omit rollingUpdate"
	msgTermsProduct     = "the engine multiplies the required node affinity terms of the operator and of every override of " +
		"this workload; here that makes more than %d terms, its limit: use fewer, broader terms"
)

// additivePaths are combined by the engine rather than merged (upstream).
var additivePaths = map[string]bool{
	"spec.template.spec.tolerations":               true,
	"spec.template.spec.topologySpreadConstraints": true,
	"spec.template.spec.affinity":                  true,
}

// atomicLists are replaced whole by strategic merge.
var atomicLists = map[string]bool{
	"spec.template.spec.containers.*.args":        true,
	"spec.template.spec.containers.*.command":     true,
	"spec.template.spec.initContainers.*.args":    true,
	"spec.template.spec.initContainers.*.command": true,
}

// mergeKeys are the merge keys of the lists strategic merge merges.
var mergeKeys = map[string]string{
	"spec.template.spec.containers":                    "name",
	"spec.template.spec.initContainers":                "name",
	"spec.template.spec.volumes":                       "name",
	"spec.template.spec.imagePullSecrets":              "name",
	"spec.template.spec.containers.*.env":              "name",
	"spec.template.spec.initContainers.*.env":          "name",
	"spec.template.spec.containers.*.volumeMounts":     "mountPath",
	"spec.template.spec.initContainers.*.volumeMounts": "mountPath",
	"spec.template.spec.containers.*.ports":            "containerPort",
	"spec.template.spec.initContainers.*.ports":        "containerPort",
}

// claim is a value an entry sets at a merged position.
type claim struct {
	entry *entry
	value string
	path  *field.Path
}

// compose runs the checks across entries, once every document was read.
func (w *walker) compose() {
	reported := map[string]bool{}
	report := func(code policies.Code, path *field.Path, evidence, format string, args ...any) {
		key := string(code) + "\x00" + path.String()
		if reported[key] {
			return
		}
		reported[key] = true
		// Findings of compose belong to no single document walk: they are
		// not counted against a document's cap.
		w.findings = append(w.findings, policies.Denial(code, path, evidence, format, args...))
	}
	for _, e := range w.entries {
		w.claimsOf(e, report)
	}
	for _, group := range w.workloadGroups() {
		composeGroup(group.entries, group.operatorTerms, report)
	}
}

// group is the entries that reach one workload.
type group struct {
	entries       []*entry
	operatorTerms int
}

// workloadGroups returns, for every workload the entries can reach, the
// entries that reach it. Per-Site entries are grouped by each Site any entry
// names, plus one group for the Sites no entry names (those reached by the
// entries that select every Site).
func (w *walker) workloadGroups() []group {
	type target struct{ component, kind string }
	var order []target
	byTarget := map[target][]*entry{}
	for _, e := range w.entries {
		t := target{e.component, e.kindName}
		if _, ok := byTarget[t]; !ok {
			order = append(order, t)
		}
		byTarget[t] = append(byTarget[t], e)
	}
	var groups []group
	for _, t := range order {
		entries := byTarget[t]
		var live []Workload
		if w.live != nil {
			live, _ = w.live.Workloads(t.component, t.kind)
		}
		if !components[t.component].perSite {
			groups = append(groups, group{entries: entries, operatorTerms: maxTerms(live, nil)})
			continue
		}
		var sites []string
		for _, e := range entries {
			for _, s := range e.sites {
				if !slices.Contains(sites, s) {
					sites = append(sites, s)
				}
			}
		}
		sort.Strings(sites)
		var everySite []*entry
		for _, e := range entries {
			if !e.hasSites {
				everySite = append(everySite, e)
			}
		}
		for _, s := range sites {
			var reach []*entry
			for _, e := range entries {
				if !e.hasSites || slices.Contains(e.sites, s) {
					reach = append(reach, e)
				}
			}
			groups = append(groups, group{entries: reach, operatorTerms: maxTerms(live, &s)})
		}
		if len(everySite) > 0 {
			groups = append(groups, group{entries: everySite, operatorTerms: maxTerms(live, nil)})
		}
	}
	return groups
}

// maxTerms is the number of required node affinity terms of the live
// workload of site, or the most any live workload has when site is nil or
// has none.
func maxTerms(live []Workload, site *string) int {
	most := 0
	for _, l := range live {
		if site != nil && l.Site == *site {
			return l.RequiredNodeTerms
		}
		most = max(most, l.RequiredNodeTerms)
	}
	return most
}

// composeGroup checks the entries that reach one workload.
func composeGroup(entries []*entry, operatorTerms int, report func(policies.Code, *field.Path, string, string, ...any)) {
	claims := map[string]claim{}
	args := map[string]namedRef{}
	argsOwner := map[string]*entry{}
	added := map[string]claim{}
	for _, e := range entries {
		for _, c := range e.claims {
			first, ok := claims[c.key]
			switch {
			case !ok:
				claims[c.key] = c.claim
			case first.entry != e && first.value != c.value:
				report(CodeConflict, first.path, first.value+"\x00"+c.value, msgConflict, c.entry.path)
				report(CodeConflict, c.path, c.value+"\x00"+first.value, msgConflict, first.entry.path)
			}
		}
		for _, a := range e.args {
			if first, ok := args[a.name]; ok && argsOwner[a.name] != e {
				report(CodeConflict, first.path, a.name, msgConflictArgs, e.path, a.name)
				report(CodeConflict, a.path, a.name, msgConflictArgs, argsOwner[a.name].path, a.name)
				continue
			}
			args[a.name], argsOwner[a.name] = a, e
		}
		for _, c := range patchedContainers(e.patch) {
			if !e.adds(c) {
				continue
			}
			key := c.listName() + "/" + c.name
			value := canonical(c.node)
			first, ok := added[key]
			switch {
			case !ok:
				added[key] = claim{entry: e, value: value, path: c.path(e.path)}
			case first.entry != e && first.value != value:
				noun := containerNoun(c.init)
				report(CodeConflict, first.path, first.value, msgConflictAddition, e.path, noun, c.name)
				report(CodeConflict, c.path(e.path), value, msgConflictAddition, first.entry.path, noun, c.name)
			}
		}
	}
	composeStrategy(entries, report)
	composeTerms(entries, operatorTerms, report)
}

// composeStrategy reports an exclusive strategy type in one entry combined
// with rollingUpdate in another.
func composeStrategy(entries []*entry, report func(policies.Code, *field.Path, string, string, ...any)) {
	for _, r := range strategyRules {
		for _, a := range entries {
			typ := lookup(a.patch, "spec", r.field, "type")
			if a.kind != r.kind || typ == nil || !isString(typ) || typ.Value != r.exclusive {
				continue
			}
			for _, b := range entries {
				rolling := lookup(b.patch, "spec", r.field, "rollingUpdate")
				if b == a || b.kind != r.kind || rolling == nil {
					continue
				}
				rollingPath := b.path.Child(fieldPatch, "spec", r.field, "rollingUpdate")
				typePath := a.path.Child(fieldPatch, "spec", r.field, "type")
				report(CodeStrategyInvalid, rollingPath, r.exclusive, msgStrategyAcross, a.path, "spec."+r.field, r.exclusive)
				report(CodeStrategyInvalid, typePath, r.exclusive, msgStrategyAcross, a.path, "spec."+r.field, r.exclusive)
			}
		}
	}
}

// composeTerms reports required node affinity terms whose product, as the
// engine forms it, exceeds maxRequiredTerms.
func composeTerms(entries []*entry, operatorTerms int, report func(policies.Code, *field.Path, string, string, ...any)) {
	blocks, product := 0, 0
	if operatorTerms > 0 {
		blocks, product = 1, operatorTerms
	}
	over := false
	for _, e := range entries {
		if e.terms == 0 {
			continue
		}
		blocks++
		if blocks == 1 {
			product = e.terms
			continue
		}
		if product > maxRequiredTerms/e.terms+1 || product*e.terms > maxRequiredTerms {
			over = true
			break
		}
		product *= e.terms
	}
	if !over {
		return
	}
	for _, e := range entries {
		if e.terms > 0 {
			report(CodeAffinityInvalid, e.termsPath, strconv.Itoa(e.terms), msgTermsProduct, maxRequiredTerms)
		}
	}
}

// entryClaim is a claim at a merged position key.
type entryClaim struct {
	key string
	claim
}

// claimsOf flattens e's patch into the values it sets at merged positions,
// and reports keys of the entry itself that set one position twice,
// differently.
func (w *walker) claimsOf(e *entry, report func(policies.Code, *field.Path, string, string, ...any)) {
	if e.patch == nil {
		return
	}
	seen := map[string]int{}
	var visit func(n *yaml.Node, schema, key string, path *field.Path, depth int)
	visit = func(n *yaml.Node, schema, key string, path *field.Path, depth int) {
		n = deref(n)
		if n == nil || depth > maxDepth || additivePaths[schema] {
			return
		}
		set := func() {
			c := entryClaim{key: key, claim: claim{entry: e, value: canonical(n), path: path}}
			if i, ok := seen[key]; ok {
				if first := e.claims[i]; first.value != c.value {
					report(CodeConflict, first.path, first.value+"\x00"+c.value, msgConflict, e.path)
					report(CodeConflict, c.path, c.value+"\x00"+first.value, msgConflict, e.path)
				}
				return
			}
			seen[key] = len(e.claims)
			e.claims = append(e.claims, c)
		}
		switch n.Kind {
		case yaml.MappingNode:
			owner := schema[strings.LastIndexByte(schema, '.')+1:]
			keys := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := deref(n.Content[i])
				// Repeated keys, merge keys and directives are denied by the
				// walk; the first of repeated keys is read, as lookup does.
				if k.Kind != yaml.ScalarNode || k.Tag == tagMerge || strings.HasPrefix(k.Value, directivePrefix) || keys[k.Value] {
					continue
				}
				keys[k.Value] = true
				visit(n.Content[i+1], join(schema, k.Value), join(key, k.Value), pathOf(path, k.Value, dataKeyed[owner]), depth+1)
			}
		case yaml.SequenceNode:
			mergeKey, keyed := mergeKeys[schema]
			if atomicLists[schema] || !keyed {
				set()
				return
			}
			for i, item := range n.Content {
				item = deref(item)
				id := lookup(item, mergeKey)
				if id == nil || id.Kind != yaml.ScalarNode {
					set()
					return
				}
				itemKey := fmt.Sprintf("%s[%s=%s]", key, mergeKey, canonical(id))
				keys := map[string]bool{mergeKey: true}
				for j := 0; j+1 < len(item.Content); j += 2 {
					k := deref(item.Content[j])
					if k.Kind != yaml.ScalarNode || k.Tag == tagMerge || strings.HasPrefix(k.Value, directivePrefix) || keys[k.Value] {
						continue
					}
					keys[k.Value] = true
					visit(item.Content[j+1], schema+".*."+k.Value, itemKey+"."+k.Value, pathOf(path.Index(i), k.Value, false), depth+2)
				}
			}
		default:
			set()
		}
	}
	visit(e.patch, "", "", e.path.Child(fieldPatch), 0)
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// canonical renders a value for comparison: scalars with their resolved
// tag, mappings and lists in document order, aliases expanded. The walk
// already bounded what it renders.
func canonical(n *yaml.Node) string {
	var b strings.Builder
	var render func(n *yaml.Node, depth int)
	render = func(n *yaml.Node, depth int) {
		n = deref(n)
		if n == nil || depth > maxDepth {
			return
		}
		switch n.Kind {
		case yaml.ScalarNode:
			b.WriteString(n.ShortTag())
			b.WriteByte(':')
			b.WriteString(strconv.Quote(n.Value))
		case yaml.MappingNode:
			b.WriteByte('{')
			for i := 0; i+1 < len(n.Content); i += 2 {
				render(n.Content[i], depth+1)
				b.WriteByte('=')
				render(n.Content[i+1], depth+1)
				b.WriteByte(',')
			}
			b.WriteByte('}')
		case yaml.SequenceNode:
			b.WriteByte('[')
			for _, item := range n.Content {
				render(item, depth+1)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		}
	}
	render(n, 0)
	return b.String()
}
