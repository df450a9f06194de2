package overrides

import (
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// The proof that making Validate fast changed no finding: for every input,
// Validate reports exactly what the implementation before that work
// (before_test.go, frozen) reports: the same codes, fields, messages,
// severities and evidence, in the same order. The rules changed since then
// are left out of the comparison (changedRules); the rest still holds, with
// the component table before had (upstream-59fa209).

// TestMatchesBefore compares Validate with the frozen implementation on the
// golden fixtures, the test documents, the same documents in block style,
// the order test's entries in random combinations, and random edits of all
// of them (the edits reach the parser's errors and every walk limit's
// neighbourhood).
func TestMatchesBefore(t *testing.T) {
	inputs := differentialInputs(t)
	for _, data := range inputs {
		compareWithBefore(t, data, nil, typicalLive(), richLive())
	}
	rng := rand.New(rand.NewPCG(7, 11))
	edits := 0
	for _, data := range inputs {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			for range 12 {
				edited := editYAML(rng, data[k])
				compareWithBefore(t, map[string]string{k: edited}, richLive())
				edits++
			}
		}
	}
	if edits < 1000 {
		t.Fatalf("only %d edited documents compared", edits)
	}
}

// FuzzMatchesBefore compares Validate with the frozen implementation on
// random documents, alone under one key and beside a second document, and
// the block-style reader's tree with yaml/v3's.
func FuzzMatchesBefore(f *testing.F) {
	for _, data := range differentialInputs(f) {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			f.Add([]byte(data[k]), []byte(nil))
		}
	}
	f.Add([]byte(render(benchDocument())), []byte(render(validDocument())))
	read, declined := blockStyleDocuments()
	for _, doc := range append(read, declined...) {
		f.Add([]byte(doc), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, value, other []byte) {
		checkBlockStyle(t, string(value))
		// One live view an input, so that the frozen implementation, the
		// slow half, runs as few times as it can.
		lives := []Live{nil, typicalLive(), richLive()}
		compareWithBefore(t, map[string]string{key: string(value)}, lives[len(value)%len(lives)])
		if len(other) > 0 {
			compareWithBefore(t, map[string]string{key: string(value), "other.yaml": string(other)}, richLive())
		}
	})
}

// compareWithBefore fails the test unless Validate and the frozen
// implementation report the same findings on data against each live.
func compareWithBefore(t *testing.T, data map[string]string, lives ...Live) {
	t.Helper()
	for _, live := range lives {
		got, want := Validate(beforeTable, data, live), beforeValidate(data, live)
		if stoppedByChangedLimit(got, want) {
			continue
		}
		got, want = withoutChangedRules(got), withoutChangedRules(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Validate differs from before (live %v) on %q:\ngot  %s\nwant %s", live != nil, data,
				describeFindings(got), describeFindings(want))
		}
	}
}

// beforeTable is the component table before knew.
var beforeTable = MustPreset("upstream-59fa209")

// changedRules are the codes whose rules changed since before was frozen:
// containers resolved per list, env sources over the live workload's and
// across entries, terms without requirements (upstream, see
// upstream_test.go).
var changedRules = map[policies.Code]bool{
	OverrideContainerUnknown: true, OverrideContainerExists: true, OverrideEnvValueAndValueFrom: true, OverrideAffinityInvalid: true,
}

// withoutChangedRules is findings without those of changedRules.
func withoutChangedRules(findings []policies.Finding) []policies.Finding {
	var out []policies.Finding
	for _, f := range findings {
		if !changedRules[f.Code] {
			out = append(out, f)
		}
	}
	return out
}

// stoppedByChangedLimit reports whether a document stopped at one of the
// engine's parse limits (limits.go), which before did not have, or either
// side capped its findings: the two then see different parts of it.
func stoppedByChangedLimit(got, want []policies.Finding) bool {
	// The depth limit is the engine's now, 32 levels where before stopped
	// at 100.
	limits := map[policies.Code]bool{OverrideConfigMapTooLarge: true, OverrideDocumentTooLong: true, OverrideDocumentTooManyNodes: true,
		OverrideMappingTooManyKeys: true, OverrideTooManyEntries: true, OverrideTooManyFindings: true, OverrideDocumentTooDeep: true}
	for _, findings := range [][]policies.Finding{got, want} {
		for _, f := range findings {
			if limits[f.Code] {
				return true
			}
		}
	}
	return false
}

func describeFindings(findings []policies.Finding) string {
	if findings == nil {
		return "nil"
	}
	var b strings.Builder
	for _, f := range findings {
		fmt.Fprintf(&b, "\n  %d %s %s %q %x", f.Severity, f.Code, f.Field, f.Message, f.Evidence)
	}
	return b.String()
}

// richLive is typicalLive with gantry readable and with enough required
// node affinity terms that a few more in a patch exceed the engine's
// product.
func richLive() fakeLive {
	live := typicalLive()
	live["gantry/DaemonSet"] = []Workload{{
		Kind: kindDaemonSet, SelectorLabels: map[string]string{"app": "gantry"},
		Volumes: []string{"host-root", "logs"}, Containers: []string{"gantry"},
		Mounts:            map[string]map[string]string{"gantry": {"/var/log/gantry": "host-root"}},
		RequiredNodeTerms: 40,
	}}
	for i := range live["storage/DaemonSet"] {
		live["storage/DaemonSet"][i].RequiredNodeTerms = 33
	}
	return live
}

