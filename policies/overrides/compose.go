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
	msgStrategyAcross   = "%s sets %s.type to %s, which the engine cannot combine with the rollingUpdate of another override; omit rollingUpdate"
	msgConflictKeys     = "another key of this override sets this field, to another value; strategic merge would let list order decide, so keep one"
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

// reporter reports a finding of compose once per code and path.
type reporter func(code policies.Code, path *field.Path, evidence, format string, args ...any)

// compose runs the checks across entries, once every document was read.
// The entries that select every Site are composed once; each Site's own
// entries are composed on top of them, so the work stays linear in the
// entries however many Sites they name.
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
	for _, t := range order {
		var live []Workload
		if w.live != nil {
			live, _ = w.live.Workloads(t.component, t.kind)
		}
		perSite := components[t.component].perSite
		var everySite []*entry
		bySite := map[string][]*entry{}
		var sites []string
		for _, e := range byTarget[t] {
			if !perSite || !e.hasSites {
				everySite = append(everySite, e)
				continue
			}
			for _, site := range e.sites {
				if _, ok := bySite[site]; !ok {
					sites = append(sites, site)
				}
				bySite[site] = append(bySite[site], e)
			}
		}
		sort.Strings(sites)
		base := newComposition(nil, report)
		for _, e := range everySite {
			base.add(e)
		}
		base.finish(maxTerms(live, nil))
		for _, site := range sites {
			c := newComposition(base, report)
			for _, e := range bySite[site] {
				c.add(e)
			}
			c.finish(maxTerms(live, &site))
		}
	}
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

// composition is the entries that reach one workload: those of its own
// (one Site's) on top of a base (those that select every Site).
type composition struct {
	base   *composition
	report reporter
	claims map[string]claim
	args   map[string]claim
	added  map[string]claim
	// exclusive and rolling are the entries setting a Recreate (OnDelete)
	// strategy type and rollingUpdate, per strategy field.
	exclusive, rolling map[string][]*entry
	// withTerms are the entries with required node affinity terms, and
	// product the capped product of their counts.
	withTerms []*entry
	product   int
	// over is set once the base's entries were reported past the product;
	// met records which of its strategy lists met a Site's entries.
	over bool
	met  map[string]bool
}

// partner returns the first entry of lists that is not e (a search of at
// most two entries per list).
func partner(e *entry, lists ...[]*entry) *entry {
	for _, list := range lists {
		for _, other := range list {
			if other != e {
				return other
			}
		}
	}
	return nil
}

func newComposition(base *composition, report reporter) *composition {
	return &composition{base: base, report: report, claims: map[string]claim{}, args: map[string]claim{}, added: map[string]claim{},
		exclusive: map[string][]*entry{}, rolling: map[string][]*entry{}, product: 1, met: map[string]bool{}}
}

// first returns the claim at key of this composition or its base.
func (c *composition) first(table func(*composition) map[string]claim, key string) (claim, bool) {
	for at := c; at != nil; at = at.base {
		if first, ok := table(at)[key]; ok {
			return first, true
		}
	}
	return claim{}, false
}

// add composes entry e, reporting its conflicts with the entries before it.
func (c *composition) add(e *entry) {
	for _, ec := range e.claims {
		first, ok := c.first(func(c *composition) map[string]claim { return c.claims }, ec.key)
		switch {
		case !ok:
			c.claims[ec.key] = ec.claim
		case first.entry != e && first.value != ec.value:
			c.report(CodeConflict, first.path, first.value+"\x00"+ec.value, msgConflict, e.path)
			c.report(CodeConflict, ec.path, ec.value+"\x00"+first.value, msgConflict, first.entry.path)
		}
	}
	for _, a := range e.args {
		first, ok := c.first(func(c *composition) map[string]claim { return c.args }, a.name)
		switch {
		case !ok:
			c.args[a.name] = claim{entry: e, value: a.name, path: a.path}
		case first.entry != e:
			c.report(CodeConflict, first.path, a.name, msgConflictArgs, e.path, a.name)
			c.report(CodeConflict, a.path, a.name, msgConflictArgs, first.entry.path, a.name)
		}
	}
	for _, pc := range patchedContainers(e.patch) {
		if !e.adds(pc) {
			continue
		}
		key, value := pc.listName()+"/"+pc.name, canonical(pc.node)
		first, ok := c.first(func(c *composition) map[string]claim { return c.added }, key)
		switch {
		case !ok:
			c.added[key] = claim{entry: e, value: value, path: pc.path(e.path)}
		case first.entry != e && first.value != value:
			noun := containerNoun(pc.init)
			c.report(CodeConflict, first.path, first.value, msgConflictAddition, e.path, noun, pc.name)
			c.report(CodeConflict, pc.path(e.path), value, msgConflictAddition, first.entry.path, noun, pc.name)
		}
	}
	for _, r := range strategyRules {
		if e.kind != r.kind {
			continue
		}
		if typ := lookup(e.patch, "spec", r.field, "type"); typ != nil && isString(typ) && typ.value == r.exclusive {
			c.exclusive[r.field] = append(c.exclusive[r.field], e)
		}
		if lookup(e.patch, "spec", r.field, "rollingUpdate") != nil {
			c.rolling[r.field] = append(c.rolling[r.field], e)
		}
	}
	if e.terms > 0 {
		c.withTerms = append(c.withTerms, e)
		c.product = min(c.product*e.terms, maxRequiredTerms+1)
	}
}

