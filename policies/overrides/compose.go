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
// Only entries that reach a common workload can disagree: what an entry
// that meets no other sets is compared with nothing (its own keys aside),
// so a review pays for the comparison only where two entries meet.

package overrides

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// emptyTermEvidence fingerprints a node selector term without requirements.
const emptyTermEvidence = "node selector term without requirements"

// maxRequiredTerms bounds the required node affinity terms the engine's
// product may reach (upstream).
const maxRequiredTerms = 128

// Messages of the refusals across entries.
const (
	msgConflict           = "%s also sets this field, to another value; overrides do not resolve disagreement by order, so set it in one place"
	msgConflictArgs       = "%s also appends extraArgs to container %s; arguments concatenate in key order, so put them in one entry"
	msgConflictAddition   = "%s also adds %s %s, defined differently; define it in one place"
	msgStrategyAcross     = "%s sets %s.type to %s, which the engine cannot combine with the rollingUpdate of another override; omit rollingUpdate"
	msgConflictKeys       = "another key of this override sets this field, to another value; strategic merge would let list order decide, so keep one"
	msgEmptyTermsCombined = "this node selector term has no matchExpressions or matchFields, nor has one of %s, and the engine " +
		"combines the two into a term that matches every node, which it refuses; give one of them a requirement"
	msgEnvSourcesCombined = "%s sets this env var with %s and this override with %s; they merge on the var's name into one " +
		"with both, which the API server rejects; set the var in one place"
	msgTermsProduct = "the engine multiplies the required node affinity terms of the operator and of every override of " +
		"this workload; here that makes more than %d terms, its limit: use fewer, broader terms"
)

// additivePaths are combined by the engine rather than merged (upstream).
var additivePaths = map[string]bool{
	"spec.template.spec.tolerations":               true,
	"spec.template.spec.topologySpreadConstraints": true,
	"spec.template.spec.affinity":                  true,
}

// additiveLengths has bit l set when an additive path is l bytes long.
var additiveLengths = func() (lengths uint64) {
	for path := range additivePaths {
		lengths |= 1 << len(path)
	}
	return lengths
}()

// isAdditive reports whether additivePaths holds schema. Most positions
// are not as long as any of them, which is quicker to tell than a lookup.
func isAdditive(schema []byte) bool {
	return len(schema) < 64 && additiveLengths&(1<<len(schema)) != 0 && additivePaths[string(schema)]
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
	var reported map[string]bool
	report := func(code policies.Code, path *field.Path, evidence, format string, args ...any) {
		key := string(code) + "\x00" + path.String()
		if reported[key] {
			return
		}
		if reported == nil {
			reported = map[string]bool{}
		}
		reported[key] = true
		// Findings of compose belong to no single document walk: they are
		// not counted against a document's cap.
		w.findings = append(w.findings, policies.Denial(code, path, evidence, format, args...))
	}
	// The targets in the order their first entries come; a handful at
	// most (a component and kind each).
	var targets []*reach
	for _, e := range w.entries {
		var r *reach
		for _, t := range targets {
			if t.component == e.component && t.kind == e.kindName {
				r = t
				break
			}
		}
		if r == nil {
			r = &reach{component: e.component, kind: e.kindName}
			targets = append(targets, r)
		}
		r.add(e, e.comp.perSite)
	}
	for _, r := range targets {
		r.markMeets()
	}
	for _, e := range w.entries {
		w.claimsOf(e, report)
	}
	for _, r := range targets {
		if !r.composes() {
			continue
		}
		var live []Workload
		if w.live != nil {
			live, _ = w.live.Workloads(r.component, r.kind)
		}
		sort.Strings(r.sites)
		base := newComposition(nil, report)
		for _, e := range r.everySite {
			base.add(e)
		}
		base.finish(maxTerms(live, nil))
		for _, site := range r.sites {
			c := newComposition(base, report)
			for _, e := range r.bySite[site] {
				c.add(e)
			}
			c.finish(maxTerms(live, &site))
		}
	}
}

// reach is which workloads of a component and kind the entries for it
// reach: those that select every Site (or whose component has one workload)
// reach all, the others the workloads of the Sites they name.
type reach struct {
	component, kind string
	everySite       []*entry
	bySite          map[string][]*entry
	// sites are the keys of bySite, in the order entries name them.
	sites []string
}

