package overrides

import "testing"

// TestApplyRefusals: what the engine refuses when it applies one entry is
// refused at admission, each with its own code, at the field.
func TestApplyRefusals(t *testing.T) {
	terms := "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	required := func(terms string) string {
		return "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: " + terms + "}}}"
	}
	runCases(t, []validateCase{
		{name: "metalman replicas", data: patchOf("metalman", kindDeployment, "{spec: {replicas: 3}}"),
			want: []result{deny(OverrideFieldOwnedBySite, p0+".spec.replicas")}},
		{name: "machina replicas", data: machinaPatch("{spec: {replicas: 3}}")},
		{name: "net Deployment replicas", data: patchOf("net", kindDeployment, "{spec: {replicas: 3}}")},

		{name: "env value and valueFrom", data: runFields("env: [{name: A, value: x, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}, {name: B, value: y}]"),
			want: []result{deny(OverrideEnvValueAndValueFrom, c0+".env[0]")}},
		{name: "init env value and valueFrom", data: initFields("env: [{name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]"),
			want: []result{deny(OverrideEnvValueAndValueFrom, ps0+".initContainers[0].env[0]")}},
		{name: "env valueFrom only", data: runFields("env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]")},

		{name: "Recreate", data: machinaPatch("{spec: {strategy: {type: Recreate}}}")},
		{name: "Recreate with rollingUpdate", data: machinaPatch("{spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}}}"),
			want: []result{deny(OverrideStrategyInvalid, p0+".spec.strategy.rollingUpdate")}},
		{name: "RollingUpdate with rollingUpdate", data: machinaPatch("{spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}}")},
		{name: "unknown Deployment strategy", data: machinaPatch("{spec: {strategy: {type: OnDelete}}}"),
			want: []result{deny(OverrideStrategyInvalid, p0+".spec.strategy.type")}},
		{name: "OnDelete with rollingUpdate", data: storagePatch("{spec: {updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}}}"),
			want: []result{deny(OverrideStrategyInvalid, p0+".spec.updateStrategy.rollingUpdate")}},
		{name: "unknown DaemonSet strategy", data: storagePatch("{spec: {updateStrategy: {type: Recreate}}}"),
			want: []result{deny(OverrideStrategyInvalid, p0+".spec.updateStrategy.type")}},
		{name: "OnDelete", data: storagePatch("{spec: {updateStrategy: {type: OnDelete}}}")},

		{name: "empty nodeSelectorTerms", data: podSpecPatch(required("[]")),
			want: []result{deny(OverrideAffinityInvalid, p0+"."+terms)}},
		{name: "nodeSelectorTerms a mapping", data: podSpecPatch(required("{matchExpressions: []}")),
			want: []result{deny(OverrideAffinityInvalid, p0+"."+terms)}},
		// An empty term is accepted, as the engine accepts it (validate.go @
		// 26f231b has no such rule): on storage the operator's terms
		// have requirements, so every product term has some.
		{name: "empty term", data: podSpecPatch(required("[{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}, {}]"))},
		{name: "empty term alone", data: patchOf("net", kindDaemonSet, "{spec: {template: {spec: {"+required("[{}]")+"}}}}")},
		{name: "empty term lists", data: patchOf("net", kindDaemonSet, "{spec: {template: {spec: {"+
			required("[{matchExpressions: [], matchFields: []}]")+"}}}}")},
		{name: "term not a mapping", data: podSpecPatch(required("[disk]")),
			want: []result{deny(OverrideAffinityInvalid, p0+"."+terms+"[0]")}},
		{name: "matchExpressions a mapping", data: podSpecPatch(required("[{matchExpressions: {key: disk}, matchFields: [{key: metadata.name, operator: In, values: [a]}]}]")),
			want: []result{deny(OverrideAffinityInvalid, p0+"."+terms+"[0].matchExpressions")}},
		{name: "preference a mapping", data: podSpecPatch("affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: {weight: 1}}}"),
			want: []result{deny(OverrideAffinityInvalid, ps0+".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")}},
		{name: "pod anti-affinity item a list", data: podSpecPatch("affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [[a]]}}"),
			want: []result{deny(OverrideAffinityInvalid, ps0+".affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]")}},
		{name: "valid required terms", data: podSpecPatch(required("[{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}, " +
			"{matchFields: [{key: metadata.name, operator: In, values: [a]}]}]"))},
	})
}

