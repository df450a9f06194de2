package overrides

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// orderEntry is one override of the order test: its sites are shuffled
// separately.
type orderEntry struct {
	head  string // component and kind
	sites []string
	rest  string // patch, extraArgs, ...
}

// orderEntries draw every finding that depends on more than one entry or
// more than one Site: conflicts, strategies across entries, the product of
// affinity terms, per-Site resolution.
var orderEntries = []orderEntry{
	{"component: storage, kind: DaemonSet", nil, "patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}"},
	{"component: storage, kind: DaemonSet", []string{"edge-east", "edge-west"},
		"patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 2Gi}}}]}}}}"},
	{"component: storage, kind: DaemonSet", []string{"edge-west", "edge-north", "edge-east"},
		"patch: {spec: {template: {spec: {containers: [{name: cache, resources: {}}]}}}}"},
	{"component: storage, kind: DaemonSet", []string{"edge-east"},
		"patch: {spec: {updateStrategy: {type: OnDelete}, template: {spec: {nodeSelector: {unbounded-cloud.io/site: edge-east}}}}}"},
	{"component: storage, kind: DaemonSet", nil, "patch: {spec: {updateStrategy: {rollingUpdate: {maxUnavailable: 2}}}}"},
	{"component: storage, kind: DaemonSet", []string{"edge-west"}, "patch: {spec: {template: {spec: {affinity: {nodeAffinity: " +
		"{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" + strings.Repeat("{matchFields: [{key: k, operator: Exists}]}, ", 9) + "]}}}}}}}"},
	{"component: storage, kind: DaemonSet", []string{"edge-west", "edge-east"}, "patch: {spec: {template: {spec: {affinity: {nodeAffinity: " +
		"{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" + strings.Repeat("{matchFields: [{key: k, operator: Exists}]}, ", 8) + "]}}}}}}}"},
	{"component: metalman, kind: Deployment", []string{"edge-west", "edge-east"},
		"patch: {spec: {template: {metadata: {labels: {site: edge-east}}}}}"},
	{"component: metalman, kind: Deployment", nil, "extraArgs: {metalman: [-v]}"},
	{"component: metalman, kind: Deployment", []string{"edge-east"}, "extraArgs: {metalman: [-q]}"},
	{"component: net, kind: DaemonSet", nil, "addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, image: a}]}}}}"},
	{"component: net, kind: DaemonSet", nil, "addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, image: b}]}}}}"},
	{"component: net, kind: DaemonSet", nil, "patch: {spec: {template: {spec: {nodeSelector: {kubernetes.io/os: windows}}}}}"},
	{"component: machina, kind: Deployment", nil, "patch: {spec: {strategy: {type: Recreate}}}"},
	{"component: machina, kind: Deployment", nil, "patch: {spec: {strategy: {rollingUpdate: {maxSurge: 1}}}}"},
}

// entryAt finds the entry of a finding's field.
var entryAt = regexp.MustCompile(`^data\[([^\]]*)\]\.overrides\[([0-9]+)\]`)

// TestOrderIndependent: shuffling the entries (across keys), the Sites of
// each entry and the order Live lists the workloads in changes no finding:
// each finding, traced back to its entry, is the same.
func TestOrderIndependent(t *testing.T) {
	run := func(rng *rand.Rand) []string {
		ids := make([]int, len(orderEntries))
		for i := range ids {
			ids[i] = i
		}
		live := typicalLive()
		if rng != nil {
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, ws := range live {
				rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
			}
		}
		keys := []string{"a.yaml", "b.yaml"}
		docs := map[string]*strings.Builder{}
		where := map[string]int{} // "key/index" -> entry id
		for _, id := range ids {
			key := keys[0]
			if rng != nil {
				key = keys[rng.IntN(len(keys))]
			}
			b := docs[key]
			if b == nil {
				b = &strings.Builder{}
				b.WriteString(apiLine + "overrides:\n")
				docs[key] = b
			}
			where[fmt.Sprintf("%s/%d", key, strings.Count(b.String(), "\n- "))] = id
			e := orderEntries[id]
			sites := slices.Clone(e.sites)
			if rng != nil {
				rng.Shuffle(len(sites), func(i, j int) { sites[i], sites[j] = sites[j], sites[i] })
			}
			line := "- {" + e.head
			if sites != nil {
				line += ", sites: [" + strings.Join(sites, ", ") + "]"
			}
			b.WriteString(line + ", " + e.rest + "}\n")
		}
		data := map[string]string{}
		for key, b := range docs {
			data[key] = b.String()
		}
		var out []string
		for _, f := range Validate(anyTable, data, live) {
			m := entryAt.FindStringSubmatch(f.Field)
			if m == nil {
				t.Fatalf("finding not of an entry: %s %s", f.Code, f.Field)
			}
			id := where[m[1]+"/"+m[2]]
			out = append(out, fmt.Sprintf("%d %s entry%d%s", f.Severity, f.Code, id, f.Field[len(m[0]):]))
		}
		slices.Sort(out)
		return out
	}
	want := run(nil)
	for _, code := range []policies.Code{OverrideConflict, OverrideStrategyInvalid, OverrideAffinityInvalid, OverrideSelectorLabel,
		OverrideContainerUnknown, OverrideNodeSelectorOwned, OverrideResolutionSkipped} {
		if !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, " "+string(code)+" ") }) {
			t.Errorf("the entries draw no %s: %v", code, want)
		}
	}
	for seed := uint64(1); seed <= 40; seed++ {
		if got := run(rand.New(rand.NewPCG(seed, 7))); !slices.Equal(got, want) {
			t.Fatalf("seed %d: findings depend on order\ngot  %v\nwant %v", seed, got, want)
		}
	}
}
