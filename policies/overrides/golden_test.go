package overrides

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// goldenCase is one fixture: the data of an overrides ConfigMap.
type goldenCase struct {
	name   string
	expect golden.Outcome
	data   map[string]string
}

// threeFindings holds a protected field, a $patch directive and a null in
// one ConfigMap.
const threeFindings = apiLine + `overrides:
- component: storage
  kind: DaemonSet
  patch:
    spec:
      template:
        spec:
          hostNetwork: false
          priorityClassName: null
          containers:
          - name: run
            $patch: delete
`

func goldenCases() []goldenCase {
	pass, fail := golden.Pass, golden.Fail
	return []goldenCase{
		// Whole ConfigMaps.
		{"valid-every-component", pass, one(render(validDocument()))},
		{"valid-several-keys", pass, map[string]string{
			"storage.yaml": render(document(storageEntry(resourcesPatch()))),
			"net.yaml":     render(document(entryOf("net", kindDeployment, workloadSpec(map[string]any{"replicas": 2})))),
		}},
		{"valid-no-overrides", pass, one(apiLine + "overrides: []\n")},
		{"empty-key-ignored", pass, map[string]string{"empty.yaml": "", "storage.yaml": render(document(storageEntry(resourcesPatch())))}},
		{"aliases-expanded", pass, one(apiLine + "overrides:\n" +
			"- {component: net, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: &tol [{operator: Exists}]}}}}}\n" +
			"- {component: net, kind: Deployment, patch: {spec: {template: {spec: {tolerations: *tol}}}}}\n")},
		{"protected-directive-null", fail, one(threeFindings)},

		// Document.
		{"document-syntax-error", fail, one(apiLine + "overrides:\n- component: storage\n   kind: DaemonSet\n")},
		{"document-comments-only", fail, one("# overrides go here\n")},
		{"document-multiple", fail, one(render(document(storageEntry(resourcesPatch()))) + "---\n" + render(document()))},
		{"document-merge-key", fail, one(apiLine + "defaults: &d {component: storage, kind: DaemonSet}\noverrides:\n- <<: *d\n  extraArgs: {run: [-v]}\n")},
		{"document-duplicate-key", fail, one(apiLine + "overrides:\n- component: storage\n  kind: DaemonSet\n  extraArgs: {run: [-v]}\n  extraArgs: {run: [-q]}\n")},
		{"document-unknown-field", fail, overrides(withField(storageEntry(resourcesPatch()), "priority", 1))},
		{"document-apiversion-missing", fail, one("overrides:\n- {component: storage, kind: DaemonSet, extraArgs: {run: [-v]}}\n")},
		{"document-apiversion-unknown", fail, one("apiVersion: overrides.unbounded-cloud.io/v1\noverrides: []\n")},

		// Entries.
		{"entry-component-unknown", fail, overrides(entryOf("racers", kindDaemonSet, resourcesPatch()))},
		// The components of later upstream tables (components.go): racer's
		// control plane and per-Site dataplane (racer_test.go @ 605ff923
		// TestRacerKindsAndScope has entries of this shape), racer as one
		// Deployment (e2e/racer/rotation_test.go @ 14074b90 applies one),
		// token-refresher.
		{"entry-racer-controlplane", pass, patchOf("racer-controlplane", kindDeployment, "{spec: {revisionHistoryLimit: 4}}")},
		{"entry-racer-controlplane-sites", fail, sitesPatch("racer-controlplane", kindDeployment, "[rack-west]",
			"{spec: {revisionHistoryLimit: 4}}")},
		{"entry-racer-controlplane-daemonset", fail, patchOf("racer-controlplane", kindDaemonSet, "{spec: {minReadySeconds: 3}}")},
		{"entry-racer-dataplane", pass, patchOf("racer-dataplane", kindDaemonSet, "{spec: {minReadySeconds: 3}}")},
		{"entry-racer-dataplane-sites", pass, sitesPatch("racer-dataplane", kindDaemonSet, "[rack-west, rack-east]",
			"{spec: {template: {metadata: {annotations: {example.com/rack: 'true'}}}}}")},
		{"entry-racer-dataplane-deployment", fail, patchOf("racer-dataplane", kindDeployment, "{spec: {minReadySeconds: 3}}")},
		{"entry-racer-identity-label", fail, patchOf("racer-dataplane", kindDaemonSet,
			"{spec: {template: {metadata: {labels: {racer.unbounded-cloud.io/dataplane: other}}}}}")},
		{"entry-racer-deployment", pass, patchOf("racer", kindDeployment,
			"{spec: {template: {spec: {containers: [{name: controller, env: [{name: EXAMPLE_TUNING, value: '5'}]}]}}}}")},
		{"entry-token-refresher", pass, patchOf("token-refresher", kindDeployment, "{spec: {replicas: 2}}")},
		{"entry-kind-mismatch", fail, overrides(entryOf("machina", kindDaemonSet, resourcesPatch()))},
		{"entry-net-both-kinds", pass, overrides(
			entryOf("net", kindDaemonSet, workloadSpec(map[string]any{"minReadySeconds": 5})),
			entryOf("net", kindDeployment, workloadSpec(map[string]any{"replicas": 3})),
		)},
		{"entry-sites", pass, overrides(withField(storageEntry(resourcesPatch()), "sites", []any{"edge-west", "edge-east"}))},
		{"entry-sites-empty", fail, overrides(withField(storageEntry(resourcesPatch()), "sites", []any{}))},
		{"entry-sites-on-singleton", fail, overrides(withField(entryOf("gantry", kindDaemonSet, workloadSpec(map[string]any{"minReadySeconds": 5})),
			"sites", []any{"edge-west"}))},
		{"entry-changes-nothing", fail, overrides(withField(storageEntry(nil), "sites", []any{"edge-west"}))},
		{"entry-extraargs", pass, overrides(withField(storageEntry(nil), "extraArgs", map[string]any{"run": []any{"--log-level=debug"}}))},
		{"entry-extraargs-unknown-container", fail, overrides(withField(storageEntry(nil), "extraArgs", map[string]any{"runner": []any{"-v"}}))},
		{"entry-sidecar", pass, overrides(withField(storageEntry(containerPatch("containers", "shipper", map[string]any{
			"image": "registry.example/shipper:1.0",
		})), "addContainers", []any{"shipper"}))},
		{"entry-native-sidecar", pass, overrides(withField(storageEntry(containerPatch("initContainers", "proxy", map[string]any{
			"image": "registry.example/proxy:1.0", "restartPolicy": "Always",
		})), "addInitContainers", []any{"proxy"}))},
		{"entry-addition-undefined", fail, overrides(withField(storageEntry(resourcesPatch()), "addContainers", []any{"shipper"}))},
		{"entry-addition-exists", fail, overrides(withField(storageEntry(runPatch(map[string]any{"image": "registry.example/run:2"})),
			"addContainers", []any{"run"}))},
		{"entry-container-unknown", fail, podSpecPatch("containers: [{name: runn, resources: {limits: {memory: 1Gi}}}]")},
		{"entry-resolution-skipped", pass, overrides(entryOf("gantry", kindDaemonSet, containerPatch("containers", "gantry", map[string]any{
			"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
		})))},

		// Workload metadata.
		{"metadata-labels", pass, storagePatch("{metadata: {labels: {team: platform}}}")},
		{"metadata-labels-reserved", fail, storagePatch("{metadata: {labels: {unbounded-cloud.io/site: edge-west}}}")},
		{"metadata-annotations", pass, storagePatch("{metadata: {annotations: {example.com/owner: platform}}}")},
		{"metadata-annotations-reserved", fail, storagePatch("{metadata: {annotations: {unbounded-cloud.io/override-hash: x}}}")},
		{"metadata-generatename", fail, storagePatch("{metadata: {generateName: storage-}}")},

		// Workload spec.
		{"spec-replicas", pass, machinaPatch("{spec: {replicas: 3}}")},
		{"spec-replicas-daemonset", fail, storagePatch("{spec: {replicas: 3}}")},
		{"spec-strategy", pass, machinaPatch("{spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}}}")},
		{"spec-strategy-daemonset", fail, storagePatch("{spec: {strategy: {type: Recreate}}}")},
		{"spec-updatestrategy", pass, storagePatch("{spec: {updateStrategy: {rollingUpdate: {maxUnavailable: '20%'}}}}")},
		{"spec-updatestrategy-deployment", fail, machinaPatch("{spec: {updateStrategy: {type: OnDelete}}}")},
		{"spec-minreadyseconds", pass, storagePatch("{spec: {minReadySeconds: 10}}")},
		{"spec-minreadyseconds-mapping", fail, storagePatch("{spec: {minReadySeconds: {seconds: 10}}}")},
		{"spec-revisionhistorylimit", pass, machinaPatch("{spec: {revisionHistoryLimit: 3}}")},
		{"spec-revisionhistorylimit-null", fail, machinaPatch("{spec: {revisionHistoryLimit: null}}")},
		{"spec-paused", fail, machinaPatch("{spec: {paused: true}}")},

		// Pod template metadata.
		{"template-labels", pass, storagePatch("{spec: {template: {metadata: {labels: {tier: node}}}}}")},
		{"template-labels-selector", fail, storagePatch("{spec: {template: {metadata: {labels: {app: storage-v2}}}}}")},
		{"template-labels-not-string", fail, storagePatch("{spec: {template: {metadata: {labels: {tier: 1}}}}}")},
		{"template-annotations", pass, storagePatch("{spec: {template: {metadata: {annotations: {prometheus.io/scrape: 'true'}}}}}")},
		{"template-annotations-reserved", fail, storagePatch("{spec: {template: {metadata: {annotations: {unbounded-cloud.io/config-hash: x}}}}}")},

		// Containers.
		{"container-image", pass, runFields("image: registry.example/run:2.0")},
		{"container-image-null", fail, runFields("image: null")},
		{"container-imagepullpolicy", pass, runFields("imagePullPolicy: Always")},
		{"container-imagepullpolicy-list", fail, runFields("imagePullPolicy: [Always]")},
		{"container-args", pass, runFields("args: [--log-level=debug]")},
		{"container-args-string", fail, runFields("args: --log-level=debug")},
		{"container-command", pass, runFields("command: [/bin/run]")},
		{"container-command-directive", fail, runFields("'$deleteFromPrimitiveList/command': [/bin/run]")},
		{"container-env", pass, runFields("env: [{name: LOG_LEVEL, value: debug}]")},
		{"container-env-no-name", fail, runFields("env: [{value: debug}]")},
		{"container-envfrom", pass, runFields("envFrom: [{configMapRef: {name: storage-extra}}]")},
		{"container-envfrom-mapping", fail, runFields("envFrom: {configMapRef: {name: storage-extra}}")},
		{"container-resources", pass, runFields("resources: {limits: {memory: 1Gi}, requests: {cpu: 100m}}")},
		{"container-resources-null", fail, runFields("resources: {limits: {memory: null}}")},
		{"container-volumemounts", pass, runFields("volumeMounts: [{name: scratch, mountPath: /scratch}]")},
		{"container-volumemounts-no-mountpath", fail, runFields("volumeMounts: [{name: scratch}]")},
		{"container-securitycontext", pass, runFields("securityContext: {readOnlyRootFilesystem: true}")},
		{"container-probes", pass, runFields("livenessProbe: {httpGet: {path: /healthz, port: 8080}}, " +
			"readinessProbe: {periodSeconds: 5}, startupProbe: {failureThreshold: 30}")},
		{"container-probes-list", fail, runFields("livenessProbe: [{httpGet: {path: /healthz}}]")},
		{"container-readinessprobe-null", fail, runFields("readinessProbe: {periodSeconds: null}")},
		{"container-startupprobe-directive", fail, runFields("startupProbe: {$patch: delete}")},
		{"container-lifecycle", pass, runFields("lifecycle: {preStop: {sleep: {seconds: 5}}}")},
		{"container-lifecycle-directive", fail, runFields("lifecycle: {$patch: replace, preStop: {sleep: {seconds: 5}}}")},
		{"container-ports", pass, runFields("ports: [{name: metrics, containerPort: 9090}]")},
		{"container-ports-named-port", fail, runFields("ports: [{containerPort: metrics}]")},
		{"container-termination-workingdir", pass, runFields("terminationMessagePath: /dev/termination-log, " +
			"terminationMessagePolicy: FallbackToLogsOnError, workingDir: /var/lib/storage")},
		{"container-workingdir-mapping", fail, runFields("workingDir: {path: /var/lib/storage}")},
		{"container-terminationmessagepath-list", fail, runFields("terminationMessagePath: [/dev/termination-log]")},
		{"container-terminationmessagepolicy-null", fail, runFields("terminationMessagePolicy: null")},
		{"container-restartpolicy", fail, runFields("restartPolicy: Always")},
		{"container-stdin", fail, runFields("stdin: true")},
		{"container-no-name", fail, podSpecPatch("containers: [{resources: {limits: {memory: 1Gi}}}]")},
		{"initcontainer-restartpolicy", pass, initFields("restartPolicy: Always")},
		{"initcontainer-resources", pass, initFields("resources: {limits: {cpu: 100m}}")},
		{"initcontainer-args", pass, initFields("args: [--chown]")},
		{"initcontainer-no-name", fail, podSpecPatch("initContainers: [{restartPolicy: Always}]")},

		// Pod spec.
		{"volumes", pass, podSpecPatch("volumes: [{name: scratch, emptyDir: {}}]")},
		{"volumes-redefined", fail, podSpecPatch("volumes: [{name: data, hostPath: {path: /etc/kubernetes}}]")},
		{"volumes-removed", fail, podSpecPatch("volumes: [{name: config, $patch: delete}]")},
		{"imagepullsecrets", pass, podSpecPatch("imagePullSecrets: [{name: registry}]")},
		{"imagepullsecrets-no-name", fail, podSpecPatch("imagePullSecrets: [{}]")},
		{"nodeselector", pass, podSpecPatch("nodeSelector: {kubernetes.io/arch: amd64}")},
		{"nodeselector-not-string", fail, podSpecPatch("nodeSelector: {storage: true}")},
		{"tolerations", pass, podSpecPatch("tolerations: [{key: dedicated, operator: Equal, value: storage, effect: NoSchedule}]")},
		{"tolerations-null", fail, podSpecPatch("tolerations: [~]")},
		{"affinity", pass, podSpecPatch("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " +
			"{nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]}}}")},
		{"topologyspreadconstraints", pass, podSpecPatch("topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, " +
			"whenUnsatisfiable: ScheduleAnyway}]")},
		{"topologyspreadconstraints-no-key", fail, podSpecPatch("topologySpreadConstraints: [{maxSkew: 1}]")},
		{"priorityclassname", pass, podSpecPatch("priorityClassName: system-node-critical")},
		{"priorityclassname-list", fail, podSpecPatch("priorityClassName: [system-node-critical]")},
		{"dnspolicy", pass, podSpecPatch("dnsPolicy: ClusterFirstWithHostNet")},
		{"dnspolicy-null", fail, podSpecPatch("dnsPolicy: ~")},
		{"dnsconfig", pass, podSpecPatch("dnsConfig: {options: [{name: ndots, value: '2'}]}")},
		{"dnsconfig-directive", fail, podSpecPatch("dnsConfig: {$retainKeys: [options]}")},
		{"terminationgraceperiodseconds", pass, podSpecPatch("terminationGracePeriodSeconds: 60")},
		{"terminationgraceperiodseconds-mapping", fail, podSpecPatch("terminationGracePeriodSeconds: {seconds: 60}")},
		{"runtimeclassname", pass, podSpecPatch("runtimeClassName: kata")},
		{"runtimeclassname-null", fail, podSpecPatch("runtimeClassName: null")},
		{"schedulername", pass, podSpecPatch("schedulerName: custom-scheduler")},
		{"schedulername-list", fail, podSpecPatch("schedulerName: [custom-scheduler]")},
		{"pod-securitycontext", pass, podSpecPatch("securityContext: {fsGroup: 2000}")},
		{"pod-nodename", fail, podSpecPatch("nodeName: node-1")},

		// Always rejected.
		{"rejected-apiversion", fail, storagePatch("{apiVersion: rbac.authorization.k8s.io/v1}")},
		{"rejected-kind", fail, storagePatch("{kind: ClusterRoleBinding}")},
		{"rejected-metadata-name", fail, storagePatch("{metadata: {name: storage-edge}}")},
		{"rejected-metadata-namespace", fail, storagePatch("{metadata: {namespace: kube-system}}")},
		{"rejected-metadata-ownerreferences", fail, storagePatch("{metadata: {ownerReferences: []}}")},
		{"rejected-metadata-finalizers", fail, storagePatch("{metadata: {finalizers: []}}")},
		{"rejected-metadata-resourceversion", fail, storagePatch("{metadata: {resourceVersion: '1'}}")},
		{"rejected-spec-selector", fail, storagePatch("{spec: {selector: {matchLabels: {app: storage}}}}")},
		{"rejected-serviceaccountname", fail, podSpecPatch("serviceAccountName: cluster-admin")},
		{"rejected-serviceaccount", fail, podSpecPatch("serviceAccount: cluster-admin")},
		{"rejected-hostnetwork", fail, podSpecPatch("hostNetwork: false")},
		{"rejected-hostpid", fail, podSpecPatch("hostPID: false")},
		{"rejected-hostipc", fail, podSpecPatch("hostIPC: true")},
		{"rejected-status", fail, storagePatch("{status: {numberReady: 1}}")},
		{"rejected-reserved-label", fail, storagePatch("{spec: {template: {metadata: {labels: {unbounded-cloud.io/site: edge-east}}}}}")},
		{"rejected-reserved-annotation-subdomain", fail, storagePatch("{metadata: {annotations: {net.unbounded-cloud.io/config: x}}}")},
		{"rejected-directive-patch-delete", fail, podSpecPatch("containers: [{name: run, $patch: delete}]")},
		{"rejected-directive-retainkeys", fail, storagePatch("{spec: {updateStrategy: {$retainKeys: [type], type: OnDelete}}}")},
		{"rejected-directive-setelementorder", fail, podSpecPatch("'$setElementOrder/containers': [{name: run}]")},
		{"rejected-null", fail, podSpecPatch("nodeSelector: {kubernetes.io/arch: null}")},
		{"near-label-named-like-a-field", pass, storagePatch("{metadata: {labels: {kind: storage, status: ok, name: x}}}")},
		{"near-reserved-lookalike", pass, storagePatch("{metadata: {annotations: {example.com/unbounded-cloud.io: x, unbounded-cloud.io.example.com/a: y}}}")},
		{"near-nodeselector-reserved-prefix", pass, overrides(withField(storageEntry(templateSpec(map[string]any{
			"nodeSelector": map[string]any{"unbounded-cloud.io/site": "edge-west"},
		})), "sites", []any{"edge-west"}))},
		{"near-matchlabels-named-like-a-field", pass, podSpecPatch("affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " +
			"[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {kind: storage}}}]}}")},
		{"near-dollar-in-values", pass, runFields("env: [{name: HOME_DIR, value: $HOME}], workingDir: $(HOME)")},
		{"near-null-as-string", pass, runFields("env: [{name: A, value: 'null'}, {name: B, value: '~'}]")},
		{"near-field-name-as-value", pass, runFields("env: [{name: hostNetwork, value: serviceAccountName}]")},
		// Limits: each denies with its own code and never ratchets.
		{"limit-document-too-deep", fail, one(apiLine + "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {updateStrategy: " +
			strings.Repeat("{a: ", 120) + "1" + strings.Repeat("}", 120) + "}}}\n")},
		{"limit-parser-depth", fail, one(apiLine + "overrides: " + strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + "\n")},
		{"limit-aliases-too-large", fail, one(aliasBomb())},
		// The engine's parse limits (parse.go @ 9064e390), a step past each;
		// TestEngineLimitBoundaries has both sides of every one.
		{"limit-engine-depth", fail, one(apiLine + "overrides:\n- {component: net, kind: DaemonSet, patch: {spec: {updateStrategy: " +
			strings.Repeat("{a: ", 27) + "1" + strings.Repeat("}", 27) + "}}}\n")},
		{"limit-engine-mapping-keys", fail, one(annotationsDocument(1025))},
		{"limit-engine-entries", fail, one(entriesDocument(257))},
		{"limit-engine-entries-at-limit", pass, one(entriesDocument(256))},

		// Per-Site resolution: each Site's workload on its own.
		{"resolve-site-container", pass, sitesPatch("storage", kindDaemonSet, "[edge-east]",
			"{spec: {template: {spec: {containers: [{name: cache, resources: {limits: {memory: 1Gi}}}]}}}}")},
		{"resolve-site-container-elsewhere", fail, sitesPatch("storage", kindDaemonSet, "[edge-west]",
			"{spec: {template: {spec: {containers: [{name: cache, resources: {limits: {memory: 1Gi}}}]}}}}")},
		{"resolve-site-selector-label", fail, sitesPatch("metalman", kindDeployment, "[edge-west]",
			"{spec: {template: {metadata: {labels: {site: edge-east}}}}}")},
		{"resolve-site-selector-label-own", pass, sitesPatch("metalman", kindDeployment, "[edge-east]",
			"{spec: {template: {metadata: {labels: {site: edge-east}}}}}")},
		{"resolve-nodeselector-owned", fail, patchOf("net", kindDaemonSet, "{spec: {template: {spec: {nodeSelector: {kubernetes.io/os: windows}}}}}")},
		{"resolve-mount-repointed", fail, runFields("volumeMounts: [{name: scratch, mountPath: /var/lib/storage}]")},
		// Each container list against its own (resolve.go @ 9d4082e7
		// checkContainerNames).
		{"resolve-initcontainer-named-like-container", fail, podSpecPatch("initContainers: [{name: run, resources: {limits: {cpu: 100m}}}]")},
		{"resolve-container-named-like-initcontainer", fail, podSpecPatch("containers: [{name: init-perms, resources: {limits: {cpu: 100m}}}]")},
		// Env vars merge on name onto the operator's.
		{"resolve-env-value-over-valuefrom", fail, runFields("env: [{name: NODE_NAME, value: node-a}]")},
		{"resolve-env-valuefrom-over-value", fail, runFields("env: [{name: STORAGE_ROOT, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]")},
		{"resolve-env-empty-value-over-valuefrom", pass, runFields("env: [{name: NODE_NAME, value: ''}]")},

		// What the engine refuses at apply time.
		{"apply-metalman-replicas", fail, patchOf("metalman", kindDeployment, "{spec: {replicas: 3}}")},
		{"apply-env-value-and-valuefrom", fail, runFields("env: [{name: NODE, value: a, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]")},
		{"apply-strategy-recreate-rollingupdate", fail, machinaPatch("{spec: {strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}}}")},
		{"apply-strategy-recreate", pass, machinaPatch("{spec: {strategy: {type: Recreate}}}")},
		{"apply-updatestrategy-ondelete-rollingupdate", fail, storagePatch("{spec: {updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}}}")},
		{"apply-strategy-across-entries", fail, one(apiLine + "overrides:\n" +
			"- {component: machina, kind: Deployment, patch: {spec: {strategy: {type: Recreate}}}}\n" +
			"- {component: machina, kind: Deployment, patch: {spec: {strategy: {rollingUpdate: {maxSurge: 1}}}}}\n")},
		{"apply-affinity-empty-terms", fail, podSpecPatch("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " +
			"{nodeSelectorTerms: []}}}")},
		// An empty term is accepted (validate.go @ 26f231b); two the engine
		// combines are not (affinity.go @ 54e7d309 combineTerms).
		{"apply-affinity-empty-term", pass, podSpecPatch("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " +
			"{nodeSelectorTerms: [{}]}}}")},
		{"apply-affinity-empty-terms-combined", fail, one(apiLine + "overrides:\n" +
			"- {component: net, kind: Deployment, patch: {spec: {template: {spec: {affinity: {nodeAffinity: " +
			"{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}}}}}}}\n" +
			"- {component: net, kind: Deployment, patch: {spec: {template: {spec: {affinity: {nodeAffinity: " +
			"{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: []}]}}}}}}}}\n")},
		{"conflict-env-value-and-valuefrom", fail, one(apiLine + "overrides:\n" +
			"- {component: machina, kind: Deployment, patch: {spec: {template: {spec: {containers: [{name: machina-controller, " +
			"env: [{name: EXAMPLE_LEVEL, value: debug}]}]}}}}}\n" +
			"- {component: machina, kind: Deployment, patch: {spec: {template: {spec: {containers: [{name: machina-controller, " +
			"env: [{name: EXAMPLE_LEVEL, valueFrom: {configMapKeyRef: {name: machina-tuning, key: level}}}]}]}}}}}\n")},
		{"apply-affinity-terms-product", fail, sitesPatch("storage", kindDaemonSet, "[edge-west]",
			"{spec: {template: {spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["+
				strings.Repeat("{matchExpressions: [{key: k, operator: Exists}]}, ", 65)+"]}}}}}}}")},
		{"conflict-entries", fail, one(apiLine + "overrides:\n" +
			"- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}}\n" +
			"- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 2Gi}}}]}}}}}\n")},
		{"conflict-keys", fail, map[string]string{
			"team-a.yaml": apiLine + "overrides:\n- {component: net, kind: DaemonSet, patch: {spec: {template: {spec: {nodeSelector: {disk: ssd}}}}}}\n",
			"team-b.yaml": apiLine + "overrides:\n- {component: net, kind: DaemonSet, patch: {spec: {template: {spec: {nodeSelector: {disk: hdd}}}}}}\n",
		}},
		{"conflict-in-one-entry", fail, runFields("env: [{name: LOG_LEVEL, value: debug}, {name: LOG_LEVEL, value: info}]")},
		{"conflict-extraargs", fail, one(apiLine + "overrides:\n" +
			"- {component: net, kind: DaemonSet, extraArgs: {node: [--log-level=debug]}}\n" +
			"- {component: net, kind: DaemonSet, extraArgs: {node: [--log-level=warn]}}\n")},
		{"near-conflict-other-sites", pass, one(apiLine + "overrides:\n" +
			"- {component: storage, kind: DaemonSet, sites: [edge-west], patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}}\n" +
			"- {component: storage, kind: DaemonSet, sites: [edge-east], patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 2Gi}}}]}}}}}\n")},
		{"near-conflict-same-value", pass, one(apiLine + "overrides:\n" +
			"- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}}\n" +
			"- {component: storage, kind: DaemonSet, patch: {metadata: {labels: {team: storage}}, spec: {template: {spec: {containers: [{name: run, resources: {limits: {memory: 1Gi}}}]}}}}}\n")},
		{"near-tolerations-combine", pass, one(apiLine + "overrides:\n" +
			"- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: [{key: a, operator: Exists}]}}}}}\n" +
			"- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {tolerations: [{key: b, operator: Exists}]}}}}}\n")},
		{"near-selector-label-restated", pass, storagePatch("{spec: {template: {metadata: {labels: {app: storage}}}}}")},
		{"near-operator-volume-name-only", pass, podSpecPatch("volumes: [{name: data}]")},

		// Positions, not names: fields named like a protected one elsewhere
		// are ordinary fields, and keys of free-form string maps are data.
		{"near-fieldref-apiversion", pass, runFields("env: [{name: POD, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}]")},
		{"near-datasourceref-kind", pass, podSpecPatch("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: " +
			"{accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, " +
			"dataSourceRef: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: base}}}}}]")},
		{"near-pvc-template-selector", pass, podSpecPatch("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: " +
			"{metadata: {labels: {tier: cache}}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, " +
			"selector: {matchLabels: {tier: cache}}}}}}]")},
		{"near-csi-volumeattributes-keys", pass, podSpecPatch("volumes: [{name: secrets, csi: {driver: secrets.example.com, " +
			"volumeAttributes: {kind: tls, apiVersion: v2, serviceAccountName: storage, hostNetwork: 'false', status: on, selector: all}}}]")},
		{"near-flexvolume-options-keys", pass, podSpecPatch("volumes: [{name: flex, flexVolume: {driver: example.com/flex, " +
			"options: {kind: block, name: data, namespace: storage}}}]")},
		{"near-securitycontext-hostnetwork-key", pass, runFields("securityContext: {readOnlyRootFilesystem: true, hostNetwork: true}")},
		{"near-affinity-kind-key", pass, podSpecPatch("affinity: {podAffinity: {kind: Deployment}}")},
	}
}

// evaluate validates the data of a fixture ConfigMap against typicalLive.
func evaluate(obj map[string]any) []policies.Finding {
	data := map[string]string{}
	if values, ok := fields.Map(obj, "data"); ok {
		for k, v := range values {
			if s, ok := v.(string); ok {
				data[k] = s
			}
		}
	}
	return Validate(anyTable, data, typicalLive())
}

func fixtures() []golden.Fixture {
	var out []golden.Fixture
	for _, c := range goldenCases() {
		out = append(out, golden.Fixture{Name: c.name, Expect: c.expect, Object: configMap(c.data)})
	}
	return out
}

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", fixtures(), evaluate)
}

// TestThreeFindings: a protected field, a directive and a null in one
// ConfigMap are three findings, each at its path.
func TestThreeFindings(t *testing.T) {
	got := results(evaluate(configMap(one(threeFindings))))
	want := []result{
		deny(OverrideDirective, c0+".$patch"),
		deny(OverridePathProtected, ps0+".hostNetwork"),
		deny(OverrideNull, ps0+".priorityClassName"),
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %v, want %v", got, want)
		}
	}
}