// differentialInputs are the ConfigMap data the comparison starts from:
// every golden fixture, the documents of the benchmark, the fuzz target and
// the table tests' builders, each also re-rendered in block style, and
// combinations of the order test's entries in flow and block style.
func differentialInputs(tb testing.TB) []map[string]string {
	tb.Helper()
	var out []map[string]string
	for _, raw := range golden.ReadFixtures(tb, filepath.Join("testdata", "*", "*.yaml")) {
		var cm struct{ Data map[string]string }
		if err := yaml.Unmarshal(raw, &cm); err != nil {
			tb.Fatal(err)
		}
		out = append(out, cm.Data)
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			if block, ok := blockStyle(cm.Data[k]); ok {
				out = append(out, map[string]string{k: block})
			}
		}
	}
	for _, doc := range []map[string]any{
		benchDocument(), validDocument(), document(storageEntry(fuzzBasePatch())),
		document(withField(storageEntry(runPatch(map[string]any{"args": []any{"-v"}, "command": []any{"run"}, "image": "x"})),
			"sites", []any{"edge-east", "edge-north"})),
	} {
		out = append(out, one(render(doc)))
	}
	// One entry setting a position twice: by a repeated merge key, and by
	// a dotted key that spells a nested one.
	for _, patch := range []string{
		"{spec: {template: {spec: {containers: [{name: run, image: a}, {name: run, image: b}]}}}}",
		"{spec: {template: {spec: {containers: [{name: run, image: a}, {name: run, image: a}]}}}}",
		"{metadata: {labels: {a: '1'}, labels.a: '2'}}",
		"{spec: {template: {spec: {containers: [{name: run, env: [{name: A, value: x}, {name: A, value: y}]}]}}}}",
	} {
		item := "{component: storage, kind: DaemonSet, patch: " + patch + "}"
		out = append(out, one(apiLine+"overrides:\n- "+item+"\n"))
		if block, ok := blockStyle(item); ok {
			out = append(out, one(apiLine+"overrides:\n- "+strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n", "\n  ")+"\n"))
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 24 {
		var flow, block strings.Builder
		flow.WriteString(apiLine + "overrides:\n")
		block.WriteString(apiLine + "overrides:\n")
		for range 1 + rng.IntN(5) {
			e := orderEntries[rng.IntN(len(orderEntries))]
			sites := ""
			if e.sites != nil {
				sites = ", sites: [" + strings.Join(e.sites, ", ") + "]"
			}
			item := "{" + e.head + sites + ", " + e.rest + "}"
			flow.WriteString("- " + item + "\n")
			if b, ok := blockStyle(item); ok {
				block.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(b, "\n"), "\n", "\n  ") + "\n")
			}
		}
		out = append(out, one(flow.String()), one(block.String()))
	}
	return out
}

// sortedValues yields the values of data in the order of their keys, so
// that the edits a seeded generator makes are the same on every run.
func sortedValues(data map[string]string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			if !yield(data[k]) {
				return
			}
		}
	}
}

// blockStyle re-renders a YAML document in block style (keys sorted, as
// kubectl and sigs.k8s.io/yaml write them).
func blockStyle(value string) (string, bool) {
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil || v == nil {
		return "", false
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(out), true
}

// editTokens are what editYAML inserts: YAML's indicators, white space,
// values that resolve to other types than strings, and keys the contract
// treats specially.
var editTokens = []string{
	" ", "  ", "\n", "\t", "\r", "-", "- ", ":", ": ", "#", " #", "'", "\"", "{", "}", "[", "]", ",", "&a ", "*a", "!",
	"!!str ", "|", ">", "?", "%", "@", "`", "\\", "~", ".", "0", "1", "a", "$", "<<", "---", "...", "\xef\xbb\xbf", "\x00",
	"é", "null", "true", "0x1F", "1e3", ".inf", "-.5", "2001-12-14", "''", "\"\"", "{}", "[]", "$patch: delete",
	"unbounded-cloud.io/", "name: x", "value: y", "valueFrom: {}", "rollingUpdate: {}", "type: Recreate", "type: OnDelete",
}

// editYAML returns value with one to three random edits: a token inserted,
// a byte deleted, a line repeated, deleted or moved, or indented
// differently.
func editYAML(rng *rand.Rand, value string) string {
	for range 1 + rng.IntN(3) {
		lines := strings.SplitAfter(value, "\n")
		i := rng.IntN(len(lines))
		switch rng.IntN(6) {
		case 0:
			at := rng.IntN(len(value) + 1)
			value = value[:at] + editTokens[rng.IntN(len(editTokens))] + value[at:]
		case 1:
			if value != "" {
				at := rng.IntN(len(value))
				value = value[:at] + value[at+1:]
			}
		case 2:
			value = strings.Join(slices.Insert(lines, i, lines[i]), "")
		case 3:
			value = strings.Join(slices.Delete(lines, i, i+1), "")
		case 4:
			line := lines[i]
			lines = slices.Delete(lines, i, i+1)
			value = strings.Join(slices.Insert(lines, rng.IntN(len(lines)+1), line), "")
		default:
			if rng.IntN(2) == 0 {
				lines[i] = strings.Repeat(" ", 1+rng.IntN(2)) + lines[i]
			} else {
				lines[i] = strings.TrimPrefix(lines[i], " ")
			}
			value = strings.Join(lines, "")
		}
	}
	return value
}
