package overrides

import (
	"testing"
)

// patchOf is a document with one entry of component and kind whose patch is
// the flow-style YAML patch.
func patchOf(component, kind, patch string) map[string]string {
	return one(apiLine + "overrides:\n- component: " + component + "\n  kind: " + kind + "\n  patch: " + patch + "\n")
}

// storagePatch patches the storage DaemonSet (containers run, init-perms;
// volumes data, config; selector app=storage).
func storagePatch(patch string) map[string]string { return patchOf("storage", kindDaemonSet, patch) }

// machinaPatch patches the machina Deployment.
func machinaPatch(patch string) map[string]string { return patchOf("machina", kindDeployment, patch) }

// podSpecPatch patches the storage DaemonSet's pod spec with fields.
func podSpecPatch(fields string) map[string]string {
	return storagePatch("{spec: {template: {spec: {" + fields + "}}}}")
}

// runFields patches the storage DaemonSet's run container with fields.
func runFields(fields string) map[string]string {
	return podSpecPatch("containers: [{name: run, " + fields + "}]")
}

// initFields patches the storage DaemonSet's init-perms init container.
func initFields(fields string) map[string]string {
	return podSpecPatch("initContainers: [{name: init-perms, " + fields + "}]")
}

// TestPatchAllowed: one valid patch of every permitted path.
func TestPatchAllowed(t *testing.T) {
	runCases(t, []validateCase{
		{name: "metadata.labels", data: storagePatch("{metadata: {labels: {team: platform, app: other}}}")},
		{name: "metadata.annotations", data: storagePatch("{metadata: {annotations: {example.com/note: x}}}")},
		{name: "spec.replicas", data: machinaPatch("{spec: {replicas: 3}}")},
		{name: "spec.strategy", data: machinaPatch("{spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}}}")},
		{name: "spec.updateStrategy", data: storagePatch("{spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: '10%'}}}}")},
		{name: "spec.minReadySeconds", data: storagePatch("{spec: {minReadySeconds: 10}}")},
		{name: "spec.revisionHistoryLimit", data: machinaPatch("{spec: {revisionHistoryLimit: 3}}")},
		{name: "template labels", data: storagePatch("{spec: {template: {metadata: {labels: {tier: node, app: storage}}}}}")},
		{name: "template annotations", data: storagePatch("{spec: {template: {metadata: {annotations: {prometheus.io/scrape: 'true'}}}}}")},

		{name: "container image", data: runFields("image: registry.example/run:2"),
			want: []result{warn(OverrideImagePinned, c0+".image")}},
		{name: "container imagePullPolicy", data: runFields("imagePullPolicy: Always")},
		{name: "container args", data: runFields("args: [--verbose]"), want: []result{warn(OverrideArgsReplaced, c0+".args")}},
		{name: "container command", data: runFields("command: [/run]"), want: []result{warn(OverrideArgsReplaced, c0+".command")}},
		{name: "container env", data: runFields("env: [{name: LOG, value: debug}, {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]")},
		{name: "container envFrom", data: runFields("envFrom: [{configMapRef: {name: extra}}]")},
		{name: "container resources", data: runFields("resources: {limits: {memory: 1Gi, nvidia.com/gpu: 1}, requests: {cpu: 100m}}")},
		{name: "container volumeMounts", data: runFields("volumeMounts: [{name: scratch, mountPath: /scratch}]")},
		{name: "container securityContext", data: runFields("securityContext: {readOnlyRootFilesystem: true, capabilities: {add: [NET_ADMIN]}}")},
		{name: "container probes", data: runFields("livenessProbe: {httpGet: {path: /healthz, port: 8080}}, " +
			"readinessProbe: {exec: {command: [true]}}, startupProbe: {failureThreshold: 30}")},
		{name: "container lifecycle", data: runFields("lifecycle: {preStop: {sleep: {seconds: 5}}}")},
		{name: "container ports", data: runFields("ports: [{containerPort: 9090, name: metrics}]")},
		{name: "container termination message and workingDir", data: runFields("terminationMessagePath: /dev/log, " +
			"terminationMessagePolicy: FallbackToLogsOnError, workingDir: /var/run")},
		{name: "init container fields", data: initFields("imagePullPolicy: IfNotPresent, env: [{name: A, value: b}], " +
			"resources: {limits: {cpu: '1'}}, securityContext: {runAsUser: 0}, restartPolicy: Always")},
		{name: "init container args", data: initFields("args: [--x]"),
			want: []result{warn(OverrideArgsReplaced, ps0+".initContainers[0].args")}},

		{name: "volumes", data: podSpecPatch("volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}]")},
		{name: "imagePullSecrets", data: podSpecPatch("imagePullSecrets: [{name: registry}]")},
		{name: "nodeSelector", data: podSpecPatch("nodeSelector: {kubernetes.io/arch: amd64, example.com/pool: storage}")},
		{name: "tolerations", data: podSpecPatch("tolerations: [{key: dedicated, operator: Equal, value: storage, effect: NoSchedule}]")},
		{name: "affinity", data: podSpecPatch("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " +
			"{nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]}}, " +
			"podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: " +
			"{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {kind: storage}}}}]}}")},
		{name: "topologySpreadConstraints", data: podSpecPatch("topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]")},
		{name: "scheduling and runtime scalars", data: podSpecPatch("priorityClassName: system-node-critical, dnsPolicy: ClusterFirstWithHostNet, " +
			"terminationGracePeriodSeconds: 60, runtimeClassName: kata, schedulerName: custom")},
		{name: "dnsConfig", data: podSpecPatch("dnsConfig: {options: [{name: ndots, value: '2'}]}")},
		{name: "pod securityContext", data: podSpecPatch("securityContext: {fsGroup: 2000}")},
	})
}

