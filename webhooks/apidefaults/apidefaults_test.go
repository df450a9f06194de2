package apidefaults

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func object(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestPreAdmission pins the defaults of each kind gatehouse intercepts, as
// whole objects. The e2e suite proves the same function equal to a real API
// server's on the whole corpus (e2e/apidefaults_test.go).
func TestPreAdmission(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"pod: defaults and the deprecated serviceAccount", `
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {pod.beta.kubernetes.io/init-containers: "[]", keep: "1"}}
spec:
  serviceAccount: op
  hostNetwork: true
  terminationGracePeriodSeconds: -5
  containers:
  - name: c
    image: registry.example/app@sha256:0000000000000000000000000000000000000000000000000000000000000000
    ports: [{containerPort: 8080}]
    resources: {limits: {cpu: "0.0001", memory: 1Gi}}
    env: [{name: NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    livenessProbe: {httpGet: {port: 80}}
    readinessProbe: {grpc: {port: 81}}
  volumes:
  - name: e
  - name: s
    secret: {secretName: s}
  - name: t
    projected: {sources: [{serviceAccountToken: {path: token}}]}
  - name: h
    hostPath: {path: /x}
  - name: v
    ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}}}
`, `
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {keep: "1"}}
spec:
  serviceAccount: op
  serviceAccountName: op
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  schedulerName: default-scheduler
  enableServiceLinks: true
  securityContext: {}
  containers:
  - name: c
    image: registry.example/app@sha256:0000000000000000000000000000000000000000000000000000000000000000
    imagePullPolicy: IfNotPresent
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    ports: [{containerPort: 8080, hostPort: 8080, protocol: TCP}]
    resources: {limits: {cpu: 1m, memory: 1Gi}, requests: {cpu: 1m, memory: 1Gi}}
    env: [{name: NAME, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}]
    livenessProbe: {httpGet: {path: /, port: 80, scheme: HTTP}, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3}
    readinessProbe: {grpc: {port: 81, service: ""}, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3}
  volumes:
  - name: e
    emptyDir: {}
  - name: s
    secret: {secretName: s, defaultMode: 420}
  - name: t
    projected: {defaultMode: 420, sources: [{serviceAccountToken: {path: token, expirationSeconds: 3600}}]}
  - name: h
    hostPath: {path: /x, type: ""}
  - name: v
    ephemeral: {volumeClaimTemplate: {metadata: {}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}, volumeMode: Filesystem}}}
status: {}
`},
		{"serviceAccountName wins over serviceAccount", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {serviceAccountName: a, serviceAccount: b, containers: [{name: c, image: "i:latest"}]}
`, `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  serviceAccountName: a
  serviceAccount: a
  containers: [{name: c, image: "i:latest", imagePullPolicy: Always, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}]
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  terminationGracePeriodSeconds: 30
status: {}
`},
		{"statefulset: claim templates, strategy, policies", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  selector: {matchLabels: {a: b}}
  serviceName: s
  template: {metadata: {labels: {a: b}}, spec: {serviceAccount: x, containers: [{name: c, image: i}]}}
  volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]
`, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  replicas: 1
  revisionHistoryLimit: 10
  podManagementPolicy: OrderedReady
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  selector: {matchLabels: {a: b}}
  serviceName: s
  template:
    metadata: {labels: {a: b}}
    spec:
      serviceAccount: x
      serviceAccountName: x
      containers: [{name: c, image: i, imagePullPolicy: Always, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}]
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
  volumeClaimTemplates:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: d}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Filesystem}
    status: {phase: Pending}
status: {availableReplicas: 0, replicas: 0}
`},
		{"cronjob: job template and pod failure policy", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]}
      template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}
`, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Allow
  suspend: false
  successfulJobsHistoryLimit: 3
  failedJobsHistoryLimit: 1
  jobTemplate:
    metadata: {}
    spec:
      podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget, status: "True"}]}]}
      template:
        metadata: {}
        spec:
          restartPolicy: Never
          containers: [{name: c, image: i, imagePullPolicy: Always, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}]
          dnsPolicy: ClusterFirst
          schedulerName: default-scheduler
          securityContext: {}
          terminationGracePeriodSeconds: 30
