package podsecurity

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// want is the part of a finding the table tests compare exactly.
type want struct {
	sev   policies.Severity
	code  policies.Code
	field string
}

func (w want) String() string {
	sev := "deny"
	if w.sev == policies.Warn {
		sev = "warn"
	}
	return fmt.Sprintf("%s %s %s", sev, w.code, w.field)
}

func root(field string) want    { return want{policies.Deny, RunAsRootConflict, field} }
func missing(field string) want { return want{policies.Deny, SecurityDefaultsMissing, field} }

func summarize(findings []policies.Finding) []want {
	var out []want
	for _, f := range findings {
		out = append(out, want{f.Severity, f.Code, f.Field})
	}
	return out
}

// missingPod lists a SecurityDefaultsMissing finding for every pod-level
// field; missingContainer for every field of the container at prefix.
func missingPod() []want {
	return []want{
		missing("spec.securityContext.fsGroup"),
		missing("spec.securityContext.fsGroupChangePolicy"),
		missing("spec.securityContext.runAsGroup"),
		missing("spec.securityContext.runAsNonRoot"),
		missing("spec.securityContext.runAsUser"),
		missing("spec.securityContext.seccompProfile.type"),
	}
}

func missingContainer(prefix string) []want {
	return []want{
		missing(prefix + ".securityContext.allowPrivilegeEscalation"),
		missing(prefix + ".securityContext.capabilities.drop"),
		missing(prefix + ".securityContext.runAsNonRoot"),
		missing(prefix + ".securityContext.seccompProfile.type"),
	}
}

