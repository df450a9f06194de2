package overrides

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestResolve covers the checks against the live workload and what happens
// when it cannot be read.
func TestResolve(t *testing.T) {
	args := func(e map[string]any, extraArgs map[string]any) map[string]any {
		return withField(e, "extraArgs", extraArgs)
	}
	runCases(t, []validateCase{
		{name: "selector label changed", data: storagePatch("{spec: {template: {metadata: {labels: {app: storage-v2, tier: node}}}}}"),
			want: []result{deny(OverrideSelectorLabel, p0+".spec.template.metadata.labels[app]")}},
		{name: "selector label restated", data: storagePatch("{spec: {template: {metadata: {labels: {app: storage}}}}}")},
		{name: "one of two selector labels changed", data: patchOf("metalman", kindDeployment,
			"{spec: {template: {metadata: {labels: {app: metalman, site: edge-east}}}}}"),
			want: []result{deny(OverrideSelectorLabel, p0+".spec.template.metadata.labels[site]")}},
		{name: "workload label named like a selector label", data: storagePatch("{metadata: {labels: {app: other}}}")},
		{name: "selector label removed", data: storagePatch("{spec: {template: {metadata: {labels: {app: null}}}}}"),
			want: []result{deny(OverrideNull, p0+".spec.template.metadata.labels[app]")}},

		{name: "operator volume redefined", data: podSpecPatch("volumes: [{name: data, hostPath: {path: /etc/kubernetes}}, {name: config}, {name: scratch, emptyDir: {}}]"),
			want: []result{deny(OverrideVolumeRedefined, ps0+".volumes[0]")}},
		{name: "operator volume removed", data: podSpecPatch("volumes: [{name: data, $patch: delete}]"),
			want: []result{deny(OverrideVolumeRedefined, ps0+".volumes[0]"), deny(OverrideDirective, ps0+".volumes[0].$patch")}},

		{name: "container the workload lacks", data: runFields("resources: {}") /* run exists */},
		{name: "misspelt container", data: podSpecPatch("containers: [{name: runn, resources: {limits: {cpu: '1'}}}]"),
			want: []result{deny(OverrideContainerUnknown, ps0+".containers[0].name")}},
		{name: "misspelt init container", data: podSpecPatch("initContainers: [{name: init-perm, resources: {}}]"),
			want: []result{deny(OverrideContainerUnknown, ps0+".initContainers[0].name")}},
		// Each list against its own (upstream resolve.go @ 9d4082e7
		// checkContainerNames): storage has container run and init
		// container init-perms.
		{name: "init container named like a container", data: podSpecPatch("initContainers: [{name: run, resources: {}}]"),
			want: []result{deny(OverrideContainerUnknown, ps0+".initContainers[0].name")}},
		{name: "container named like an init container", data: podSpecPatch("containers: [{name: init-perms, resources: {}}]"),
			want: []result{deny(OverrideContainerUnknown, ps0+".containers[0].name")}},
		{name: "init container the workload has", data: podSpecPatch("initContainers: [{name: init-perms, resources: {}}]")},
		{name: "extraArgs for an init container", data: overrides(args(storageEntry(nil), map[string]any{"init-perms": []any{"-v"}}))},
		{name: "init container added beside a container of that name", data: overrides(withField(storageEntry(
			containerPatch("initContainers", "run", map[string]any{"image": "registry.example/run:1"})), "addInitContainers", []any{"run"}))},

		// Env vars merge on name onto the operator's (NODE_NAME from
		// valueFrom, STORAGE_ROOT a value, in both Sites).
		{name: "value over the operator's valueFrom", data: runFields("env: [{name: NODE_NAME, value: node-1}]"),
			want: []result{deny(OverrideEnvValueAndValueFrom, c0+".env[0]")}},
		{name: "valueFrom over the operator's value", data: runFields("env: [{name: STORAGE_ROOT, valueFrom: {configMapKeyRef: {name: c, key: k}}}]"),
			want: []result{deny(OverrideEnvValueAndValueFrom, c0+".env[0]")}},
		{name: "an empty value over the operator's valueFrom", data: runFields("env: [{name: NODE_NAME, value: ''}]")},
		{name: "valueFrom over the operator's valueFrom", data: runFields("env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]")},
		{name: "value over the operator's value", data: runFields("env: [{name: STORAGE_ROOT, value: /srv}]")},
		{name: "extraArgs for a container the workload lacks", data: overrides(args(storageEntry(nil), map[string]any{"runn": []any{"-v"}, "run": []any{"-v"}})),
			want: []result{deny(OverrideContainerUnknown, e0+".extraArgs[runn]")}},

		{name: "unreadable workload", data: overrides(
			entryOf("gantry", kindDaemonSet, containerPatch("containers", "gantry", map[string]any{"resources": map[string]any{}})),
			entryOf("gantry", kindDaemonSet, workloadSpec(map[string]any{"minReadySeconds": 5})),
		), want: []result{warn(OverrideResolutionSkipped, e0)}},
		{name: "unreadable workload, syntactic findings stand", data: overrides(
			args(entryOf("gantry", kindDaemonSet, containerPatch("containers", "gantry", map[string]any{"stdin": true})), map[string]any{"ghost": []any{"-v"}}),
		), want: []result{warn(OverrideResolutionSkipped, e0), deny(OverridePathNotAllowed, c0+".stdin")}},
		{name: "no live workloads", nilLive: true, data: one(render(validDocument())),
			want: []result{warn(OverrideResolutionSkipped, e0), warn(OverrideResolutionSkipped, doc0+".overrides[3]")}},
		{name: "no live workloads, what needs none", nilLive: true, data: overrides(
			entryOf("machina", kindDeployment, workloadSpec(map[string]any{"replicas": 2})),
			entryOf("storage", kindDaemonSet, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}}),
			entryOf("storage", kindDaemonSet, templateMetadata(map[string]any{"annotations": map[string]any{"a": "b"}})),
		)},
		{name: "no live workloads, each entry that needs one", nilLive: true, data: overrides(
			entryOf("storage", kindDaemonSet, templateMetadata(map[string]any{"labels": map[string]any{"app": "x"}})),
			entryOf("storage", kindDaemonSet, templateSpec(map[string]any{"volumes": []any{map[string]any{"name": "data", "emptyDir": map[string]any{}}}})),
			args(storageEntry(nil), map[string]any{"run": []any{"-v"}}),
		), want: []result{
			warn(OverrideResolutionSkipped, e0),
			warn(OverrideResolutionSkipped, e1),
			warn(OverrideResolutionSkipped, doc0+".overrides[2]"),
		}},
		{name: "wrong component or kind: nothing to resolve", nilLive: true, data: overrides(
			args(entryOf("storage", kindDeployment, nil), map[string]any{"run": []any{"-v"}}),
			args(entryOf("racers", kindDaemonSet, nil), map[string]any{"run": []any{"-v"}}),
		), want: []result{deny(OverrideKindMismatch, e0+".kind"), deny(OverrideComponentUnknown, e1+".component")}},
	})
}

