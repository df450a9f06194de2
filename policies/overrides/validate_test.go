package overrides

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// Paths the tables below refer to.
const (
	key  = "overrides.yaml"
	doc0 = "data[" + key + "]"
	e0   = doc0 + ".overrides[0]"
	e1   = doc0 + ".overrides[1]"
	p0   = e0 + ".patch"
	ps0  = p0 + ".spec.template.spec"
	c0   = ps0 + ".containers[0]"
)

// one is a ConfigMap data with the single key overrides.yaml.
func one(value string) map[string]string { return map[string]string{key: value} }

// overrides is a document of entries, rendered.
func overrides(entries ...map[string]any) map[string]string { return one(render(document(entries...))) }

type validateCase struct {
	name string
	data map[string]string
	// nilLive validates without any live workload.
	nilLive bool
	want    []result
}

func runCases(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var live Live = typicalLive()
			if tt.nilLive {
				live = nil
			}
			findings := Validate(anyTable, tt.data, live)
			if got := results(findings); !slices.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v\nmessages:\n%s", got, tt.want, messages(findings))
			}
			checkWellFormed(t, findings)
		})
	}
}

func messages(findings []policies.Finding) string {
	var b strings.Builder
	for _, f := range findings {
		b.WriteString(f.Field + ": " + f.Message + "\n")
	}
	return b.String()
}

// checkWellFormed checks what every finding must be: sorted, with a field
// path, a message, and a known code.
func checkWellFormed(t *testing.T, findings []policies.Finding) {
	t.Helper()
	sorted := slices.Clone(findings)
	policies.Sort(sorted)
	if !slices.Equal(findings, sorted) {
		t.Errorf("findings are not sorted")
	}
	for _, f := range findings {
		if f.Field == "" || f.Message == "" || !knownCodes[f.Code] {
			t.Errorf("malformed finding %+v", f)
		}
		if wantWarn := warnCodes[f.Code]; wantWarn != (f.Severity == policies.Warn) {
			t.Errorf("finding %s has severity %d", f.Code, f.Severity)
		}
		if limitCodes[f.Code] && f.Ratchets() {
			t.Errorf("limit finding %s at %s ratchets", f.Code, f.Field)
		}
	}
}

// limitCodes are the codes of walk and parse limits: findings about the
// review, never about a value, so they must never ratchet.
var limitCodes = map[policies.Code]bool{
	OverrideDocumentTooDeep:  true,
	OverrideDocumentTooLarge: true,
	OverrideTooManyFindings:  true,
}

// warnCodes are the codes that warn; every other code denies.
var warnCodes = map[policies.Code]bool{
	OverrideDocumentEmpty:     true,
	OverrideResolutionSkipped: true,
	OverrideArgsReplaced:      true,
	OverrideImagePinned:       true,
}

var knownCodes = map[policies.Code]bool{
	OverrideDocumentEmpty: true, OverrideDocumentInvalid: true, OverrideDocumentTooDeep: true, OverrideDocumentTooLarge: true,
	OverrideConfigMapTooLarge: true, OverrideDocumentTooLong: true, OverrideDocumentTooManyNodes: true, OverrideMappingTooManyKeys: true,
	OverrideTooManyEntries:  true,
	OverrideTooManyFindings: true, OverrideMultipleDocuments: true, OverrideNodeSelectorOwned: true, OverrideConflict: true,
	OverrideFieldOwnedBySite: true, OverrideEnvValueAndValueFrom: true, OverrideStrategyInvalid: true, OverrideAffinityInvalid: true, OverrideAPIVersionUnknown: true,
	OverrideYAMLMergeKey: true, OverrideDuplicateKey: true, OverrideUnknownField: true, OverrideTypeInvalid: true, OverrideNull: true,
	OverrideDirective: true, OverrideComponentUnknown: true, OverrideKindMismatch: true, OverrideSitesInvalid: true, OverrideEmpty: true,
	OverrideNameInvalid: true, OverrideAdditionUndefined: true, OverridePathNotAllowed: true, OverridePathProtected: true,
	OverrideReservedKey: true, OverrideListKeyInvalid: true, OverrideSelectorLabel: true, OverrideVolumeRedefined: true,
	OverrideContainerUnknown: true, OverrideContainerExists: true, OverrideResolutionSkipped: true, OverrideArgsReplaced: true,
	OverrideImagePinned: true,
}