// finish runs the checks that need every entry of the composition:
// strategy types against rollingUpdate in other entries, and the product of
// required node affinity terms with the operator's.
func (c *composition) finish(operatorTerms int) {
	for _, r := range strategyRules {
		f := r.field
		pair := func(a, b *entry) {
			c.report(CodeStrategyInvalid, b.path.Child(fieldPatch, "spec", f, "rollingUpdate"), r.exclusive,
				msgStrategyAcross, a.path, "spec."+f, r.exclusive)
			c.report(CodeStrategyInvalid, a.path.Child(fieldPatch, "spec", f, "type"), r.exclusive,
				msgStrategyAcross, a.path, "spec."+f, r.exclusive)
		}
		var baseExclusive, baseRolling []*entry
		if c.base != nil {
			baseExclusive, baseRolling = c.base.exclusive[f], c.base.rolling[f]
		}
		for _, b := range c.rolling[f] {
			if a := partner(b, c.exclusive[f], baseExclusive); a != nil {
				pair(a, b)
			}
		}
		for _, a := range c.exclusive[f] {
			if b := partner(a, c.rolling[f], baseRolling); b != nil {
				pair(a, b)
			}
		}
		// The base's entries meeting this composition's, each base entry
		// once however many Sites it meets.
		if c.base != nil && len(c.exclusive[f]) > 0 && !c.base.met["rolling/"+f] {
			c.base.met["rolling/"+f] = true
			for _, b := range baseRolling {
				if a := partner(b, c.exclusive[f]); a != nil {
					pair(a, b)
				}
			}
		}
		if c.base != nil && len(c.rolling[f]) > 0 && !c.base.met["exclusive/"+f] {
			c.base.met["exclusive/"+f] = true
			for _, a := range baseExclusive {
				if b := partner(a, c.rolling[f]); b != nil {
					pair(a, b)
				}
			}
		}
	}
	product, blocks := c.product, len(c.withTerms)
	if c.base != nil {
		product, blocks = min(product*c.base.product, maxRequiredTerms+1), blocks+len(c.base.withTerms)
	}
	if operatorTerms > 0 {
		product, blocks = min(product*operatorTerms, maxRequiredTerms+1), blocks+1
	}
	// The engine multiplies only when two blocks of terms meet.
	if blocks < 2 || product <= maxRequiredTerms {
		return
	}
	reportTerms := func(entries []*entry) {
		for _, e := range entries {
			c.report(CodeAffinityInvalid, e.termsPath, strconv.Itoa(e.terms), msgTermsProduct, maxRequiredTerms)
		}
	}
	reportTerms(c.withTerms)
	if c.base != nil && !c.base.over {
		c.base.over = true
		reportTerms(c.base.withTerms)
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
func (w *walker) claimsOf(e *entry, report reporter) {
	if e.patch == nil {
		return
	}
	seen := map[string]int{}
	var visit func(n *node, schema, key string, path *field.Path, depth int)
	visit = func(n *node, schema, key string, path *field.Path, depth int) {
		n = deref(n)
		if n == nil || depth > maxDepth || additivePaths[schema] {
			return
		}
		set := func() {
			c := entryClaim{key: key, claim: claim{entry: e, value: canonical(n), path: path}}
			if i, ok := seen[key]; ok {
				if first := e.claims[i]; first.value != c.value {
					report(CodeConflict, first.path, first.value+"\x00"+c.value, msgConflictKeys)
					report(CodeConflict, c.path, c.value+"\x00"+first.value, msgConflictKeys)
				}
				return
			}
			seen[key] = len(e.claims)
			e.claims = append(e.claims, c)
		}
		switch n.kind {
		case yaml.MappingNode:
			owner := schema[strings.LastIndexByte(schema, '.')+1:]
			keys := map[string]bool{}
			for i := 0; i+1 < len(n.content); i += 2 {
				k := deref(n.content[i])
				// Repeated keys, merge keys and directives are denied by the
				// walk; the first of repeated keys is read, as lookup does.
				if k.kind != yaml.ScalarNode || k.tag == tagMerge || strings.HasPrefix(k.value, directivePrefix) || keys[k.value] {
					continue
				}
				keys[k.value] = true
				visit(n.content[i+1], join(schema, k.value), join(key, k.value), pathOf(path, k.value, dataKeyed[owner]), depth+1)
			}
		case yaml.SequenceNode:
			mergeKey, keyed := mergeKeys[schema]
			if atomicLists[schema] || !keyed {
				set()
				return
			}
			for i, item := range n.content {
				item = deref(item)
				id := lookup(item, mergeKey)
				if id == nil || id.kind != yaml.ScalarNode {
					set()
					return
				}
				itemKey := fmt.Sprintf("%s[%s=%s]", key, mergeKey, canonical(id))
				keys := map[string]bool{mergeKey: true}
				for j := 0; j+1 < len(item.content); j += 2 {
					k := deref(item.content[j])
					if k.kind != yaml.ScalarNode || k.tag == tagMerge || strings.HasPrefix(k.value, directivePrefix) || keys[k.value] {
						continue
					}
					keys[k.value] = true
					visit(item.content[j+1], schema+".*."+k.value, itemKey+"."+k.value, pathOf(path.Index(i), k.value, false), depth+2)
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
func canonical(n *node) string {
	var b strings.Builder
	writeCanonical(&b, n, "", func(n *node, depth int) bool { return n != nil && depth <= maxDepth })
	return b.String()
}
