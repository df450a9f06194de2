package overrides

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestNoPayloadInFindings plants a marker in the values of invalid documents
// (env values, arguments, images, commands, and every other value a finding
// is about) and in the text of malformed YAML, and proves that no finding's
// message or field path carries it (docs/contracts.md §0.3). Keys and container
// names may appear in paths and messages, so they carry no marker.
func TestNoPayloadInFindings(t *testing.T) {
	const marker = "MARKERovr4c2"
	inputs := []string{
		// Every entry field holding the marker.
		apiLine + `overrides:
- component: ` + marker + `
  kind: ` + marker + `
  sites: [` + marker + `, "", ` + marker + `]
  priority: ` + marker + `
  extraArgs: {run: [--token=` + marker + `], ghost: ["` + marker + `"], init-perms: "` + marker + `"}
  addContainers: [{name: x, image: ` + marker + `}]
`,
		// A patch drawing every patch finding, values holding the marker.
		apiLine + `overrides:
- component: storage
  kind: DaemonSet
  addContainers: [shipper]
  addInitContainers: [proxy]
  patch:
    apiVersion: ` + marker + `
    kind: ` + marker + `
    status: {phase: ` + marker + `}
    metadata:
      name: ` + marker + `
      labels: {unbounded-cloud.io/site: ` + marker + `, team: 1, owner: ` + marker + `}
      generateName: ` + marker + `
    spec:
      selector: {matchLabels: {app: ` + marker + `}}
      replicas: ` + marker + `
      strategy: {type: ` + marker + `}
      updateStrategy: {$retainKeys: [` + marker + `], type: ` + marker + `}
      template:
        metadata:
          labels: {app: ` + marker + `}
        spec:
          hostNetwork: ` + marker + `
          serviceAccountName: ` + marker + `
          nodeSelector: {since: 2026-01-01}
          priorityClassName: [` + marker + `]
          volumes:
          - name: data
            hostPath: {path: /` + marker + `}
          - emptyDir: {medium: ` + marker + `}
          containers:
          - name: run
            image: registry.example/` + marker + `:1.0
            args: [--password=` + marker + `]
            command: [/bin/` + marker + `]
            env:
            - {name: TOKEN, value: ` + marker + `}
            - {name: SINCE, value: 2026-01-01}
            - {name: BIN, value: !!binary ` + marker + `}
            - {value: ` + marker + `}
            ports: [{containerPort: ` + marker + `}]
            securityContext: {hostPID: ` + marker + `}
            stdin: ` + marker + `
            $patch: ` + marker + `
          - name: runn
            image: ` + marker + `
          - image: ` + marker + `
          - name: shipper
            image: registry.example/` + marker + `:1.0
            args: [` + marker + `]
          initContainers:
          - name: init-perms
            command: [` + marker + `]
            image: ` + marker + `
            restartPolicy: ` + marker + `
`,
		// Apply-time refusals and conflicts across entries and Sites,
		// values holding the marker.
		apiLine + `overrides:
- component: storage
  kind: DaemonSet
  patch:
    spec:
      updateStrategy: {type: ` + marker + `, rollingUpdate: {maxUnavailable: ` + marker + `}}
      template:
        metadata:
          labels: {unbounded-cloud.io/site: ` + marker + `}
        spec:
          nodeSelector: {unbounded-cloud.io/site: ` + marker + `, disk: ` + marker + `a}
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [` + marker + `, {}, {matchExpressions: ` + marker + `}]}
              preferredDuringSchedulingIgnoredDuringExecution: ` + marker + `
          containers:
          - name: run
            args: [` + marker + `1]
            env: [{name: A, value: ` + marker + `, valueFrom: {fieldRef: {fieldPath: ` + marker + `}}}, {name: A, value: ` + marker + `2}]
            volumeMounts: [{name: ` + marker + `, mountPath: /var/lib/storage}]
- component: storage
  kind: DaemonSet
  sites: [edge-west]
  extraArgs: {run: [` + marker + `]}
  patch:
    spec:
      updateStrategy: {type: OnDelete}
      template:
        spec:
          nodeSelector: {disk: ` + marker + `b}
          containers: [{name: run, args: [` + marker + `2]}]
- component: storage
  kind: DaemonSet
  extraArgs: {run: [` + marker + `3]}
- component: metalman
  kind: Deployment
  patch: {spec: {replicas: ` + marker + `, strategy: {type: Recreate, rollingUpdate: ` + marker + `}}}
`,
		// The document level.
		"apiVersion: " + marker + "\noverrides: []\n",
		"apiVersion: [" + marker + "]\n",
		apiLine + "overrides: " + marker + "\n",
		apiLine + "overrides: [" + marker + "]\n",
		apiLine + "defaults: &d {component: storage, kind: " + marker + "}\noverrides:\n- <<: *d\n  extraArgs: {run: [" + marker + "]}\n",
		apiLine + "overrides:\n- {component: storage, kind: DaemonSet, extraArgs: {run: [" + marker + "]}, extraArgs: {run: [" + marker + "]}}\n",
		"- " + marker + "\n",
		marker + "\n",
		apiLine + "---\n" + marker + "\n",
		// Malformed YAML around the marker.
		apiLine + "overrides: [" + marker + "\n",
		apiLine + "overrides: *" + marker + "\n",
		apiLine + "overrides: !" + marker + "!x [a]\n",
		apiLine + "overrides: \"" + marker + "\n",
		apiLine + "overrides: @" + marker + "\n",
		apiLine + "overrides:\n\t- " + marker + "\n",
		apiLine + "overrides: " + marker + ": : x\n",
		apiLine + "overrides: [" + marker + "\x01]\n",
		apiLine + "overrides: '" + marker + "\xff'\n",
		apiLine + "overrides: {" + marker + "\n",
		"%YAML 9.9\n--- " + marker + "\n",
		"%TAG ! " + marker + "\n",
	}
	// Past every limit, around the marker.
	inputs = append(inputs,
		apiLine+"overrides: "+strings.Repeat("[", 200)+marker+strings.Repeat("]", 200)+"\n",
		apiLine+"overrides: "+strings.Repeat("{"+marker+": ", 12000)+"x"+strings.Repeat("}", 12000)+"\n",
	)
	for i, input := range inputs {
		for _, live := range []Live{typicalLive(), nil} {
			findings := Validate(anyTable, map[string]string{"overrides.yaml": input}, live)
			if !policies.Denied(findings) {
				t.Errorf("input %d: drew no denial", i)
			}
			for _, f := range findings {
				if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
					t.Errorf("input %d: finding leaks a value: %s: %s", i, f.Field, f.Message)
				}
			}
		}
	}
}