// TestCodesDistinct reads the codes this package declares from its source:
// each is its own string and carries the Override prefix, and knownCodes,
// which checkWellFormed and the fuzz target accept, holds exactly them.
func TestCodesDistinct(t *testing.T) {
	declared := golden.DeclaredCodes(t, ".")
	if len(declared) == 0 {
		t.Fatal("no code declared: the parse no longer sees the declarations")
	}
	seen := map[string]string{}
	for _, code := range declared {
		if other, ok := seen[code.Value]; ok {
			t.Errorf("%s and %s are both %q", other, code.Name, code.Value)
		}
		seen[code.Value] = code.Name
		if !strings.HasPrefix(code.Value, "Override") {
			t.Errorf("%s = %q lacks the Override prefix", code.Name, code.Value)
		}
		if !knownCodes[policies.Code(code.Value)] {
			t.Errorf("%s (%s) is missing from knownCodes", code.Name, code.File)
		}
	}
	for code := range knownCodes {
		if _, ok := seen[string(code)]; !ok {
			t.Errorf("knownCodes holds %s, which this package does not declare", code)
		}
	}
}

const apiLine = "apiVersion: " + APIVersion + "\n"

// TestValidateDocument covers what is checked of a data value as a whole.
func TestValidateDocument(t *testing.T) {
	runCases(t, []validateCase{
		{name: "valid, every component", data: one(render(validDocument()))},
		{name: "several keys", data: map[string]string{"a.yaml": render(validDocument()), "b.yaml": render(document(
			storageEntry(runPatch(map[string]any{"image": "registry.example/run:2"})), // warns: pins the image
		))}, want: []result{warn(OverrideImagePinned, "data[b.yaml].overrides[0].patch.spec.template.spec.containers[0].image")}},
		{name: "the same document in two keys", data: map[string]string{"a.yaml": render(validDocument()), "b.yaml": render(validDocument())},
			// Identical values never conflict; extraArgs appended twice do
			// (upstream): they would concatenate.
			want: []result{
				deny(OverrideConflict, "data[a.yaml].overrides[3].extraArgs[metalman]"),
				deny(OverrideConflict, "data[b.yaml].overrides[3].extraArgs[metalman]"),
			}},
		{name: "no overrides", data: one(apiLine)},
		{name: "empty overrides", data: one(apiLine + "overrides: []\n")},
		{name: "no keys", data: map[string]string{}},
		{name: "empty value", data: one(" \n\t\n"), want: []result{warn(OverrideDocumentEmpty, doc0)}},
		{name: "only a comment", data: one("# nothing yet\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "only a marker", data: one("---\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "syntax error", data: one(apiLine + "overrides: [\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "tab indentation", data: one(apiLine + "overrides:\n\t- component: net\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "unknown anchor", data: one(apiLine + "overrides: *missing\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "two documents", data: one(apiLine + "---\n" + apiLine), want: []result{deny(OverrideMultipleDocuments, doc0)}},
		{name: "trailing document marker", data: one(apiLine + "---\n"), want: []result{deny(OverrideMultipleDocuments, doc0)}},
		{name: "leading document marker", data: one("---\n" + apiLine)},
		{name: "a list", data: one("- " + apiLine), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "null", data: one("~\n"), want: []result{deny(OverrideDocumentInvalid, doc0)}},
		{name: "apiVersion missing, entries still checked", data: one("overrides:\n- component: nope\n  kind: DaemonSet\n  extraArgs: {x: [a]}\n"),
			want: []result{
				deny(OverrideAPIVersionUnknown, doc0+".apiVersion"),
				deny(OverrideComponentUnknown, e0+".component"),
			}},
		{name: "apiVersion unknown, nothing else checked", data: one("apiVersion: overrides.unbounded-cloud.io/v1beta1\noverrides:\n- component: nope\n"),
			want: []result{deny(OverrideAPIVersionUnknown, doc0+".apiVersion")}},
		{name: "apiVersion a list", data: one("apiVersion: [" + APIVersion + "]\n"), want: []result{deny(OverrideAPIVersionUnknown, doc0+".apiVersion")}},
		{name: "apiVersion null", data: one("apiVersion: null\noverrides: []\n"), want: []result{deny(OverrideNull, doc0+".apiVersion")}},
		{name: "unknown field", data: one(apiLine + "override: []\n"), want: []result{deny(OverrideUnknownField, doc0+".override")}},
		{name: "overrides a mapping", data: one(apiLine + "overrides: {component: net}\n"), want: []result{deny(OverrideTypeInvalid, doc0+".overrides")}},
		{name: "overrides null", data: one(apiLine + "overrides:\n"), want: []result{deny(OverrideNull, doc0+".overrides")}},
		{name: "entry not a mapping", data: one(apiLine + "overrides: [net]\n"), want: []result{deny(OverrideTypeInvalid, e0)}},
		{name: "entry null", data: one(apiLine + "overrides: [~]\n"), want: []result{deny(OverrideNull, e0)}},
		{name: "merge key", data: one(apiLine + "overrides:\n- &base {component: net, kind: DaemonSet, extraArgs: {node: [-v]}}\n- <<: *base\n  kind: Deployment\n"),
			want: []result{
				deny(OverrideEmpty, e1),
				deny(OverrideComponentUnknown, e1+".component"),
				deny(OverrideYAMLMergeKey, e1+"[<<]"),
			}},
		{name: "quoted merge key", data: one(apiLine + "overrides:\n- '<<': {}\n  component: net\n  kind: DaemonSet\n  extraArgs: {node: [-v]}\n"),
			want: []result{deny(OverrideYAMLMergeKey, e0+"[<<]")}},
		{name: "duplicate key", data: one(apiLine + "overrides:\n- component: net\n  kind: DaemonSet\n  kind: Deployment\n  extraArgs: {node: [-v]}\n"),
			want: []result{deny(OverrideDuplicateKey, e0+".kind")}},
		{name: "duplicate key in a patch", data: one(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch: {spec: {replicas: 2, replicas: 3}}\n"),
			want: []result{deny(OverrideDuplicateKey, p0+".spec.replicas")}},
		{name: "key not a string", data: one(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch: {spec: {? [a]: b, replicas: 2}}\n"),
			want: []result{deny(OverrideTypeInvalid, p0+".spec")}},
		{name: "null key", data: one(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch: {spec: {~: b, replicas: 2}}\n"),
			want: []result{deny(OverrideNull, p0+".spec")}},
		{name: "directive at the top", data: one(apiLine + "$patch: replace\noverrides: []\n"), want: []result{deny(OverrideDirective, doc0+".$patch")}},
		{name: "aliases are expanded", data: one(apiLine + "overrides:\n" +
			"- {component: net, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: &tol [{operator: Exists}]}}}}}\n" +
			"- {component: net, kind: Deployment, patch: {spec: {template: {spec: {tolerations: *tol}}}}}\n")},
		{name: "aliased protected field is found where it lands", data: one(apiLine + "overrides:\n" +
			"- {component: net, kind: DaemonSet, extraArgs: &sa {node: [-v]}}\n" +
			"- {component: net, kind: Deployment, patch: {spec: {template: {spec: {serviceAccountName: *sa}}}}}\n"),
			want: []result{deny(OverridePathProtected, doc0+".overrides[1].patch.spec.template.spec.serviceAccountName")}},
		{name: "alias cycle", data: one(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch: &p {metadata: {annotations: {}}, spec: {strategy: *p}}\n"),
			want: []result{deny(OverrideDocumentTooDeep, doc0)}},
		{name: "alias bomb", data: one(aliasBomb()), want: []result{deny(OverrideDocumentTooLarge, doc0)}},
		{name: "nested too deeply", data: one(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch: {spec: {strategy: " +
			strings.Repeat("{a: ", 120) + "1" + strings.Repeat("}", 120) + "}}\n"),
			want: []result{deny(OverrideDocumentTooDeep, doc0)}},
	})
}

// aliasBomb is a "billion laughs" document: ten levels of ten aliases.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n- component: machina\n  kind: Deployment\n  patch:\n    spec:\n      strategy:\n")
	b.WriteString("        l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("        l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			b.WriteString("*l" + string(rune('0'+i-1)) + ", ")
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// TestValidateEntry covers the fields of an override other than its patch.
func TestValidateEntry(t *testing.T) {
	withSites := func(e map[string]any, sites ...any) map[string]any {
		return withField(e, "sites", append([]any{}, sites...))
	}
	args := func(e map[string]any, extraArgs map[string]any) map[string]any {
		return withField(e, "extraArgs", extraArgs)
	}
	runCases(t, []validateCase{
		{name: "net as DaemonSet and Deployment", data: overrides(
			entryOf("net", kindDaemonSet, workloadSpec(map[string]any{"minReadySeconds": 5})),
			entryOf("net", kindDeployment, workloadSpec(map[string]any{"replicas": 3})),
		)},
		{name: "component missing", data: overrides(map[string]any{"kind": kindDaemonSet, "patch": resourcesPatch()}),
			want: []result{deny(OverrideComponentUnknown, e0+".component")}},
		{name: "component unknown", data: overrides(entryOf("racers", kindDaemonSet, resourcesPatch())),
			want: []result{deny(OverrideComponentUnknown, e0+".component")}},
		{name: "component in capitals", data: overrides(entryOf("Storage", kindDaemonSet, resourcesPatch())),
			want: []result{deny(OverrideComponentUnknown, e0+".component")}},
		{name: "kind missing", data: overrides(map[string]any{"component": "storage", "patch": resourcesPatch()}),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "kind unknown", data: overrides(entryOf("storage", "StatefulSet", resourcesPatch())),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "machina is no DaemonSet", data: overrides(entryOf("machina", kindDaemonSet, resourcesPatch())),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "gantry is no Deployment", data: overrides(entryOf("gantry", kindDeployment, resourcesPatch())),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "metalman is no DaemonSet", data: overrides(entryOf("metalman", kindDaemonSet, resourcesPatch())),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "storage is no Deployment", data: overrides(entryOf("storage", kindDeployment, resourcesPatch())),
			want: []result{deny(OverrideKindMismatch, e0+".kind")}},
		{name: "unknown field", data: overrides(withField(storageEntry(resourcesPatch()), "site", "edge-west")),
			want: []result{deny(OverrideUnknownField, e0+".site")}},

		{name: "sites on storage", data: overrides(withSites(storageEntry(resourcesPatch()), "edge-west", "edge-east"))},
		{name: "sites on metalman", data: overrides(withSites(args(entryOf("metalman", kindDeployment, nil), map[string]any{"metalman": []any{"-v"}}), "edge-west"))},
		{name: "sites empty", data: overrides(withSites(storageEntry(resourcesPatch()))),
			want: []result{deny(OverrideSitesInvalid, e0+".sites")}},
		{name: "sites on a singleton", data: overrides(withSites(entryOf("machina", kindDeployment, workloadSpec(map[string]any{"replicas": 2})), "edge-west")),
			want: []result{deny(OverrideSitesInvalid, e0+".sites")}},
		{name: "sites not a list", data: overrides(withField(storageEntry(resourcesPatch()), "sites", "edge-west")),
			want: []result{deny(OverrideTypeInvalid, e0+".sites")}},
		{name: "site names", data: overrides(withSites(storageEntry(resourcesPatch()), "edge-west", "", "Edge_West", "edge-west", map[string]any{"name": "a"}, nil)),
			want: []result{
				deny(OverrideSitesInvalid, e0+".sites[1]"),
				deny(OverrideSitesInvalid, e0+".sites[2]"),
				deny(OverrideSitesInvalid, e0+".sites[3]"),
				deny(OverrideSitesInvalid, e0+".sites[4]"),
				deny(OverrideNull, e0+".sites[5]"),
			}},
		{name: "sites null", data: overrides(withField(storageEntry(resourcesPatch()), "sites", nil)),
			want: []result{deny(OverrideNull, e0+".sites")}},

		{name: "changes nothing", data: overrides(storageEntry(nil)), want: []result{deny(OverrideEmpty, e0)}},
		{name: "empty patch, args and additions", data: overrides(withField(withField(args(storageEntry(map[string]any{}), map[string]any{}),
			"addContainers", []any{}), "addInitContainers", []any{})),
			want: []result{deny(OverrideEmpty, e0)}},
		{name: "patch null", data: overrides(withField(storageEntry(nil), "patch", nil)), want: []result{deny(OverrideNull, e0+".patch")}},
		{name: "patch a list", data: overrides(withField(storageEntry(nil), "patch", []any{"spec"})), want: []result{deny(OverrideTypeInvalid, e0+".patch")}},

		{name: "extraArgs", data: overrides(args(storageEntry(nil), map[string]any{"run": []any{"--verbose", 5, true}, "init-perms": []any{"-x"}}))},
		{name: "extraArgs empty list", data: overrides(args(storageEntry(nil), map[string]any{"run": []any{}})),
			want: []result{deny(OverrideEmpty, e0+".extraArgs[run]")}},
		{name: "extraArgs not a mapping", data: overrides(args(storageEntry(nil), nil)),
			want: []result{deny(OverrideNull, e0+".extraArgs")}},
		{name: "extraArgs a list", data: overrides(withField(storageEntry(nil), "extraArgs", []any{"--verbose"})),
			want: []result{deny(OverrideTypeInvalid, e0+".extraArgs")}},
		{name: "extraArgs values", data: overrides(args(storageEntry(nil), map[string]any{
			"run": "--verbose", "init-perms": []any{map[string]any{"a": "b"}, nil}, "": []any{"-x"},
		})), want: []result{
			deny(OverrideNameInvalid, e0+".extraArgs[]"),
			deny(OverrideTypeInvalid, e0+".extraArgs[init-perms][0]"),
			deny(OverrideNull, e0+".extraArgs[init-perms][1]"),
			deny(OverrideTypeInvalid, e0+".extraArgs[run]"),
		}},
		{name: "extraArgs directive", data: overrides(args(storageEntry(nil), map[string]any{"$patch": "delete", "run": []any{"-v"}})),
			want: []result{deny(OverrideDirective, e0+".extraArgs[$patch]")}},

		{name: "sidecar", data: overrides(withField(storageEntry(containerPatch("containers", "shipper", map[string]any{
			"image": "registry.example/shipper:1", "args": []any{"--to=x"},
		})), "addContainers", []any{"shipper"}))},
		{name: "native sidecar", data: overrides(withField(storageEntry(containerPatch("initContainers", "proxy", map[string]any{
			"image": "registry.example/proxy:1", "restartPolicy": "Always",
		})), "addInitContainers", []any{"proxy"}))},
		{name: "extraArgs for a sidecar", data: overrides(args(withField(storageEntry(containerPatch("containers", "shipper", map[string]any{
			"image": "registry.example/shipper:1",
		})), "addContainers", []any{"shipper"}), map[string]any{"shipper": []any{"-v"}}))},
		{name: "addition not defined", data: overrides(withField(storageEntry(resourcesPatch()), "addContainers", []any{"shipper"})),
			want: []result{deny(OverrideAdditionUndefined, e0+".addContainers[0]")}},
		{name: "addition defined in the other list", data: overrides(withField(storageEntry(containerPatch("containers", "shipper", map[string]any{
			"image": "registry.example/shipper:1",
		})), "addInitContainers", []any{"shipper"})),
			want: []result{
				deny(OverrideAdditionUndefined, e0+".addInitContainers[0]"),
				warn(OverrideImagePinned, c0+".image"),
				deny(OverrideContainerUnknown, c0+".name"),
			}},
		{name: "addition as a container", data: overrides(withField(storageEntry(resourcesPatch()), "addContainers", []any{map[string]any{"name": "shipper"}})),
			want: []result{deny(OverrideTypeInvalid, e0+".addContainers[0]")}},
		{name: "addition names", data: overrides(withField(withField(storageEntry(containerPatch("containers", "a", nil)),
			"addContainers", []any{"a", "", "a"}), "addInitContainers", []any{"a"})),
			want: []result{
				deny(OverrideNameInvalid, e0+".addContainers[1]"),
				deny(OverrideNameInvalid, e0+".addContainers[2]"),
				deny(OverrideNameInvalid, e0+".addInitContainers[0]"),
			}},
		{name: "additions not a list", data: overrides(withField(storageEntry(nil), "addContainers", "shipper")),
			want: []result{deny(OverrideTypeInvalid, e0+".addContainers")}},
		{name: "addition the workload has", data: overrides(withField(storageEntry(containerPatch("containers", "run", map[string]any{
			"image": "registry.example/run:2",
		})), "addContainers", []any{"run"})),
			want: []result{deny(OverrideContainerExists, e0+".addContainers[0]")}},
	})
}

// TestFindingsCapped: aliases cannot multiply findings past maxFindings per
// document; the document is then reported as too large to list.
func TestFindingsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(apiLine + "bad: &bad [" + strings.Repeat("x, ", 60) + "]\noverrides:\n")
	for i := 0; i < 30; i++ {
		b.WriteString("- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: *bad}}}}}\n")
	}
	findings := Validate(anyTable, map[string]string{key: b.String(), "fine.yaml": render(validDocument())}, typicalLive())
	checkWellFormed(t, findings)
	if len(findings) != maxFindings+1 {
		t.Fatalf("got %d findings, want %d", len(findings), maxFindings+1)
	}
	if got := results(findings)[0]; got != deny(OverrideTooManyFindings, doc0) {
		t.Errorf("first finding %v, want the document reported", got)
	}
}

// TestBudgetShared: documents that each stay within their own alias budget
// still share one budget per Validate call; the documents past it (in key
// order) are reported, the ones before it are checked in full.
func TestBudgetShared(t *testing.T) {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n" +
		"- {component: machina, kind: Deployment, patch: {spec: {strategy: {a: &l [" + strings.Repeat("x, ", 100) + "], ")
	for i := 0; i < 100; i++ {
		b.WriteString("a" + strconv.Itoa(i) + ": *l, ")
	}
	b.WriteString("}}}}\n")
	data := map[string]string{}
	for i := 0; i < 500; i++ {
		data[fmt.Sprintf("doc-%04d.yaml", i)] = b.String()
	}
	findings := Validate(anyTable, data, typicalLive())
	checkWellFormed(t, findings)
	if len(findings) == 0 || len(findings) == len(data) {
		t.Fatalf("got %d findings for %d documents", len(findings), len(data))
	}
	for _, f := range findings {
		if f.Code != OverrideDocumentTooLarge || f.Field <= "data[doc-0300.yaml]" {
			t.Fatalf("unexpected finding %s %s: %s", f.Code, f.Field, f.Message)
		}
	}
}

// TestEvidenceBudget: evidence of an alias-expanded value is charged to the
// document's budget, and the document is reported once when that runs out.
func TestEvidenceBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {")
	b.WriteString("volumes: [{name: scratch, emptyDir: &e {a: [" + strings.Repeat("x, ", 200) + "]}}], ")
	for i := 0; i < 40; i++ {
		b.WriteString("field" + strconv.Itoa(i) + ": {a: *e, b: *e}, ")
	}
	b.WriteString("}}}}}\n")
	findings := Validate(anyTable, one(b.String()), typicalLive())
	checkWellFormed(t, findings)
	invalid := 0
	for _, f := range findings {
		if f.Code == OverrideDocumentTooLarge {
			invalid++
		}
	}
	if invalid != 1 {
		t.Errorf("the document is reported %d times: %v", invalid, results(findings))
	}
}
