package overrides

// A differential oracle of the overrides engine of Azure unbounded
// (github.com/Azure/unbounded, package internal/operator/override). The
// engine lives in an internal package, which Go does not let another module
// import, so its rules are transcribed here from the upstream sources, on
// decoded YAML as the engine reads it, and Validate is compared with them
// over a corpus. Upstream sources (path @ commit):
//
//   - resolve.go @ 3d970cf055d5cdd1d645e084356dd661698f582f: matches (an
//     entry reaches the workload of each Site it names, every Site without
//     sites) and checkResolvable (container names, extraArgs targets);
//   - compose.go @ 15344856a45d3e6e701bc41f7b8c75902a261454: checkConflicts
//     (additive paths, atomic lists, merge-keyed lists, identical values
//     never conflict, extraArgs twice always do, additions defined
//     differently);
//   - strategy.go @ d738fa9f8f0fbebf7e877ed64cf0b21a4f054bff:
//     validateDaemonSetStrategy and normalizeDaemonSetStrategy (OnDelete with
//     rollingUpdate, in one entry or across contributors);
//   - validate.go @ 26f231bdbbb0c84113a6826564c0e5f71964bf85:
//     reportTypedFieldConflicts, reportAffinityTerms, reportAffinityExtras,
//     reportTermExpressions;
//   - affinity.go @ 54e7d309c4705c29b789cfd90c114ab0daaa5f2c: cartesianTerms
//     and maxRequiredTerms (operator terms first, then each contributor's);
//   - merge.go @ 2847cdb72d9d6dbb28f311f5250e3dde519dce76: applyNodeSelector
//     (a key the operator sets, given another value);
//   - allowlist.go @ 4d26c96352b1abc5e0ede5978d9fb1f605eda040:
//     typedFieldOwners (metalman spec.replicas);
//   - resolve.go @ 9d4082e7f4ccd2eb99012392bc05636b31bfa3e7:
//     checkContainerNames (each container list against the workload's own
//     list);
//   - affinity.go @ 54e7d309c4705c29b789cfd90c114ab0daaa5f2c and
//     81584c44e5f4fcdf488a4adf2a73d98767d81119: combineAffinities,
//     cartesianTerms and combineTerms, which refuse a product term without
//     requirements (validate.go @ 26f231b no longer refuses one alone);
//   - validate.go @ 26f231b, 9064e39 and the other commits of the presets
//     (components.go): validateEntry's component, kind and sites checks
//     against knownComponents (TestUpstreamComponentTables);
//   - parse.go @ 9064e3909e7f8ee96cc3a768b55a08eeb0d53348: Parse,
//     parseDocument and checkStructure (TestUpstreamParseLimits).
//
// An env var merged from the operator's and the entries' (strategic merge
// on name, merge.go) that ends with a non-empty value and a valueFrom is
// refused by the API server's validateEnvVarValueFrom
// (k8s.io/kubernetes pkg/apis/core/validation), transcribed here too.
//
// A Deployment's Recreate strategy with rollingUpdate, and an env var with
// value and valueFrom, are refused by the Kubernetes API server's own
// validation of the applied workload (k8s.io/kubernetes
// pkg/apis/apps/validation ValidateDeploymentStrategy and
// pkg/apis/core/validation validateEnvVarValueFrom); they are transcribed
// the same way.

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// oracleEntry is an entry as the engine decodes it.
type oracleEntry struct {
	Component         string              `json:"component"`
	Kind              string              `json:"kind"`
	Sites             []string            `json:"sites"`
	Patch             map[string]any      `json:"patch"`
	ExtraArgs         map[string][]string `json:"extraArgs"`
	AddContainers     []string            `json:"addContainers"`
	AddInitContainers []string            `json:"addInitContainers"`
}

// refusal is an entry the engine (or the API server) refuses, and why, as
// the code gatehouse gives it.
type refusal struct {
	entry int
	code  string
}