func (r *reach) add(e *entry, perSite bool) {
	if !perSite || !e.hasSites {
		r.everySite = append(r.everySite, e)
		return
	}
	for _, site := range e.sites {
		if _, ok := r.bySite[site]; !ok {
			if r.bySite == nil {
				r.bySite = map[string][]*entry{}
			}
			r.sites = append(r.sites, site)
		}
		r.bySite[site] = append(r.bySite[site], e)
	}
}

// composes reports whether composing the entries can find anything: not
// when none meets another and none has required node affinity terms, which
// the engine multiplies with the operator's.
func (r *reach) composes() bool {
	composes := func(e *entry) bool { return e.meets || e.terms > 0 }
	if slices.ContainsFunc(r.everySite, composes) {
		return true
	}
	for _, entries := range r.bySite {
		if slices.ContainsFunc(entries, composes) {
			return true
		}
	}
	return false
}

// markMeets sets entry.meets on every entry that reaches a workload another
// entry reaches.
func (r *reach) markMeets() {
	if len(r.everySite) > 1 || (len(r.everySite) == 1 && len(r.sites) > 0) {
		for _, e := range r.everySite {
			e.meets = true
		}
	}
	for _, entries := range r.bySite {
		if len(r.everySite)+len(entries) > 1 {
			for _, e := range entries {
				e.meets = true
			}
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
	// claims, args and added are the first claim at each position, of
	// each extraArgs container and of each added container, of the entries
	// that meet another (entry.meets); nil until one is.
	claims map[string]claim
	args   map[string]claim
	added  map[string]claim
	// envValue and envFrom are the first claim setting each env var (by
	// list, container and name) by a value and by valueFrom.
	envValue, envFrom map[string]claim
	// exclusive and rolling are the entries setting a Recreate (OnDelete)
	// strategy type and rollingUpdate, per strategy rule.
	exclusive, rolling [len(strategyRules)][]*entry
	// withTerms are the entries with required node affinity terms, and
	// product the capped product of their counts.
	withTerms []*entry
	product   int
	// over is set once the base's entries were reported past the product;
	// metExclusive and metRolling record which of its strategy lists met a
	// Site's entries.
	over                     bool
	metExclusive, metRolling [len(strategyRules)]bool
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
	return &composition{base: base, report: report, product: 1}
}

// setFirst records the first claim at key in *table.
func setFirst(table *map[string]claim, key string, first claim) {
	if *table == nil {
		*table = map[string]claim{}
	}
	(*table)[key] = first
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
// What an entry that meets no other sets, adds or appends is never
// recorded: nothing can conflict with it.
func (c *composition) add(e *entry) {
	if e.meets {
		c.addClaims(e)
	}
	for i, r := range strategyRules {
		if e.kind != r.kind {
			continue
		}
		if typ := lookup(e.patch, "spec", r.field, "type"); typ != nil && isString(typ) && typ.value == r.exclusive {
			c.exclusive[i] = append(c.exclusive[i], e)
		}
		if lookup(e.patch, "spec", r.field, "rollingUpdate") != nil {
			c.rolling[i] = append(c.rolling[i], e)
		}
	}
	if e.terms > 0 {
		c.withTerms = append(c.withTerms, e)
		c.product = min(c.product*e.terms, maxRequiredTerms+1)
	}
}

// addClaims composes the claims, extraArgs and added containers of e.
func (c *composition) addClaims(e *entry) {
	for _, ec := range e.claims {
		first, ok := c.first(func(c *composition) map[string]claim { return c.claims }, ec.key)
		switch {
		case !ok:
			setFirst(&c.claims, ec.key, ec.claim)
		case first.entry != e && first.value != ec.value:
			c.report(OverrideConflict, first.path, first.value+"\x00"+ec.value, msgConflict, e.path)
			c.report(OverrideConflict, ec.path, ec.value+"\x00"+first.value, msgConflict, first.entry.path)
		}
	}
	for _, a := range e.args {
		first, ok := c.first(func(c *composition) map[string]claim { return c.args }, a.name)
		switch {
		case !ok:
			setFirst(&c.args, a.name, claim{entry: e, value: a.name, path: a.path})
		case first.entry != e:
			c.report(OverrideConflict, first.path, a.name, msgConflictArgs, e.path, a.name)
			c.report(OverrideConflict, a.path, a.name, msgConflictArgs, first.entry.path, a.name)
		}
	}
	for _, pc := range e.containers {
		forEnv(pc.node, func(i int, name string, source EnvSource) {
			key, at := pc.listName()+"/"+pc.name+"/"+name, pc.path(e.path).Child("env").Index(i)
			mine, theirs := &c.envValue, func(c *composition) map[string]claim { return c.envFrom }
			own, other := "a value", "valueFrom"
			if source == EnvValueFrom {
				mine, theirs = &c.envFrom, func(c *composition) map[string]claim { return c.envValue }
				own, other = other, own
			}
			if first, ok := c.first(theirs, key); ok && first.entry != e {
				c.report(OverrideEnvValueAndValueFrom, first.path, name, msgEnvSourcesCombined, e.path, own, other)
				c.report(OverrideEnvValueAndValueFrom, at, name, msgEnvSourcesCombined, first.entry.path, other, own)
			}
			if _, ok := (*mine)[key]; !ok {
				setFirst(mine, key, claim{entry: e, value: name, path: at})
			}
		})
		if !e.adds(pc) {
			continue
		}
		key, value := pc.listName()+"/"+pc.name, canonical(pc.node)
		first, ok := c.first(func(c *composition) map[string]claim { return c.added }, key)
		switch {
		case !ok:
			setFirst(&c.added, key, claim{entry: e, value: value, path: pc.path(e.path)})
		case first.entry != e && first.value != value:
			noun := containerNoun(pc.init)
			c.report(OverrideConflict, first.path, first.value, msgConflictAddition, e.path, noun, pc.name)
			c.report(OverrideConflict, pc.path(e.path), value, msgConflictAddition, first.entry.path, noun, pc.name)
		}
	}
}

// finish runs the checks that need every entry of the composition:
// strategy types against rollingUpdate in other entries, and the product of
// required node affinity terms with the operator's.
func (c *composition) finish(operatorTerms int) {
	for i, r := range strategyRules {
		f := r.field
		pair := func(a, b *entry) {
			c.report(OverrideStrategyInvalid, b.path.Child(fieldPatch, "spec", f, "rollingUpdate"), r.exclusive,
				msgStrategyAcross, a.path, "spec."+f, r.exclusive)
			c.report(OverrideStrategyInvalid, a.path.Child(fieldPatch, "spec", f, "type"), r.exclusive,
				msgStrategyAcross, a.path, "spec."+f, r.exclusive)
		}
		var baseExclusive, baseRolling []*entry
		if c.base != nil {
			baseExclusive, baseRolling = c.base.exclusive[i], c.base.rolling[i]
		}
		for _, b := range c.rolling[i] {
			if a := partner(b, c.exclusive[i], baseExclusive); a != nil {
				pair(a, b)
			}
		}
		for _, a := range c.exclusive[i] {
			if b := partner(a, c.rolling[i], baseRolling); b != nil {
				pair(a, b)
			}
		}
		// The base's entries meeting this composition's, each base entry
		// once however many Sites it meets.
		if c.base != nil && len(c.exclusive[i]) > 0 && !c.base.metRolling[i] {
			c.base.metRolling[i] = true
			for _, b := range baseRolling {
				if a := partner(b, c.exclusive[i]); a != nil {
					pair(a, b)
				}
			}
		}
		if c.base != nil && len(c.rolling[i]) > 0 && !c.base.metExclusive[i] {
			c.base.metExclusive[i] = true
			for _, a := range baseExclusive {
				if b := partner(a, c.rolling[i]); b != nil {
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
	c.finishEmptyTerms(operatorTerms)
	// The engine multiplies only when two blocks of terms meet.
	if blocks < 2 || product <= maxRequiredTerms {
		return
	}
	reportTerms := func(entries []*entry) {
		for _, e := range entries {
			c.report(OverrideAffinityInvalid, e.termsPath, strconv.Itoa(e.terms), msgTermsProduct, maxRequiredTerms)
		}
	}
	reportTerms(c.withTerms)
	if c.base != nil && !c.base.over {
		c.base.over = true
		reportTerms(c.base.withTerms)
	}
}

// finishEmptyTerms refuses the required node affinity terms without
// requirements that the engine would combine with each other. The engine
// folds the blocks of terms in order (the operator's first, then each
// entry's: affinity.go combineAffinities) into their product, and
// combineTerms refuses a product term without requirements. A product term
// has none only when every term it joins has none, and the product stops at
// the first refusal, so the fold is refused exactly when each of the first
// two blocks holds such a term. The operator's terms always have
// requirements (SiteNodeAffinity), so an operator block ends the question;
// without a live workload none is assumed.
func (c *composition) finishEmptyTerms(operatorTerms int) {
	if operatorTerms > 0 {
		return
	}
	var first, second *entry
	consider := func(e *entry) {
		switch {
		case first == nil || e.order < first.order:
			first, second = e, first
		case second == nil || e.order < second.order:
			second = e
		}
	}
	for _, e := range c.withTerms {
		consider(e)
	}
	if c.base != nil {
		for _, e := range c.base.withTerms {
			consider(e)
		}
	}
	if second == nil || first.emptyTerm == nil || second.emptyTerm == nil {
		return
	}
	c.report(OverrideAffinityInvalid, first.emptyTerm, emptyTermEvidence, msgEmptyTermsCombined, second.path)
	c.report(OverrideAffinityInvalid, second.emptyTerm, emptyTermEvidence, msgEmptyTermsCombined, first.path)
}

// entryClaim is a claim at a merged position key.
type entryClaim struct {
	key string
	claim
}

// claimsOf flattens e's patch into the values it sets at merged positions,
// and reports keys of the entry itself that set one position twice,
// differently. An entry that meets no other (entry.meets) can conflict only
// with itself, at a position it sets twice: its positions are first told
// apart by their hashes, without building claims, and only an entry in
// which two hashes agree is flattened to find out.
func (w *walker) claimsOf(e *entry, report reporter) {
	if e.patch == nil {
		return
	}
	positions := &w.positions
	if !e.meets {
		positions.hashes = positions.hashes[:0]
		positions.walk(e.patch, nil, nil)
		slices.Sort(positions.hashes)
		if len(slices.Compact(positions.hashes)) == len(positions.hashes) {
			return
		}
	}
	seen := map[string]int{}
	positions.walk(e.patch, e.path.Child(fieldPatch), func(n *node, position []byte, path *field.Path) {
		c := entryClaim{key: string(position), claim: claim{entry: e, value: canonical(n), path: path}}
		if i, ok := seen[c.key]; ok {
			if first := e.claims[i]; first.value != c.value {
				report(OverrideConflict, first.path, first.value+"\x00"+c.value, msgConflictKeys)
				report(OverrideConflict, c.path, c.value+"\x00"+first.value, msgConflictKeys)
			}
			return
		}
		seen[c.key] = len(e.claims)
		e.claims = append(e.claims, c)
	})
}

// positionWalk walks a patch as strategic merge merges it: mappings by
// key, the lists of mergeKeys by their merge key. What it merges no further
// (a scalar, a list replaced whole, a list with an entry lacking its merge
// key) is set whole: set is called with it, its position (a key such as
// spec.template.spec.containers[name=!!str:"run"].image) and, when the walk
// has the patch's path, its path; without set, only the position's hash is
// kept, in hashes. The combined paths (additivePaths) are left out. One walk
// serves every entry of a review, so that its buffers are allocated once.
type positionWalk struct {
	// position and schema (spec.template.spec.containers.*.image) are
	// those of the node visited, and hash is the hash of position.
	position, schema []byte
	hash             uint64
	paths            bool
	set              func(n *node, position []byte, path *field.Path)
	hashes           []uint64
}

// walk walks patch, whose path is path (nil for none).
func (pw *positionWalk) walk(patch *node, path *field.Path, set func(n *node, position []byte, path *field.Path)) {
	if pw.position == nil {
		// Room for a typical patch's positions, grown on demand.
		pw.position, pw.schema, pw.hashes = make([]byte, 0, 256), make([]byte, 0, 128), make([]uint64, 0, 64)
	}
	pw.position, pw.schema, pw.hash, pw.paths, pw.set = pw.position[:0], pw.schema[:0], hashStart, path != nil, set
	pw.visit(patch, path, 0)
	pw.set = nil
}

// setWhole records the node visited, n, as set whole.
func (pw *positionWalk) setWhole(n *node, path *field.Path) {
	if pw.set != nil {
		pw.set(n, pw.position, path)
		return
	}
	pw.hashes = append(pw.hashes, pw.hash)
}

// mark returns what restore needs to return to the node visited.
func (pw *positionWalk) mark() (position, schema int, hash uint64) {
	return len(pw.position), len(pw.schema), pw.hash
}

// restore returns to the node that mark was called at.
func (pw *positionWalk) restore(position, schema int, hash uint64) {
	pw.position, pw.schema, pw.hash = pw.position[:position], pw.schema[:schema], hash
}

// hashFrom adds what was appended to the position from from on to its
// hash.
func (pw *positionWalk) hashFrom(from int) {
	pw.hash = hashMore(pw.hash, pw.position[from:])
}

func (pw *positionWalk) visit(n *node, path *field.Path, depth int) {
	n = deref(n)
	if n == nil || depth > maxDepth || isAdditive(pw.schema) {
		return
	}
	switch n.kind {
	case yaml.MappingNode:
		keyed := false
		if pw.paths {
			keyed = dataKeyed[string(pw.schema[bytes.LastIndexByte(pw.schema, '.')+1:])]
		}
		var seen map[string]bool
		for i := 0; i+1 < len(n.content); i += 2 {
			k := deref(n.content[i])
			// Repeated keys, merge keys and directives are denied by the
			// walk; the first of repeated keys is read, as lookup does.
			if !isMerged(k) || repeatsMerged(n, i, k.value, &seen) {
				continue
			}
			position, schema, hash := pw.mark()
			pw.position, pw.schema = appendJoined(pw.position, k.value), appendJoined(pw.schema, k.value)
			pw.hashFrom(position)
			var keyPath *field.Path
			if pw.paths {
				keyPath = pathOf(path, k.value, keyed)
			}
			pw.visit(n.content[i+1], keyPath, depth+1)
			pw.restore(position, schema, hash)
		}
	case yaml.SequenceNode:
		mergeKey, keyed := mergeKeys[string(pw.schema)]
		if atomicLists[string(pw.schema)] || !keyed {
			pw.setWhole(n, path)
			return
		}
		for i, item := range n.content {
			item = deref(item)
			id := lookup(item, mergeKey)
			if id == nil || id.kind != yaml.ScalarNode {
				pw.setWhole(n, path)
				return
			}
			position, schema, hash := pw.mark()
			pw.position = append(pw.position, '[')
			pw.position = append(pw.position, mergeKey...)
			pw.position = append(pw.position, '=')
			pw.position = appendCanonical(pw.position, id, "", withinDepth)
			pw.position = append(pw.position, ']')
			pw.schema = append(pw.schema, ".*"...)
			pw.hashFrom(position)
			var itemPath *field.Path
			if pw.paths {
				itemPath = path.Index(i)
			}
			var seen map[string]bool
			for j := 0; j+1 < len(item.content); j += 2 {
				k := deref(item.content[j])
				if !isMerged(k) || k.value == mergeKey || repeatsMerged(item, j, k.value, &seen) {
					continue
				}
				itemPosition, itemSchema, itemHash := pw.mark()
				pw.position = append(append(pw.position, '.'), k.value...)
				pw.schema = append(append(pw.schema, '.'), k.value...)
				pw.hashFrom(itemPosition)
				var keyPath *field.Path
				if pw.paths {
					keyPath = pathOf(itemPath, k.value, false)
				}
				pw.visit(item.content[j+1], keyPath, depth+2)
				pw.restore(itemPosition, itemSchema, itemHash)
			}
			pw.restore(position, schema, hash)
		}
	default:
		pw.setWhole(n, path)
	}
}

// isMerged reports whether the key k names a field strategic merge merges:
// a scalar that is neither a merge key nor a directive.
func isMerged(k *node) bool {
	return k.kind == yaml.ScalarNode && k.tag != tagMerge && !strings.HasPrefix(k.value, directivePrefix)
}

// repeatsMerged reports whether the key key at content[i] of mapping n
// repeats an earlier key that isMerged. Small mappings are scanned; large
// ones use seen, which is given every key that isMerged, in order.
func repeatsMerged(n *node, i int, key string, seen *map[string]bool) bool {
	const scanLimit = 32
	if len(n.content) <= 2*scanLimit {
		for j := 0; j < i; j += 2 {
			if k := deref(n.content[j]); k.value == key && isMerged(k) {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, len(n.content)/2)
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

// join is the dotted position of key below prefix, as appendJoined writes
// it in place.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// appendJoined appends key to a dotted position.
func appendJoined(position []byte, key string) []byte {
	if len(position) > 0 {
		position = append(position, '.')
	}
	return append(position, key...)
}

// hashStart is the 64-bit FNV-1a hash of nothing; hashMore adds bytes to
// a hash.
const hashStart uint64 = 14695981039346656037

func hashMore(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// canonical renders a value for comparison: scalars with their resolved
// tag, mappings and lists in document order, aliases expanded. The walk
// already bounded what it renders.
func canonical(n *node) string {
	return string(appendCanonical(nil, n, "", withinDepth))
}

// withinDepth admits the nodes a canonical rendering holds: those within
// maxDepth of the value.
func withinDepth(n *node, depth int) bool { return n != nil && depth <= maxDepth }