status: {}
`},
		{"namespace gets its name label", `
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
`, `
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {kubernetes.io/metadata.name: team-a}}
spec: {}
status: {phase: Active}
`},
		{"a custom resource is untouched", `
apiVersion: hdfs.kubedoop.dev/v1alpha1
kind: HdfsCluster
metadata: {name: h}
spec: {anything: [1, "x"], unknown: true}
`, `
apiVersion: hdfs.kubedoop.dev/v1alpha1
kind: HdfsCluster
metadata: {name: h}
spec: {anything: [1, "x"], unknown: true}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PreAdmission(object(t, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := normalized(t, object(t, tc.want)); !reflect.DeepEqual(want, normalized(t, got)) {
				wantYAML, _ := yaml.Marshal(want)
				gotYAML, _ := yaml.Marshal(got)
				t.Errorf("want:\n%s\ngot:\n%s", wantYAML, gotYAML)
			}
			again, err := PreAdmission(got)
			if err != nil || !reflect.DeepEqual(normalized(t, got), normalized(t, again)) {
				t.Errorf("not idempotent: %v", err)
			}
		})
	}
}

func normalized(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPreAdmissionRefuses: what the API server refuses before admission is
// an error that names the field and never the value.
func TestPreAdmissionRefuses(t *testing.T) {
	const marker = "MARKER-apidefaults"
	cases := []struct{ name, in, want string }{
		{"a list given as a string", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: "` + marker + `"}}`,
			"not a valid Pod: spec.containers is a string where the API expects []v1.Container"},
		{"a number where a string belongs", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: 12345678}]}}`,
			"not a valid Pod: spec.containers.name is a number where the API expects string"},
		{"an integer given as a fraction", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 1.5}}`,
			"not a valid Deployment: spec.replicas is a number where the API expects int32"},
		{"a field the type does not know", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {serviceAcountName: x, containers: []}}`,
			`not a valid Pod: unknown field "spec.serviceAcountName"`},
		{"a field of another case (the server's decoder is case-sensitive)", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {ServiceAccountName: x}}`,
			`not a valid Pod: unknown field "spec.ServiceAccountName"`},
		{"a quantity that does not parse", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: p}, spec: {resources: {requests: {storage: "` + marker + `"}}}}`,
			"not a valid PersistentVolumeClaim: a field does not decode into its Go type"},
		{"a time that does not parse", `{apiVersion: v1, kind: Pod, metadata: {name: p, creationTimestamp: "` + marker + `"}}`,
			"not a valid Pod: a field does not decode into its Go type"},
		{"a DaemonSet template generation that is not an integer", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d, annotations: {deprecated.daemonset.template.generation: "` + marker + `"}}}`,
			"not a valid DaemonSet: annotation deprecated.daemonset.template.generation must be an integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PreAdmission(object(t, tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q...", err, tc.want)
			}
			if strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), "12345678") || strings.Contains(err.Error(), "1.5") {
				t.Errorf("the error repeats a value: %v", err)
			}
		})
	}
}

func TestImagePullPolicy(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.27": "IfNotPresent", "registry.example:5000/team/app": "Always",
		"registry.example:5000/team/app:v1": "IfNotPresent", "app" + digest: "IfNotPresent", "app:latest" + digest: "Always",
		"": "IfNotPresent", "Upper/case": "Always", "upper/Case": "IfNotPresent", "app@sha256:short": "IfNotPresent",
	} {
		if got := string(pullPolicyFor(image)); got != want {
			t.Errorf("%q: %s, want %s", image, got, want)
		}
	}
}