// oracle returns what the engine refuses of entries, against live.
func oracle(entries []oracleEntry, live fakeLive) []refusal {
	var out []refusal
	refuse := func(i int, code string) { out = append(out, refusal{i, code}) }
	for i, e := range entries {
		// reportTypedFieldConflicts.
		if e.Component == "metalman" && nested(e.Patch, "spec", "replicas") != nil {
			refuse(i, string(OverrideFieldOwnedBySite))
		}
		// validateDaemonSetStrategy; ValidateDeploymentStrategy.
		if t, ok := nested(e.Patch, "spec", "updateStrategy", "type").(string); ok && e.Kind == kindDaemonSet {
			if (t != "RollingUpdate" && t != "OnDelete") || (t == "OnDelete" && nested(e.Patch, "spec", "updateStrategy", "rollingUpdate") != nil) {
				refuse(i, string(OverrideStrategyInvalid))
			}
		}
		if t, ok := nested(e.Patch, "spec", "strategy", "type").(string); ok && e.Kind == kindDeployment {
			if (t != "RollingUpdate" && t != "Recreate") || (t == "Recreate" && nested(e.Patch, "spec", "strategy", "rollingUpdate") != nil) {
				refuse(i, string(OverrideStrategyInvalid))
			}
		}
		// validateEnvVarValueFrom.
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range listOf(nested(e.Patch, "spec", "template", "spec", list)) {
				for _, env := range listOf(mapOf(c)["env"]) {
					if m := mapOf(env); m["value"] != nil && m["valueFrom"] != nil {
						refuse(i, string(OverrideEnvValueAndValueFrom))
					}
				}
			}
		}
		// reportAffinityTerms, reportTermExpressions, reportAffinityExtras.
		if affinity := mapOf(nested(e.Patch, "spec", "template", "spec", "affinity")); affinity != nil {
			if v := nested(affinity, requiredTerms...); v != nil {
				terms, ok := v.([]any)
				if !ok || len(terms) == 0 {
					refuse(i, string(OverrideAffinityInvalid))
				}
				for _, term := range terms {
					m, ok := term.(map[string]any)
					if !ok {
						refuse(i, string(OverrideAffinityInvalid))
						continue
					}
					for _, field := range []string{"matchExpressions", "matchFields"} {
						if v, present := m[field]; present {
							items, ok := v.([]any)
							if !ok || slices.ContainsFunc(items, func(x any) bool { return mapOf(x) == nil }) {
								refuse(i, string(OverrideAffinityInvalid))
							}
						}
					}
				}
			}
			for _, section := range affinitySections {
				if v := nested(affinity, section...); v != nil {
					items, ok := v.([]any)
					if !ok || slices.ContainsFunc(items, func(x any) bool { return mapOf(x) == nil }) {
						refuse(i, string(OverrideAffinityInvalid))
					}
				}
			}
		}
	}

	// Resolve: every workload, the entries that reach it (matches), in
	// order; then what the engine refuses of each workload's contributors.
	for _, target := range oracleTargets(entries, live) {
		var contributors []int
		for i, e := range entries {
			if e.Component == target.component && e.Kind == target.kind && (e.Sites == nil || slices.Contains(e.Sites, target.w.Site)) {
				contributors = append(contributors, i)
			}
		}
		if len(contributors) == 0 {
			continue
		}
		// checkResolvable: container names and extraArgs targets.
		if target.live {
			for _, i := range contributors {
				e := entries[i]
				for _, list := range []string{"containers", "initContainers"} {
					declared, existing := e.AddContainers, target.w.Containers
					if list == "initContainers" {
						declared, existing = e.AddInitContainers, target.w.InitContainers
					}
					for _, c := range listOf(nested(e.Patch, "spec", "template", "spec", list)) {
						name, _ := mapOf(c)["name"].(string)
						if name != "" && !slices.Contains(existing, name) && !slices.Contains(declared, name) {
							refuse(i, string(OverrideContainerUnknown))
						}
					}
				}
				for name := range e.ExtraArgs {
					if !slices.Contains(target.w.Containers, name) && !slices.Contains(target.w.InitContainers, name) &&
						!slices.Contains(e.AddContainers, name) && !slices.Contains(e.AddInitContainers, name) {
						refuse(i, string(OverrideContainerUnknown))
					}
				}
			}
		}
		// checkConflicts: patch leaves, extraArgs, additions.
		type claimed struct {
			entry int
			value any
		}
		claims, args, added := map[string]claimed{}, map[string]int{}, map[string]claimed{}
		for _, i := range contributors {
			e := entries[i]
			flat := map[string]any{}
			oracleFlatten(e.Patch, "", flat)
			for path, value := range flat {
				if first, ok := claims[path]; !ok {
					claims[path] = claimed{i, value}
				} else if !reflect.DeepEqual(first.value, value) {
					refuse(first.entry, string(OverrideConflict))
					refuse(i, string(OverrideConflict))
				}
			}
			for name := range e.ExtraArgs {
				if first, ok := args[name]; ok {
					refuse(first, string(OverrideConflict))
					refuse(i, string(OverrideConflict))
				} else {
					args[name] = i
				}
			}
			for _, list := range []string{"containers", "initContainers"} {
				declared := e.AddContainers
				if list == "initContainers" {
					declared = e.AddInitContainers
				}
				for _, c := range listOf(nested(e.Patch, "spec", "template", "spec", list)) {
					name, _ := mapOf(c)["name"].(string)
					if name == "" || !slices.Contains(declared, name) {
						continue
					}
					if first, ok := added[name]; !ok {
						added[name] = claimed{i, c}
					} else if !reflect.DeepEqual(first.value, c) {
						refuse(first.entry, string(OverrideConflict))
						refuse(i, string(OverrideConflict))
					}
				}
			}
		}
		// normalizeDaemonSetStrategy (and the Deployment's counterpart): an
		// exclusive type merged from one contributor, rollingUpdate from
		// another.
		for _, r := range strategyRules {
			var exclusive, rolling []int
			for _, i := range contributors {
				if t, _ := nested(entries[i].Patch, "spec", r.field, "type").(string); t == r.exclusive && entries[i].Kind == kindOf(r.kind) {
					exclusive = append(exclusive, i)
				}
				if nested(entries[i].Patch, "spec", r.field, "rollingUpdate") != nil && entries[i].Kind == kindOf(r.kind) {
					rolling = append(rolling, i)
				}
			}
			for _, a := range exclusive {
				for _, b := range rolling {
					if a != b {
						refuse(a, string(OverrideStrategyInvalid))
						refuse(b, string(OverrideStrategyInvalid))
					}
				}
			}
		}
		// applyNodeSelector: the operator's keys, given another value by
		// the merged user selector (last contributor wins; any that differs
		// is refused here, since the winner depends on order).
		if target.live {
			for _, i := range contributors {
				for key, value := range mapOf(nested(entries[i].Patch, "spec", "template", "spec", "nodeSelector")) {
					if set, ok := target.w.NodeSelector[key]; ok && set != value {
						refuse(i, string(OverrideNodeSelectorOwned))
					}
				}
			}
		}
		// The merged env (strategic merge on name, the operator's first, a
		// later contributor's field over an earlier one's), as
		// validateEnvVarValueFrom reads it: a non-empty value beside a
		// valueFrom is refused, at every contributor that set either.
		type mergedVar struct {
			value, valueFrom bool
			by               []int
		}
		for _, list := range []string{"containers", "initContainers"} {
			merged := map[string]*mergedVar{}
			for _, i := range contributors {
				for _, c := range listOf(nested(entries[i].Patch, "spec", "template", "spec", list)) {
					cname, _ := mapOf(c)["name"].(string)
					for _, env := range listOf(mapOf(c)["env"]) {
						m := mapOf(env)
						name, _ := m["name"].(string)
						key := cname + "/" + name
						v := merged[key]
						if v == nil {
							v = &mergedVar{}
							if target.live {
								set := target.w.Env[cname][name]
								v.value, v.valueFrom = set&EnvValue != 0, set&EnvValueFrom != 0
							}
							merged[key] = v
						}
						if value, present := m["value"]; present {
							s, _ := value.(string)
							v.value = s != "" || (value != nil && !isStringValue(value))
							v.by = append(v.by, i)
						}
						if m["valueFrom"] != nil {
							v.valueFrom = true
							v.by = append(v.by, i)
						}
					}
				}
			}
			for _, v := range merged {
				if v.value && v.valueFrom {
					for _, i := range v.by {
						refuse(i, string(OverrideEnvValueAndValueFrom))
					}
				}
			}
		}
		// combineAffinities: the blocks of terms folded in order, the
		// operator's first; combineTerms refuses a product term without
		// requirements, at the step where it is formed.
		type block struct {
			entry int // -1: the operator's
			terms []any
		}
		var folded []block
		if target.w.RequiredNodeTerms > 0 {
			operator := make([]any, target.w.RequiredNodeTerms)
			for k := range operator {
				operator[k] = map[string]any{"matchExpressions": []any{map[string]any{"key": "site"}}}
			}
			folded = append(folded, block{-1, operator})
		}
		for _, i := range contributors {
			if terms, ok := nested(entries[i].Patch, "spec", "template", "spec", "affinity", requiredTerms[0], requiredTerms[1], requiredTerms[2]).([]any); ok && len(terms) > 0 {
				folded = append(folded, block{i, terms})
			}
		}
		if len(folded) >= 2 {
			product := folded[0].terms
			for step := 1; step < len(folded) && len(product)*len(folded[step].terms) <= maxRequiredTerms; step++ {
				var next []any
				failed := false
				for _, l := range product {
					for _, r := range folded[step].terms {
						joined := map[string]any{}
						for _, field := range []string{"matchExpressions", "matchFields"} {
							items := append(append([]any{}, listOf(mapOf(l)[field])...), listOf(mapOf(r)[field])...)
							if len(items) > 0 {
								joined[field] = items
							}
						}
						if len(joined) == 0 {
							failed = true
						}
						next = append(next, joined)
					}
				}
				if failed {
					for _, b := range folded[:step+1] {
						if b.entry >= 0 && slices.ContainsFunc(b.terms, func(t any) bool {
							return len(listOf(mapOf(t)["matchExpressions"]))+len(listOf(mapOf(t)["matchFields"])) == 0
						}) {
							refuse(b.entry, string(OverrideAffinityInvalid))
						}
					}
					break
				}
				product = next
			}
		}
		// cartesianTerms: operator terms first, then each contributor's.
		blocks, product := 0, 1
		if target.w.RequiredNodeTerms > 0 {
			blocks, product = 1, target.w.RequiredNodeTerms
		}
		var withTerms []int
		for _, i := range contributors {
			if terms, ok := nested(entries[i].Patch, "spec", "template", "spec", "affinity", requiredTerms[0], requiredTerms[1], requiredTerms[2]).([]any); ok && len(terms) > 0 {
				withTerms = append(withTerms, i)
				blocks++
				product *= len(terms)
			}
		}
		if blocks >= 2 && product > maxRequiredTerms {
			for _, i := range withTerms {
				refuse(i, string(OverrideAffinityInvalid))
			}
		}
	}
	return dedupe(out)
}