// TestComposeRefusals: what the engine refuses when it composes the entries
// that reach one workload is refused at admission, at every entry involved.
func TestComposeRefusals(t *testing.T) {
	e2 := doc0 + ".overrides[2]"
	entries := func(entries ...string) map[string]string {
		return one(apiLine + "overrides:\n" + "- " + joinEntries(entries))
	}
	storage := func(sites, patch string) string {
		s := ""
		if sites != "" {
			s = ", sites: " + sites
		}
		return "{component: storage, kind: DaemonSet" + s + ", patch: " + patch + "}"
	}
	memory := func(m string) string {
		return "{spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: " + m + "}}}]}}}}"
	}
	terms := func(n int) string {
		var b []byte
		for i := 0; i < n; i++ {
			b = append(b, "{matchExpressions: [{key: k, operator: Exists}]}, "...)
		}
		return "{spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" +
			string(b) + "]}}}}}}}"
	}
	termsPath := ".patch.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	emptyTerm := "{spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}}}}}}"
	limit := ".patch.spec.template.spec.containers[0].resources.limits[memory]"
	runCases(t, []validateCase{
		{name: "two entries, one value", data: entries(storage("", memory("1Gi")), storage("", memory("1Gi")))},
		{name: "two entries, two values", data: entries(storage("", memory("1Gi")), storage("", memory("2Gi"))),
			want: []result{deny(OverrideConflict, e0+limit), deny(OverrideConflict, e1+limit)}},
		{name: "two values in different Sites", data: entries(storage("[edge-west]", memory("1Gi")), storage("[edge-east]", memory("2Gi")))},
		{name: "two values, one Site shared", data: entries(storage("[edge-west, edge-east]", memory("1Gi")), storage("[edge-east]", memory("2Gi"))),
			want: []result{deny(OverrideConflict, e0+limit), deny(OverrideConflict, e1+limit)}},
		{name: "two values, every Site and one", data: entries(storage("", memory("1Gi")), storage("[edge-north]", memory("2Gi"))),
			want: []result{deny(OverrideConflict, e0+limit), warn(OverrideResolutionSkipped, e1), deny(OverrideConflict, e1+limit)}},
		{name: "two keys of one entry", data: runFields("env: [{name: A, value: x}, {name: A, value: y}]"),
			want: []result{deny(OverrideConflict, c0+".env[0].value"), deny(OverrideConflict, c0+".env[1].value")}},
		{name: "two entries, one node selector key", data: entries(
			storage("", "{spec: {template: {spec: {nodeSelector: {disk: ssd}}}}}"),
			storage("", "{spec: {template: {spec: {nodeSelector: {disk: hdd}}}}}")),
			want: []result{deny(OverrideConflict, e0+".patch.spec.template.spec.nodeSelector[disk]"),
				deny(OverrideConflict, e1+".patch.spec.template.spec.nodeSelector[disk]")}},
		{name: "tolerations combine", data: entries(
			storage("", "{spec: {template: {spec: {tolerations: [{key: a, operator: Exists}]}}}}"),
			storage("", "{spec: {template: {spec: {tolerations: [{key: b, operator: Exists}]}}}}"))},
		{name: "args are replaced whole", data: entries(
			storage("", "{spec: {template: {spec: {containers: [{name: run, args: [-a]}]}}}}"),
			storage("", "{spec: {template: {spec: {containers: [{name: run, args: [-a, -b]}]}}}}")),
			want: []result{
				warn(OverrideArgsReplaced, e0+".patch.spec.template.spec.containers[0].args"),
				deny(OverrideConflict, e0+".patch.spec.template.spec.containers[0].args"),
				warn(OverrideArgsReplaced, e1+".patch.spec.template.spec.containers[0].args"),
				deny(OverrideConflict, e1+".patch.spec.template.spec.containers[0].args"),
			}},
		{name: "extraArgs twice", data: entries("{component: net, kind: DaemonSet, extraArgs: {node: [-v]}}",
			"{component: net, kind: DaemonSet, extraArgs: {node: [-q]}}"),
			want: []result{deny(OverrideConflict, e0+".extraArgs[node]"), deny(OverrideConflict, e1+".extraArgs[node]")}},
		{name: "extraArgs in two kinds", data: entries("{component: net, kind: DaemonSet, extraArgs: {node: [-v]}}",
			"{component: net, kind: Deployment, extraArgs: {controller: [-q]}}")},
		{name: "one sidecar added twice, differently", data: entries(
			"{component: net, kind: DaemonSet, addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, image: a}]}}}}}",
			"{component: net, kind: DaemonSet, addContainers: [shipper], patch: {spec: {template: {spec: {containers: [{name: shipper, args: [-v]}]}}}}}"),
			want: []result{
				deny(OverrideConflict, e0+".patch.spec.template.spec.containers[0]"),
				deny(OverrideConflict, e1+".patch.spec.template.spec.containers[0]"),
			}},
		{name: "Recreate and rollingUpdate across entries", data: entries(
			"{component: machina, kind: Deployment, patch: {spec: {strategy: {type: Recreate}}}}",
			"{component: machina, kind: Deployment, patch: {spec: {strategy: {rollingUpdate: {maxSurge: 1}}}}}"),
			want: []result{deny(OverrideStrategyInvalid, e0+".patch.spec.strategy.type"), deny(OverrideStrategyInvalid, e1+".patch.spec.strategy.rollingUpdate")}},
		{name: "required terms within the product", data: entries(storage("[edge-west]", terms(8)), storage("[edge-west]", terms(8)))},
		{name: "required terms past the product", data: entries(storage("[edge-west]", terms(8)), storage("[edge-west]", terms(9)),
			storage("[edge-east]", terms(9))),
			want: []result{deny(OverrideAffinityInvalid, e0+termsPath), deny(OverrideAffinityInvalid, e1+termsPath)}},
		{name: "required terms past the product with the operator's", data: entries(storage("[edge-east]", terms(65))),
			want: []result{deny(OverrideAffinityInvalid, e0+termsPath)}},
		{name: "required terms of a singleton without operator terms", data: one(apiLine + "overrides:\n- " +
			"{component: net, kind: DaemonSet, patch: " + terms(100) + "}\n")},
		// Terms without requirements (affinity.go @ 54e7d309 combineTerms):
		// two the engine combines are refused; one beside the operator's
		// terms, or beside a term with requirements, is not.
		{name: "two empty terms, no operator terms", data: entries(
			"{component: net, kind: DaemonSet, patch: "+emptyTerm+"}", "{component: net, kind: DaemonSet, patch: "+emptyTerm+"}"),
			want: []result{deny(OverrideAffinityInvalid, e0+termsPath+"[0]"), deny(OverrideAffinityInvalid, e1+termsPath+"[0]")}},
		{name: "two empty terms in different keys, live unreadable", data: map[string]string{
			"a.yaml": apiLine + "overrides:\n- {component: gantry, kind: DaemonSet, patch: " + emptyTerm + "}\n",
			"b.yaml": apiLine + "overrides:\n- {component: gantry, kind: DaemonSet, patch: " + emptyTerm + "}\n"},
			want: []result{deny(OverrideAffinityInvalid, "data[a.yaml].overrides[0]"+termsPath+"[0]"),
				deny(OverrideAffinityInvalid, "data[b.yaml].overrides[0]"+termsPath+"[0]")}},
		{name: "two empty terms beside the operator's", data: entries(storage("", emptyTerm), storage("", emptyTerm))},
		{name: "empty terms, the second block has requirements", data: entries(
			"{component: net, kind: DaemonSet, patch: "+emptyTerm+"}", "{component: net, kind: DaemonSet, patch: "+terms(1)+"}",
			"{component: net, kind: DaemonSet, patch: "+emptyTerm+"}")},
		// An env var given a value by one entry and valueFrom by another
		// merges into one with both, whatever the live workload.
		{name: "value and valueFrom across entries", data: entries(
			storage("", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, value: x}]}]}}}}"),
			storage("", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}")),
			want: []result{deny(OverrideEnvValueAndValueFrom, e0+".patch.spec.template.spec.containers[0].env[0]"),
				deny(OverrideEnvValueAndValueFrom, e1+".patch.spec.template.spec.containers[0].env[0]")}},
		{name: "value and valueFrom across entries, no live workload", data: entries(
			"{component: gantry, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: gantry, env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}}",
			"{component: gantry, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: gantry, env: [{name: A, value: x}]}]}}}}}"),
			want: []result{warn(OverrideResolutionSkipped, e0),
				deny(OverrideEnvValueAndValueFrom, e0+".patch.spec.template.spec.containers[0].env[0]"),
				warn(OverrideResolutionSkipped, e1),
				deny(OverrideEnvValueAndValueFrom, e1+".patch.spec.template.spec.containers[0].env[0]")}},
		{name: "an empty value and valueFrom across entries", data: entries(
			storage("", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, value: ''}]}]}}}}"),
			storage("", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}"))},
		{name: "value and valueFrom in other Sites", data: entries(
			storage("[edge-west]", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, value: x}]}]}}}}"),
			storage("[edge-east]", "{spec: {template: {spec: {containers: [{name: run, env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}]}}}}"))},
		{name: "three entries, the conflict at both", data: entries(storage("", memory("1Gi")), storage("", "{metadata: {labels: {a: b}}}"),
			storage("", memory("3Gi"))),
			want: []result{deny(OverrideConflict, e0+limit), deny(OverrideConflict, e2+limit)}},
	})
}

func joinEntries(entries []string) string {
	out := ""
	for i, e := range entries {
		if i > 0 {
			out += "- "
		}
		out += e + "\n"
	}
	return out
}