func concat(lists ...[]want) []want {
	var out []want
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestValidatePod(t *testing.T) {
	const (
		podUser = "spec.securityContext.runAsUser"
		c0      = "spec.containers[0]"
		c0User  = c0 + ".securityContext.runAsUser"
	)
	tests := []struct {
		name string
		obj  map[string]any
		old  map[string]any
		want []want
	}{
		// Rule 2: missing defaults.
		{name: "defaulted pod", obj: defaultedPod()},
		{name: "bare pod", obj: basePod(), want: concat(missingContainer(c0), missingPod())},
		{name: "every container list", obj: tweak(defaultedPod(), func(o map[string]any) {
			addContainer(o, "initContainers", "setup")
			addContainer(o, "ephemeralContainers", "debug")
		}), want: concat(missingContainer("spec.ephemeralContainers[0]"), missingContainer("spec.initContainers[0]"))},
		{name: "one field missing at each level", obj: tweak(defaultedPod(), func(o map[string]any) {
			delete(podSC(o), "fsGroup")
			delete(containerSC(o, "containers", 0)["capabilities"].(map[string]any), "drop")
		}), want: []want{missing(c0 + ".securityContext.capabilities.drop"), missing("spec.securityContext.fsGroup")}},
		{name: "null counts as missing", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsGroup"] = nil
			containerSC(o, "containers", 0)["allowPrivilegeEscalation"] = nil
		}), want: []want{missing(c0 + ".securityContext.allowPrivilegeEscalation"), missing("spec.securityContext.runAsGroup")}},
		{name: "seccompProfile without type", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{}
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "", "localhostProfile": "p.json"}
		}), want: []want{missing(c0 + ".securityContext.seccompProfile.type"), missing("spec.securityContext.seccompProfile.type")}},
		{name: "empty drop list is stated", obj: tweak(defaultedPod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"drop": []any{}}
		})},
		{name: "stated values of the wrong type are not missing", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["fsGroup"] = "1001"
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"drop": "ALL"}
		})},
		{name: "securityContexts not objects", obj: tweak(defaultedPod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = "restricted"
			containerAt(o, "containers", 0)["securityContext"] = []any{}
		}), want: []want{missing(c0 + ".securityContext"), missing("spec.securityContext")}},
		{name: "seccompProfile and capabilities not objects", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = "RuntimeDefault"
			containerSC(o, "containers", 0)["seccompProfile"] = true
			containerSC(o, "containers", 0)["capabilities"] = []any{"ALL"}
		}), want: []want{
			missing(c0 + ".securityContext.capabilities"),
			missing(c0 + ".securityContext.seccompProfile"),
			missing("spec.securityContext.seccompProfile"),
		}},
		{name: "bare Windows pod needs runAsNonRoot only", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec", "os")["name"] = "windows"
		}), want: []want{missing(c0 + ".securityContext.runAsNonRoot"), missing("spec.securityContext.runAsNonRoot")}},
		{name: "container entries and lists of the wrong type", obj: tweak(defaultedPod(), func(o map[string]any) {
			getMap(o, "spec")["initContainers"] = "setup"
			getMap(o, "spec")["ephemeralContainers"] = []any{nil, 1, "debug"}
		})},

		// Rule 1: runAsUser 0 with runAsNonRoot true.
		{name: "pod runAsUser 0 with runAsNonRoot true", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
		}), want: []want{root(podUser)}},
		{name: "pod runAsUser 0 with runAsNonRoot false everywhere", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = false
			containerSC(o, "containers", 0)["runAsNonRoot"] = false
		})},
		{name: "pod runAsUser 0, container states runAsNonRoot true", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = false
		}), want: []want{root(podUser)}},
		{name: "pod runAsUser 0, container overrides runAsUser", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			containerSC(o, "containers", 0)["runAsUser"] = 1000
		})},
		{name: "container runAsUser 0 under pod runAsNonRoot true", obj: tweak(defaultedPod(), func(o map[string]any) {
			delete(containerSC(o, "containers", 0), "runAsNonRoot")
			containerSC(o, "containers", 0)["runAsUser"] = 0
		}), want: []want{missing(c0 + ".securityContext.runAsNonRoot"), root(c0User)}},
		{name: "container runAsUser 0 and its own runAsNonRoot false under pod true", obj: tweak(defaultedPod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["runAsUser"] = 0
			containerSC(o, "containers", 0)["runAsNonRoot"] = false
		})},
		{name: "container runAsUser 0 and runAsNonRoot true under pod false", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsNonRoot"] = false
			containerSC(o, "containers", 0)["runAsUser"] = 0
		}), want: []want{root(c0User)}},
		{name: "runAsUser 0 as int64, json.Number and -0", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = json.Number("0")
			containerSC(o, "containers", 0)["runAsUser"] = int64(0)
			c := addContainer(o, "containers", "sidecar")
			c["securityContext"] = defaultedContainerSC()
			c["securityContext"].(map[string]any)["runAsUser"] = math.Copysign(0, -1)
			c = addContainer(o, "containers", "inherits")
			c["securityContext"] = defaultedContainerSC()
		}), want: []want{root(c0User), root("spec.containers[1].securityContext.runAsUser"), root(podUser)}},
		{name: "runAsUser not a number is no explicit 0", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = "0"
		})},
		{name: "container runAsUser of the wrong type reads as absent", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			containerSC(o, "containers", 0)["runAsUser"] = "1000"
		}), want: []want{root(podUser)}},
		{name: "runAsNonRoot not a bool is not true", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = "true"
			containerSC(o, "containers", 0)["runAsNonRoot"] = "true"
		})},
		{name: "non-zero runAsUser", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0.5
		})},
		{name: "pod runAsUser 0 reported once for all containers", obj: tweak(defaultedPod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			addContainer(o, "initContainers", "setup")["securityContext"] = defaultedContainerSC()
			addContainer(o, "ephemeralContainers", "debug")["securityContext"] = defaultedContainerSC()
		}), want: []want{root(podUser)}},
		{name: "bare pod with runAsUser 0 and runAsNonRoot true", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = map[string]any{"runAsUser": 0, "runAsNonRoot": true}
		}), want: concat(missingContainer(c0), []want{
			missing("spec.securityContext.fsGroup"),
			missing("spec.securityContext.fsGroupChangePolicy"),
			missing("spec.securityContext.runAsGroup"),
			root(podUser),
			missing("spec.securityContext.seccompProfile.type"),
		})},

		// pods/ephemeralcontainers UPDATE.
		{name: "update: only the new ephemeral container needs the defaults", obj: tweak(basePod(), func(o map[string]any) {
			addContainer(o, "ephemeralContainers", "debug-1")
			addContainer(o, "ephemeralContainers", "debug-2")
		}), old: tweak(basePod(), func(o map[string]any) {
			addContainer(o, "ephemeralContainers", "debug-1")
		}), want: missingContainer("spec.ephemeralContainers[1]")},
		{name: "update: defaulted new ephemeral container on an old bare pod", obj: tweak(basePod(), func(o map[string]any) {
			addContainer(o, "ephemeralContainers", "debug")["securityContext"] = defaultedContainerSC()
		}), old: basePod()},
		{name: "update: rule 1 runs on every container", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = map[string]any{"runAsUser": 0, "runAsNonRoot": true}
			addContainer(o, "ephemeralContainers", "debug")["securityContext"] = defaultedContainerSC()
		}), old: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = map[string]any{"runAsUser": 0, "runAsNonRoot": true}
		}), want: []want{root(podUser)}},

		// Hostile shapes.
		{name: "nil object", obj: nil},
		{name: "no spec", obj: map[string]any{"kind": "Pod"}},
		{name: "spec not an object", obj: map[string]any{"spec": "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(ValidatePod(tc.obj, tc.old))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestValidatePodMessagesAndEvidence pins the wording and the Evidence of
// each kind of finding.
func TestValidatePodMessagesAndEvidence(t *testing.T) {
	podRoot := tweak(defaultedPod(), func(o map[string]any) {
		podSC(o)["runAsUser"] = 0
		addContainer(o, "initContainers", "setup")["securityContext"] = defaultedContainerSC()
		unnamed := addContainer(o, "containers", "x")
		delete(unnamed, "name")
		unnamed["securityContext"] = defaultedContainerSC()
	})
	tests := []struct {
		name     string
		obj      map[string]any
		messages []string
		evidence []string
	}{
		{
			name: "pod-level runAsUser 0, one container",
			obj:  tweak(defaultedPod(), func(o map[string]any) { podSC(o)["runAsUser"] = 0 }),
			messages: []string{`container "app" inherits runAsUser: 0 from the pod while its effective runAsNonRoot is true ` +
				`(stated, or filled in by the pod security defaults), so the kubelet would refuse to start it; ` +
				`set runAsNonRoot: false explicitly in spec.securityContext and in any container securityContext that sets it to true, ` +
				`or choose a non-zero runAsUser`},
			evidence: []string{`0/true:"app"`},
		},
		{
			name: "pod-level runAsUser 0, several containers",
			obj:  podRoot,
			messages: []string{`containers "setup", "app", at spec.containers[1] inherit runAsUser: 0 from the pod while their effective runAsNonRoot is true ` +
				`(stated, or filled in by the pod security defaults), so the kubelet would refuse to start them; ` +
				`set runAsNonRoot: false explicitly in spec.securityContext and in any container securityContext that sets it to true, ` +
				`or choose a non-zero runAsUser`},
			evidence: []string{`0/true:"setup","app",at spec.containers[1]`},
		},
		{
			name: "container-level runAsUser 0",
			obj:  tweak(defaultedPod(), func(o map[string]any) { containerSC(o, "containers", 0)["runAsUser"] = 0 }),
			messages: []string{`container "app" sets runAsUser: 0 while its effective runAsNonRoot is true ` +
				`(stated, inherited from the pod, or filled in by the pod security defaults), so the kubelet would refuse to start it; ` +
				`set runAsNonRoot: false explicitly in spec.containers[0].securityContext, or choose a non-zero runAsUser`},
			evidence: []string{"0/true"},
		},
		{
			name:     "missing default",
			obj:      tweak(defaultedPod(), func(o map[string]any) { delete(podSC(o), "fsGroup") }),
			messages: []string{msgDefaultsMissing},
			evidence: []string{""},
		},
		{
			name:     "not an object",
			obj:      tweak(defaultedPod(), func(o map[string]any) { containerAt(o, "containers", 0)["securityContext"] = "x" }),
			messages: []string{msgNotObject},
			evidence: []string{""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			findings := ValidatePod(tc.obj, nil)
			if len(findings) != len(tc.messages) {
				t.Fatalf("got %d findings, want %d: %+v", len(findings), len(tc.messages), findings)
			}
			for i, f := range findings {
				if f.Message != tc.messages[i] {
					t.Errorf("finding %d message\n got %q\nwant %q", i, f.Message, tc.messages[i])
				}
				if f.Evidence != policies.Fingerprint(tc.evidence[i]) {
					t.Errorf("finding %d evidence is not the fingerprint of %q", i, tc.evidence[i])
				}
			}
		})
	}
	// The missing-defaults message names both causes and both remedies.
	for _, s := range []string{"did not run", "fails open", "opt-in label", "retry", "set the field explicitly"} {
		if !strings.Contains(msgDefaultsMissing, s) {
			t.Errorf("msgDefaultsMissing lacks %q", s)
		}
	}
}

// TestRunAsRootEvidenceTracksAffectedContainers checks that adding an
// ephemeral container that inherits the pod's runAsUser: 0 changes the
// Evidence, so that the webhook's ratchet does not hide the new container
// behind the stored pod's finding.
func TestRunAsRootEvidenceTracksAffectedContainers(t *testing.T) {
	old := tweak(defaultedPod(), func(o map[string]any) { podSC(o)["runAsUser"] = 0 })
	added := tweak(clone(old), func(o map[string]any) {
		addContainer(o, "ephemeralContainers", "debug")["securityContext"] = defaultedContainerSC()
	})
	safe := tweak(clone(old), func(o map[string]any) {
		c := addContainer(o, "ephemeralContainers", "debug")
		c["securityContext"] = defaultedContainerSC()
		c["securityContext"].(map[string]any)["runAsUser"] = 1000
	})
	before, after, unchanged := ValidatePod(old, nil), ValidatePod(added, old), ValidatePod(safe, old)
	if len(before) != 1 || len(after) != 1 || len(unchanged) != 1 {
		t.Fatalf("want one finding each, got %v, %v, %v", before, after, unchanged)
	}
	if before[0].Evidence == after[0].Evidence {
		t.Error("a newly affected container does not change the evidence")
	}
	if before[0].Evidence != unchanged[0].Evidence {
		t.Error("an unaffected new container changes the evidence")
	}
}

func TestValidateTemplate(t *testing.T) {
	conflict := func(gk schema.GroupKind, obj map[string]any) map[string]any {
		getMap(templateSpec(gk, obj), "securityContext")["runAsUser"] = 0
		getMap(templateSpec(gk, obj), "securityContext")["runAsNonRoot"] = true
		return obj
	}
	tests := []struct {
		name string
		gk   schema.GroupKind
		obj  map[string]any
		want []want
	}{
		{name: "Deployment with the conflict", gk: gkDeployment, obj: conflict(gkDeployment, deployment()),
			want: []want{root("spec.template.spec.securityContext.runAsUser")}},
		{name: "CronJob container with the conflict", gk: gkCronJob, obj: tweak(cronJob(), func(o map[string]any) {
			c := templateSpec(gkCronJob, o)["containers"].([]any)[0].(map[string]any)
			c["securityContext"] = map[string]any{"runAsUser": 0, "runAsNonRoot": true}
		}), want: []want{root("spec.jobTemplate.spec.template.spec.containers[0].securityContext.runAsUser")}},
		{name: "CronJob with the conflict opted out", gk: gkCronJob, obj: tweak(conflict(gkCronJob, cronJob()), func(o map[string]any) {
			c := templateSpec(gkCronJob, o)["containers"].([]any)[0].(map[string]any)
			c["securityContext"] = map[string]any{"runAsNonRoot": false}
		})},
		{name: "Deployment without securityContext: rule 2 does not apply", gk: gkDeployment, obj: deployment()},
		{name: "Deployment with runAsUser 0 alone: its pods would get runAsNonRoot from the defaults", gk: gkDeployment, obj: tweak(deployment(), func(o map[string]any) {
			getMap(templateSpec(gkDeployment, o), "securityContext")["runAsUser"] = 0
		}), want: []want{root("spec.template.spec.securityContext.runAsUser")}},
		{name: "Deployment with runAsUser 0 and runAsNonRoot false is the documented way to run as root", gk: gkDeployment, obj: tweak(deployment(), func(o map[string]any) {
			getMap(templateSpec(gkDeployment, o), "securityContext")["runAsUser"] = 0
			getMap(templateSpec(gkDeployment, o), "securityContext")["runAsNonRoot"] = false
		})},
		{name: "Pod is ValidatePod's", gk: gkPod, obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = true
		})},
		{name: "kind that runs no pods", gk: schema.GroupKind{Kind: "ConfigMap"}, obj: conflict(gkDeployment, deployment())},
		{name: "template not an object", gk: gkStatefulSet, obj: map[string]any{"spec": map[string]any{"template": "x"}}},
		{name: "nil object", gk: gkDeployment, obj: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(ValidateTemplate(tc.gk, tc.obj, BuiltinDefaults()))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestValidateTemplateEveryKind runs rule 1 over the template of every
// workload kind that has one.
func TestValidateTemplateEveryKind(t *testing.T) {
	for _, k := range workload.Kinds() {
		if len(k.Template) == 0 {
			continue
		}
		gk := schema.GroupKind{Group: k.Resource.Group, Kind: k.Kind}
		t.Run(k.Kind, func(t *testing.T) {
			obj := map[string]any{"kind": k.Kind}
			tmpl := getMap(obj, k.Template...)
			tmpl["spec"] = tweak(podSpec(), func(s map[string]any) {
				s["securityContext"] = map[string]any{"runAsUser": 0, "runAsNonRoot": true}
			})
			want := []want{root(strings.Join(k.Template, ".") + ".spec.securityContext.runAsUser")}
			if got := summarize(ValidateTemplate(gk, obj, BuiltinDefaults())); !reflect.DeepEqual(got, want) {
				t.Errorf("findings\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestValidateTemplateDoesNotDefaultTheTemplate: the template is judged as
// its pods will be defaulted, but the object itself stays as written.
func TestValidateTemplateDoesNotDefaultTheTemplate(t *testing.T) {
	obj := tweak(deployment(), func(o map[string]any) {
		getMap(templateSpec(gkDeployment, o), "securityContext")["runAsUser"] = 0
	})
	before := copyJSON(obj)
	ValidateTemplate(gkDeployment, obj, BuiltinDefaults())
	if !reflect.DeepEqual(before, obj) {
		t.Fatal("ValidateTemplate changed the object")
	}
}