// oracleTarget is one workload the engine plans: a live one, or for the
// Sites an entry names that have none, a stand-in without operator content.
type oracleTarget struct {
	component, kind string
	w               Workload
	live            bool
}

// oracleTargets lists the workloads of every component and kind the
// entries name: the live ones, and a stand-in for each named Site that has
// none (the engine would plan it once the Site exists).
func oracleTargets(entries []oracleEntry, live fakeLive) []oracleTarget {
	var out []oracleTarget
	seen := map[string]bool{}
	for _, e := range entries {
		key := e.Component + "/" + e.Kind
		if !seen[key] {
			seen[key] = true
			for _, w := range live[key] {
				out = append(out, oracleTarget{e.Component, e.Kind, w, true})
			}
		}
		for _, site := range e.Sites {
			if !slices.ContainsFunc(live[key], func(w Workload) bool { return w.Site == site }) && !seen[key+"@"+site] {
				seen[key+"@"+site] = true
				out = append(out, oracleTarget{e.Component, e.Kind, Workload{Site: site}, false})
			}
		}
	}
	return out
}

// oracleFlatten is flattenPatch: the paths a patch claims, stopping at
// additive paths, whole at atomic and unkeyed lists, by merge key at keyed
// lists.
func oracleFlatten(value any, path string, out map[string]any) {
	schema := regexp.MustCompile(`\[[^]]*\]`).ReplaceAllString(path, ".*")
	if additivePaths[schema] {
		return
	}
	switch v := value.(type) {
	case map[string]any:
		for k, child := range v {
			oracleFlatten(child, join(path, k), out)
		}
	case []any:
		key, keyed := mergeKeys[schema]
		if atomicLists[schema] || !keyed {
			out[path] = v
			return
		}
		for _, element := range v {
			m, ok := element.(map[string]any)
			if !ok {
				out[path] = v
				return
			}
			for field, child := range m {
				if field != key {
					oracleFlatten(child, join(fmt.Sprintf("%s[%s=%v]", path, key, m[key]), field), out)
				}
			}
		}
	default:
		out[path] = v
	}
}