// TestPatchRejected: paths outside the allowlist, protected fields wherever
// they are, and the values no patch may hold.
func TestPatchRejected(t *testing.T) {
	runCases(t, []validateCase{
		// Outside the allowlist.
		{name: "metadata.generateName", data: storagePatch("{metadata: {generateName: x-}}"),
			want: []result{deny(OverridePathNotAllowed, p0+".metadata.generateName")}},
		{name: "spec.paused", data: machinaPatch("{spec: {paused: true}}"), want: []result{deny(OverridePathNotAllowed, p0+".spec.paused")}},
		{name: "replicas on a DaemonSet", data: storagePatch("{spec: {replicas: 2}}"), want: []result{deny(OverridePathNotAllowed, p0+".spec.replicas")}},
		{name: "strategy on a DaemonSet", data: storagePatch("{spec: {strategy: {type: Recreate}}}"), want: []result{deny(OverridePathNotAllowed, p0+".spec.strategy")}},
		{name: "updateStrategy on a Deployment", data: machinaPatch("{spec: {updateStrategy: {type: OnDelete}}}"),
			want: []result{deny(OverridePathNotAllowed, p0+".spec.updateStrategy")}},
		{name: "template field", data: storagePatch("{spec: {template: {status: {}, other: 1}}}"),
			want: []result{deny(OverridePathNotAllowed, p0+".spec.template.other"), deny(OverridePathNotAllowed, p0+".spec.template.status")}},
		{name: "pod spec nodeName", data: podSpecPatch("nodeName: node-1"), want: []result{deny(OverridePathNotAllowed, ps0+".nodeName")}},
		{name: "ephemeralContainers", data: podSpecPatch("ephemeralContainers: [{name: debug}]"), want: []result{deny(OverridePathNotAllowed, ps0+".ephemeralContainers")}},
		{name: "container stdin and volumeDevices", data: runFields("stdin: true, volumeDevices: []"),
			want: []result{deny(OverridePathNotAllowed, c0+".stdin"), deny(OverridePathNotAllowed, c0+".volumeDevices")}},
		{name: "restartPolicy on a container", data: runFields("restartPolicy: Always"), want: []result{deny(OverridePathNotAllowed, c0+".restartPolicy")}},
		{name: "pod restartPolicy", data: podSpecPatch("restartPolicy: Never"), want: []result{deny(OverridePathNotAllowed, ps0+".restartPolicy")}},

		// Protected, at the paths they guard.
		{name: "apiVersion and kind", data: storagePatch("{apiVersion: v1, kind: ClusterRoleBinding}"),
			want: []result{deny(OverridePathProtected, p0+".apiVersion"), deny(OverridePathProtected, p0+".kind")}},
		{name: "metadata identity", data: storagePatch("{metadata: {name: a, namespace: b, ownerReferences: [], finalizers: [], resourceVersion: '1'}}"),
			want: []result{
				deny(OverridePathProtected, p0+".metadata.finalizers"),
				deny(OverridePathProtected, p0+".metadata.name"),
				deny(OverridePathProtected, p0+".metadata.namespace"),
				deny(OverridePathProtected, p0+".metadata.ownerReferences"),
				deny(OverridePathProtected, p0+".metadata.resourceVersion"),
			}},
		{name: "spec.selector", data: storagePatch("{spec: {selector: {matchLabels: {app: x}}}}"), want: []result{deny(OverridePathProtected, p0+".spec.selector")}},
		{name: "status", data: storagePatch("{status: {numberReady: 1}}"), want: []result{deny(OverridePathProtected, p0+".status")}},
		{name: "service account", data: podSpecPatch("serviceAccountName: admin, serviceAccount: admin"),
			want: []result{deny(OverridePathProtected, ps0+".serviceAccount"), deny(OverridePathProtected, ps0+".serviceAccountName")}},
		{name: "host namespaces", data: podSpecPatch("hostNetwork: false, hostPID: false, hostIPC: true"),
			want: []result{deny(OverridePathProtected, ps0+".hostIPC"), deny(OverridePathProtected, ps0+".hostNetwork"), deny(OverridePathProtected, ps0+".hostPID")}},
		{name: "template metadata name", data: storagePatch("{spec: {template: {metadata: {name: x}}}}"),
			want: []result{deny(OverridePathNotAllowed, p0+".spec.template.metadata.name")}},
		{name: "template status", data: storagePatch("{spec: {template: {spec: {status: x}}}}"),
			want: []result{deny(OverridePathNotAllowed, ps0+".status")}},

		// Positions, not names: inside permitted subtrees these are ordinary
		// fields (upstream accepts them).
		{name: "hostNetwork in a securityContext", data: runFields("securityContext: {hostNetwork: true}")},
		{name: "kind in affinity", data: podSpecPatch("affinity: {kind: x}")},
		{name: "apiVersion in a fieldRef", data: runFields("env: [{name: POD, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}]")},
		{name: "metadata.name and spec.selector in a volume claim template", data: podSpecPatch("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: " +
			"{metadata: {name: x, labels: {kind: a}}, spec: {selector: {matchLabels: {kind: a}}, accessModes: [ReadWriteOnce], " +
			"dataSourceRef: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: base}}}}}]")},
		{name: "serviceAccountName in a list entry", data: podSpecPatch("tolerations: [{serviceAccountName: x}]")},
		{name: "status in updateStrategy", data: storagePatch("{spec: {updateStrategy: {status: x}}}")},
		{name: "csi volumeAttributes keys are data", data: podSpecPatch("volumes: [{name: secrets, csi: {driver: secrets.example.com, " +
			"volumeAttributes: {kind: a, apiVersion: b, serviceAccountName: c, hostNetwork: d, status: e, selector: f}}}]")},
		{name: "flexVolume options keys are data", data: podSpecPatch("volumes: [{name: flex, flexVolume: {driver: example.com/flex, " +
			"options: {kind: a, name: b}}}]")},
		{name: "a null in csi volumeAttributes is at its key", data: podSpecPatch("volumes: [{name: s, csi: {driver: d, volumeAttributes: {kind: null}}}]"),
			want: []result{deny(OverrideNull, ps0+".volumes[0].csi.volumeAttributes[kind]")}},
		{name: "a directive in csi volumeAttributes", data: podSpecPatch("volumes: [{name: s, csi: {driver: d, volumeAttributes: {$patch: replace}}}]"),
			want: []result{deny(OverrideDirective, ps0+".volumes[0].csi.volumeAttributes[$patch]")}},

		// Reserved label and annotation keys.
		{name: "reserved labels", data: storagePatch("{metadata: {labels: {unbounded-cloud.io/site: a, net.unbounded-cloud.io/x: b, Unbounded-Cloud.io/y: c, " +
			"example.com/unbounded-cloud.io: d}}}"),
			want: []result{
				deny(OverrideReservedKey, p0+".metadata.labels[Unbounded-Cloud.io/y]"),
				deny(OverrideReservedKey, p0+".metadata.labels[net.unbounded-cloud.io/x]"),
				deny(OverrideReservedKey, p0+".metadata.labels[unbounded-cloud.io/site]"),
			}},
		{name: "reserved annotations", data: storagePatch("{metadata: {annotations: {unbounded-cloud.io/override-hash: x}}, " +
			"spec: {template: {metadata: {annotations: {unbounded-cloud.io/config-hash: y}, labels: {unbounded-cloud.io/site: z}}}}}"),
			want: []result{
				deny(OverrideReservedKey, p0+".metadata.annotations[unbounded-cloud.io/override-hash]"),
				deny(OverrideReservedKey, p0+".spec.template.metadata.annotations[unbounded-cloud.io/config-hash]"),
				deny(OverrideReservedKey, p0+".spec.template.metadata.labels[unbounded-cloud.io/site]"),
			}},
		{name: "reserved label in a volume claim template", data: podSpecPatch("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: " +
			"{metadata: {labels: {unbounded-cloud.io/site: a}}}}}]"),
			want: []result{deny(OverrideReservedKey, ps0+".volumes[0].ephemeral.volumeClaimTemplate.metadata.labels[unbounded-cloud.io/site]")}},

		// Directives, anywhere.
		{name: "$patch in a container", data: runFields("$patch: delete"), want: []result{deny(OverrideDirective, c0+".$patch")}},
		{name: "$patch replacing the pod spec", data: podSpecPatch("$patch: replace"), want: []result{deny(OverrideDirective, ps0+".$patch")}},
		{name: "$retainKeys", data: storagePatch("{spec: {updateStrategy: {$retainKeys: [type], type: OnDelete}}}"),
			want: []result{deny(OverrideDirective, p0+".spec.updateStrategy.$retainKeys")}},
		{name: "$setElementOrder", data: podSpecPatch("'$setElementOrder/containers': [{name: run}]"),
			want: []result{deny(OverrideDirective, ps0+"[$setElementOrder/containers]")}},
		{name: "$deleteFromPrimitiveList", data: runFields("'$deleteFromPrimitiveList/args': [--x]"),
			want: []result{deny(OverrideDirective, c0+"[$deleteFromPrimitiveList/args]")}},
		{name: "directive as a label key", data: storagePatch("{metadata: {labels: {$patch: delete}}}"),
			want: []result{deny(OverrideDirective, p0+".metadata.labels[$patch]")}},

		// Nulls, anywhere.
		{name: "null limit", data: runFields("resources: {limits: {memory: null}}"), want: []result{deny(OverrideNull, c0+".resources.limits[memory]")}},
		{name: "null image", data: runFields("image: ~"), want: []result{deny(OverrideNull, c0+".image")}},
		{name: "null label", data: storagePatch("{metadata: {labels: {team: }}}"), want: []result{deny(OverrideNull, p0+".metadata.labels[team]")}},
		{name: "null list entry", data: podSpecPatch("tolerations: [null]"), want: []result{deny(OverrideNull, ps0+".tolerations[0]")}},
		{name: "null spec", data: storagePatch("{spec: }"), want: []result{deny(OverrideNull, p0+".spec")}},
		{name: "null tagged", data: runFields("workingDir: !!null ''"), want: []result{deny(OverrideNull, c0+".workingDir")}},

		// Merge keys of merged lists.
		{name: "container without a name", data: podSpecPatch("containers: [{image: x}]"), want: []result{deny(OverrideListKeyInvalid, ps0+".containers[0]")}},
		{name: "container name empty or a number", data: podSpecPatch("containers: [{name: ''}, {name: 5}]"),
			want: []result{deny(OverrideListKeyInvalid, ps0+".containers[0].name"), deny(OverrideListKeyInvalid, ps0+".containers[1].name")}},
		{name: "init container without a name", data: podSpecPatch("initContainers: [{restartPolicy: Always}]"),
			want: []result{deny(OverrideListKeyInvalid, ps0+".initContainers[0]")}},
		{name: "env without a name", data: runFields("env: [{value: x}]"), want: []result{deny(OverrideListKeyInvalid, c0+".env[0]")}},
		{name: "mount without a mountPath", data: runFields("volumeMounts: [{name: data}]"), want: []result{deny(OverrideListKeyInvalid, c0+".volumeMounts[0]")}},
		{name: "port not a number", data: runFields("ports: [{containerPort: http}]"), want: []result{deny(OverrideListKeyInvalid, c0+".ports[0].containerPort")}},
		{name: "volume without a name", data: podSpecPatch("volumes: [{emptyDir: {}}]"), want: []result{deny(OverrideListKeyInvalid, ps0+".volumes[0]")}},
		{name: "pull secret without a name", data: podSpecPatch("imagePullSecrets: [{}]"), want: []result{deny(OverrideListKeyInvalid, ps0+".imagePullSecrets[0]")}},
		{name: "spread constraint without a topologyKey", data: podSpecPatch("topologySpreadConstraints: [{maxSkew: 1}]"),
			want: []result{deny(OverrideListKeyInvalid, ps0+".topologySpreadConstraints[0]")}},

		// Types.
		{name: "containers a mapping", data: podSpecPatch("containers: {name: run}"), want: []result{deny(OverrideTypeInvalid, ps0+".containers")}},
		{name: "container a string", data: podSpecPatch("containers: [run]"), want: []result{deny(OverrideTypeInvalid, ps0+".containers[0]")}},
		{name: "nodeSelector a list", data: podSpecPatch("nodeSelector: [a]"), want: []result{deny(OverrideTypeInvalid, ps0+".nodeSelector")}},
		{name: "resources a list", data: runFields("resources: []"), want: []result{deny(OverrideTypeInvalid, c0+".resources")}},
		{name: "args a string", data: runFields("args: --verbose"), want: []result{deny(OverrideTypeInvalid, c0+".args")}},
		{name: "args entry a mapping", data: runFields("args: [{a: b}]"),
			want: []result{warn(OverrideArgsReplaced, c0+".args"), deny(OverrideTypeInvalid, c0+".args[0]")}},
		{name: "image a list", data: runFields("image: [a]"), want: []result{deny(OverrideTypeInvalid, c0+".image")}},
		{name: "replicas a mapping", data: machinaPatch("{spec: {replicas: {a: 1}}}"), want: []result{deny(OverrideTypeInvalid, p0+".spec.replicas")}},
		{name: "label values", data: storagePatch("{metadata: {labels: {a: 1, b: true, c: [x], d: 'ok'}}}"),
			want: []result{
				deny(OverrideTypeInvalid, p0+".metadata.labels[a]"),
				deny(OverrideTypeInvalid, p0+".metadata.labels[b]"),
				deny(OverrideTypeInvalid, p0+".metadata.labels[c]"),
			}},
		{name: "nodeSelector timestamp", data: podSpecPatch("nodeSelector: {since: 2026-08-11}"), want: []result{deny(OverrideTypeInvalid, ps0+".nodeSelector[since]")}},
		{name: "timestamp in an env value", data: runFields("env: [{name: SINCE, value: 2026-08-11}]"), want: []result{deny(OverrideTypeInvalid, c0+".env[0].value")}},
		{name: "infinity", data: runFields("resources: {limits: {cpu: .inf}}"), want: []result{deny(OverrideTypeInvalid, c0+".resources.limits[cpu]")}},
		{name: "binary and custom tags", data: runFields("env: [{name: A, value: !!binary aGk=}, {name: B, value: !custom x}]"),
			want: []result{deny(OverrideTypeInvalid, c0+".env[0].value"), deny(OverrideTypeInvalid, c0+".env[1].value")}},
		{name: "patch is a workload", data: storagePatch("{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: storage}, " +
			"spec: {selector: {matchLabels: {app: storage}}, template: {spec: {containers: [{name: run, image: x}]}}}, status: {}}"),
			want: []result{
				deny(OverridePathProtected, p0+".apiVersion"),
				deny(OverridePathProtected, p0+".kind"),
				deny(OverridePathProtected, p0+".metadata.name"),
				deny(OverridePathProtected, p0+".spec.selector"),
				warn(OverrideImagePinned, c0+".image"),
				deny(OverridePathProtected, p0+".status"),
			}},
	})
}