// liveOf is a Live that answers one workload for every component and kind.
type liveOf Workload

func (l liveOf) Workloads(string, string) ([]Workload, bool) { return []Workload{Workload(l)}, true }

// TestResolveLiveKind: a live workload of another kind than asked for is
// taken as unreadable.
func TestResolveLiveKind(t *testing.T) {
	live := liveOf{Kind: kindDeployment, Containers: []string{"run"}}
	findings := Validate(anyTable, runFields("resources: {}"), live)
	if got, want := results(findings), []result{warn(OverrideResolutionSkipped, e0)}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("got %v, want %v", got, want)
	}
	live.Kind = ""
	if findings := Validate(anyTable, runFields("resources: {}"), live); len(findings) != 0 {
		t.Errorf("a live workload without a kind: %v", results(findings))
	}
}

// TestEvidence: evidence identifies the offending value, so the same value
// ratchets and a changed one does not.
func TestEvidence(t *testing.T) {
	evidence := func(data map[string]string) uint64 {
		findings := Validate(anyTable, data, typicalLive())
		for _, f := range findings {
			if f.Severity == policies.Deny {
				return f.Evidence
			}
		}
		t.Fatalf("no denial: %v", results(findings))
		return 0
	}
	same := [][2]map[string]string{
		{podSpecPatch("hostNetwork: true"), podSpecPatch("hostNetwork:    !!bool true")},
	}
	for _, pair := range same {
		if evidence(pair[0]) != evidence(pair[1]) {
			t.Errorf("the same value has different evidence: %v", pair)
		}
	}
	differ := [][2]map[string]string{
		{podSpecPatch("hostNetwork: true"), podSpecPatch("hostNetwork: false")},
		{podSpecPatch("hostNetwork: true"), podSpecPatch("hostNetwork: 'true'")},
		{storagePatch("{spec: {template: {metadata: {labels: {app: a}}}}}"), storagePatch("{spec: {template: {metadata: {labels: {app: b}}}}}")},
	}
	for _, pair := range differ {
		if evidence(pair[0]) == evidence(pair[1]) {
			t.Errorf("different values have the same evidence: %v", pair)
		}
	}
	// A parse failure is about the review, not a value: no evidence, so an
	// UPDATE that keeps the same broken text is denied like a CREATE.
	if e := evidence(one("a: [\n")); e != policies.NoEvidence {
		t.Errorf("a parse failure has evidence %d", e)
	}
}