func kindOf(k workloadKind) string {
	if k == deployment {
		return kindDeployment
	}
	return kindDaemonSet
}

func nested(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }
func isStringValue(v any) bool   { _, ok := v.(string); return ok }
func listOf(v any) []any         { l, _ := v.([]any); return l }

func dedupe(rs []refusal) []refusal {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].entry != rs[j].entry {
			return rs[i].entry < rs[j].entry
		}
		return rs[i].code < rs[j].code
	})
	return slices.Compact(rs)
}

// oracleSnippets are entries the corpus combines in pairs and triples.
var oracleSnippets = []string{
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 2Gi}}}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east, edge-north], patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}, args: [-v]}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east], patch: {spec: {template: {spec: {containers: [{name: cache, args: [-q]}]}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {updateStrategy: {type: OnDelete}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 2}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {template: {spec: {nodeSelector: {unbounded-cloud.io/site: edge-west, disk: ssd}}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {nodeSelector: {disk: hdd}}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east], extraArgs: {run: [--a]}}",
	"{component: storage, kind: DaemonSet, extraArgs: {run: [--b], cache: [--c]}}",
	"{component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" +
		strings.Repeat("{matchExpressions: [{key: a, operator: Exists}]}, ", 8) + "]}}}}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" +
		strings.Repeat("{matchFields: [{key: b, operator: Exists}]}, ", 9) + "]}}}}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}, " +
		"podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {a: b}}}}}}}}",
	"{component: storage, kind: DaemonSet, addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, image: a}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east], addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, image: b}]}}}}}",
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: [{key: a, operator: Exists}], containers: [{name: run, " +
		"env: [{name: A, value: x, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}}",
	"{component: metalman, kind: Deployment, patch: {spec: {replicas: 2}}}",
	"{component: metalman, kind: Deployment, sites: [edge-west], patch: {spec: {strategy: {type: Recreate}}}}",
	"{component: metalman, kind: Deployment, sites: [edge-east], patch: {spec: {strategy: {rollingUpdate: {maxSurge: 1}}}}}",
	"{component: metalman, kind: Deployment, patch: {spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}}}}",
	"{component: net, kind: DaemonSet, patch: {spec: {template: {spec: {nodeSelector: {kubernetes.io/os: linux}}}}}}",
	"{component: net, kind: DaemonSet, patch: {spec: {template: {spec: {nodeSelector: {kubernetes.io/os: windows}}}}}}",
	"{component: machina, kind: Deployment, patch: {spec: {replicas: 3, strategy: {type: OnDelete}}}}",
	// Each container list against its own: storage has container run and
	// init container init-perms.
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {initContainers: [{name: run, resources: {limits: {cpu: 1}}}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east], extraArgs: {init-perms: [-v]}}",
	// Env sources: the operator sets NODE_NAME from valueFrom and
	// STORAGE_ROOT as a value in run.
	"{component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: run, env: [{name: NODE_NAME, value: n}]}]}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {template: {spec: {containers: [{name: run, env: [{name: STORAGE_ROOT, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}}",
	"{component: net, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: node, env: [{name: MODE, value: fast}]}]}}}}}",
	"{component: net, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: node, env: [{name: MODE, valueFrom: {configMapKeyRef: {name: m, key: k}}}]}]}}}}}",
	// Terms without requirements on a workload without operator terms.
	"{component: net, kind: Deployment, patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}}}}}}}",
	"{component: net, kind: Deployment, patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: []}, {}]}}}}}}}}",
	"{component: net, kind: Deployment, patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]}}}}}}}}",
	"{component: storage, kind: DaemonSet, sites: [edge-east], patch: {spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}}}}}}}",
}

// TestUpstreamOracle: Validate refuses exactly the entries the engine's
// rules (transcribed above) refuse, for every pair of the snippets and
// for triples, each Site and live-list order.
func TestUpstreamOracle(t *testing.T) {
	modeled := map[string]bool{}
	for _, c := range []string{string(OverrideFieldOwnedBySite), string(OverrideStrategyInvalid), string(OverrideEnvValueAndValueFrom),
		string(OverrideAffinityInvalid), string(OverrideContainerUnknown), string(OverrideConflict), string(OverrideNodeSelectorOwned)} {
		modeled[c] = true
	}
	entryAt := regexp.MustCompile(`^data\[overrides\.yaml\]\.overrides\[([0-9]+)\]`)
	var check func([]string)
	checkWant := func(snippets []string) []refusal {
		t.Helper()
		doc := apiLine + "overrides:\n"
		var entries []oracleEntry
		for _, s := range snippets {
			doc += "- " + s + "\n"
			var e oracleEntry
			if err := yaml.Unmarshal([]byte(s), &e); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			entries = append(entries, e)
		}
		want := oracle(entries, typicalLive())
		var got []refusal
		for _, f := range Validate(anyTable, one(doc), typicalLive()) {
			m := entryAt.FindStringSubmatch(f.Field)
			if f.Severity != 0 || m == nil || !modeled[string(f.Code)] {
				continue
			}
			i, _ := strconv.Atoi(m[1])
			got = append(got, refusal{i, string(f.Code)})
		}
		if got = dedupe(got); !slices.Equal(got, want) {
			t.Errorf("gatehouse and the engine disagree\ngatehouse %v\nengine    %v\n%s", got, want, doc)
		}
		return want
	}
	seen := map[string]int{}
	check = func(check func([]string) []refusal) func([]string) {
		return func(snippets []string) {
			for _, r := range check(snippets) {
				seen[r.code]++
			}
		}
	}(checkWant)
	for i := range oracleSnippets {
		check([]string{oracleSnippets[i]})
		for j := range oracleSnippets {
			if i != j {
				check([]string{oracleSnippets[i], oracleSnippets[j]})
			}
		}
	}
	for i := 0; i+2 < len(oracleSnippets); i++ {
		check(oracleSnippets[i : i+3])
	}
	// The corpus exercises every modeled refusal.
	for code := range modeled {
		if seen[code] == 0 {
			t.Errorf("the corpus draws no %s", code)
		}
	}
	t.Logf("refusals compared: %v", seen)
}

// upstreamTables are knownComponents of validate.go at each preset's commit
// (components.go), as upstream writes them: component -> perSite, kinds.
var upstreamTables = map[string]map[string]struct {
	perSite bool
	kinds   []string
}{
	"upstream-59fa209": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "metalman": {true, []string{"Deployment"}}, "storage": {true, []string{"DaemonSet"}}},
	"upstream-9064e39": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "token-refresher": {false, []string{"Deployment"}},
		"metalman": {true, []string{"Deployment"}}, "storage": {true, []string{"DaemonSet"}}},
	"upstream-605ff92": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "token-refresher": {false, []string{"Deployment"}},
		"metalman": {true, []string{"Deployment"}}, "storage": {true, []string{"DaemonSet"}},
		"racer-controlplane": {false, []string{"Deployment"}}, "racer-dataplane": {true, []string{"DaemonSet"}}},
	"upstream-26f231b": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "token-refresher": {false, []string{"Deployment"}},
		"metalman": {true, []string{"Deployment"}}, "racer-controlplane": {false, []string{"Deployment"}},
		"racer-dataplane": {true, []string{"DaemonSet"}}},
	"upstream-2878749": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "token-refresher": {false, []string{"Deployment"}},
		"racer": {false, []string{"Deployment"}}, "metalman": {true, []string{"Deployment"}}},
	"upstream-d738fa9": {"net": {false, []string{"DaemonSet", "Deployment"}}, "machina": {false, []string{"Deployment"}},
		"gantry": {false, []string{"DaemonSet"}}, "racer": {false, []string{"Deployment", "DaemonSet"}},
		"token-refresher": {false, []string{"Deployment"}}, "metalman": {true, []string{"Deployment"}}},
}

// TestUpstreamComponentTables: for every preset, Validate refuses an entry
// for its component, kind or sites exactly when validateEntry would
// (component unknown; kind not one the component emits; sites on a
// singleton), and the default refuses one only when every preset does.
func TestUpstreamComponentTables(t *testing.T) {
	if got := len(PresetNames()) - 1; got != len(upstreamTables) {
		t.Fatalf("%d presets, %d upstream tables", got, len(upstreamTables))
	}
	names := map[string]bool{"racers": true}
	for _, table := range upstreamTables {
		for name := range table {
			names[name] = true
		}
	}
	refused := func(table map[string]struct {
		perSite bool
		kinds   []string
	}, component, kind string, sites bool) bool {
		known, ok := table[component]
		return !ok || !slices.Contains(known.kinds, kind) || (sites && !known.perSite)
	}
	for name := range names {
		for _, kind := range []string{kindDeployment, kindDaemonSet} {
			for _, sites := range []bool{false, true} {
				entry := "{component: " + name + ", kind: " + kind + ", patch: {spec: {minReadySeconds: 1}}"
				if sites {
					entry += ", sites: [rack-a]"
				}
				doc := one(apiLine + "overrides:\n- " + entry + "}\n")
				denied := func(table *Table) bool {
					for _, f := range Validate(table, doc, nil) {
						if f.Code == OverrideComponentUnknown || f.Code == OverrideKindMismatch || f.Code == OverrideSitesInvalid {
							return true
						}
					}
					return false
				}
				everyRefuses := true
				for preset, table := range upstreamTables {
					want := refused(table, name, kind, sites)
					everyRefuses = everyRefuses && want
					if got := denied(MustPreset(preset)); got != want {
						t.Errorf("%s: %s: gatehouse refuses %v, the engine %v", preset, entry, got, want)
					}
				}
				if got := denied(anyTable); got != everyRefuses {
					t.Errorf("any: %s: refused %v, every preset refuses %v", entry, got, everyRefuses)
				}
			}
		}
	}
}

// engineParseRefuses is the engine's Parse (parse.go @ 9064e390) on data:
// whether it refuses the payload or a key for one of its limits.
func engineParseRefuses(data map[string]string) bool {
	total := 0
	for _, v := range data {
		total += len(v)
	}
	if total > engineMaxTotalBytes {
		return true
	}
	for _, raw := range data {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if len(raw) > engineMaxDocumentBytes {
			return true
		}
		var root yaml3.Node
		if yaml3.Unmarshal([]byte(raw), &root) != nil {
			continue
		}
		nodes, failed := 0, false
		var walk func(n *yaml3.Node, depth int)
		walk = func(n *yaml3.Node, depth int) {
			if failed {
				return
			}
			nodes++
			if nodes > engineMaxNodes || depth > engineMaxDepth || (n.Kind == yaml3.MappingNode && len(n.Content)/2 > engineMaxMappingKeys) {
				failed = true
				return
			}
			for _, c := range n.Content {
				walk(c, depth+1)
			}
		}
		walk(&root, 0)
		if failed {
			return true
		}
		var doc struct {
			Overrides []any `yaml:"overrides"`
		}
		if yaml3.Unmarshal([]byte(raw), &doc) == nil && len(doc.Overrides) > engineMaxEntries {
			return true
		}
	}
	return false
}

// TestUpstreamParseLimits: Validate refuses a document for one of the
// engine's parse limits exactly when the engine's Parse does, on documents
// at and around every limit and on the golden fixtures.
func TestUpstreamParseLimits(t *testing.T) {
	limitCodes := map[policies.Code]bool{OverrideConfigMapTooLarge: true, OverrideDocumentTooLong: true, OverrideDocumentTooManyNodes: true,
		OverrideMappingTooManyKeys: true, OverrideTooManyEntries: true, OverrideDocumentTooDeep: true}
	var inputs []map[string]string
	for _, n := range []int{engineMaxMappingKeys - 1, engineMaxMappingKeys, engineMaxMappingKeys + 1} {
		inputs = append(inputs, one(annotationsDocument(n)))
	}
	for _, n := range []int{engineMaxEntries, engineMaxEntries + 1} {
		inputs = append(inputs, one(entriesDocument(n)))
	}
	for _, d := range []int{engineMaxDepth - 1, engineMaxDepth, engineMaxDepth + 1} {
		inputs = append(inputs, one(nestedDocument(t, d)))
	}
	for _, n := range []int{engineMaxNodes, engineMaxNodes + 1} {
		inputs = append(inputs, one(nodesDocument(t, n)))
	}
	for _, n := range []int{engineMaxDocumentBytes, engineMaxDocumentBytes + 1} {
		inputs = append(inputs, one(bytesDocument(t, n)), map[string]string{"a.yaml": bytesDocument(t, n), "b.yaml": bytesDocument(t, n),
			"c.yaml": bytesDocument(t, n), "d.yaml": bytesDocument(t, n)})
	}
	inputs = append(inputs, differentialInputs(t)...)
	for _, data := range inputs {
		refused := false
		for _, f := range Validate(anyTable, data, nil) {
			// The walk's own depth limit (100, alias expansion) and the
			// parser's are not the engine's structure check.
			if limitCodes[f.Code] && !strings.Contains(f.Message, "100 levels") && !strings.Contains(f.Message, "parser") {
				refused = true
			}
		}
		if want := engineParseRefuses(data); refused != want {
			sizes := map[string]int{}
			for k, v := range data {
				sizes[k] = len(v)
			}
			t.Errorf("gatehouse refuses for a limit %v, the engine %v (value sizes %v)", refused, want, sizes)
		}
	}
}
