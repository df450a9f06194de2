package podsecurity

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// fuzzTemplateKinds are the kinds each fuzz input is also validated as.
var fuzzTemplateKinds = []schema.GroupKind{gkDeployment, gkCronJob, {Kind: "PodTemplate"}}

// FuzzDefaultPod feeds arbitrary YAML or JSON, decoded as the webhook decodes
// an object, to DefaultPod, DefaultNewEphemeralContainers, ValidatePod and
// ValidateTemplate: for panics and stack overflows, for idempotency, and for
// the property that defaulting satisfies the missing-defaults check wherever
// the object's shape lets it (see malformedPaths).
func FuzzDefaultPod(f *testing.F) {
	golden.AddFixtureSeeds(f, filepath.Join("testdata", "*", "*.yaml"), filepath.Join("testdata", "undefaulted", "*", "*.yaml"))
	f.Add([]byte(`{"spec":{"securityContext":"x","containers":[1,null,{"securityContext":{"seccompProfile":"x","capabilities":[]}}]}}`))
	f.Add([]byte(`{"spec":{"securityContext":{"seccompProfile":{"type":""}},"ephemeralContainers":[{"name":"d"},{"securityContext":null}]}}`))
	f.Add([]byte(`{"spec":{"os":{"name":"windows"},"initContainers":[{"securityContext":{"capabilities":{"drop":null}}}]}}`))
	f.Add([]byte(`{"spec":{"securityContext":{"runAsUser":0,"runAsNonRoot":true},"containers":[{"securityContext":{"privileged":true,"capabilities":{"add":["CAP_SYS_ADMIN",1]}}}]}}`))
	f.Add([]byte(`spec: spec`))

	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) {
		old := clone(obj)
		d := BuiltinDefaults()

		// CREATE.
		pod := clone(obj)
		changed := DefaultPod(pod, d)
		once := clone(pod)
		checkCopyOnWrite(t, "Defaulted", obj, pod, changed, func(in map[string]any) (map[string]any, bool) { return Defaulted(in, d) })
		if DefaultPod(pod, d) {
			t.Fatalf("second DefaultPod reported a change:\n%s", toYAML(once))
		}
		if !reflect.DeepEqual(pod, once) {
			t.Fatalf("second DefaultPod changed the object:\n%s\n---\n%s", toYAML(once), toYAML(pod))
		}
		checkDefaultsSatisfied(t, "DefaultPod", pod, ValidatePod(pod, nil))

		// pods/ephemeralcontainers UPDATE, with the input as both the old
		// and the new object (unnamed ephemeral containers count as new), and
		// with no old object.
		for _, stored := range []map[string]any{old, nil} {
			upd := clone(obj)
			changed := DefaultNewEphemeralContainers(upd, stored, d)
			onceUpd := clone(upd)
			checkCopyOnWrite(t, "DefaultedNewEphemeralContainers", obj, upd, changed, func(in map[string]any) (map[string]any, bool) {
				return DefaultedNewEphemeralContainers(in, stored, d)
			})
			if DefaultNewEphemeralContainers(upd, stored, d) || !reflect.DeepEqual(upd, onceUpd) {
				t.Fatalf("DefaultNewEphemeralContainers is not idempotent:\n%s", toYAML(onceUpd))
			}
			if stored != nil {
				checkDefaultsSatisfied(t, "DefaultNewEphemeralContainers", upd, ValidatePod(upd, stored))
			}
		}

		// The raw input, and the input as every kind of template.
		checkFindings(t, ValidatePod(obj, nil))
		checkFindings(t, ValidatePod(obj, obj))
		for _, gk := range fuzzTemplateKinds {
			checkFindings(t, ValidateTemplate(gk, obj, BuiltinDefaults()))
		}
		if first, again := ValidatePod(obj, nil), ValidatePod(obj, nil); !reflect.DeepEqual(first, again) {
			t.Fatal("ValidatePod is not deterministic")
		}
	})
}

// checkCopyOnWrite: defaulted, run on a copy of obj, leaves that copy as it
// was and returns want (what the in-place form made of obj) and whether it
// changed; unchanged, it returns its input itself.
func checkCopyOnWrite(t *testing.T, step string, obj, want map[string]any, wantChanged bool, defaulted func(map[string]any) (map[string]any, bool)) {
	t.Helper()
	in := clone(obj)
	out, changed := defaulted(in)
	if !reflect.DeepEqual(in, obj) {
		t.Fatalf("%s changed its input:\n%s\n---\n%s", step, toYAML(obj), toYAML(in))
	}
	if changed != wantChanged || !reflect.DeepEqual(out, want) {
		t.Fatalf("%s returned (changed %v)\n%s\nwhere the in-place form made (changed %v)\n%s", step, changed, toYAML(out), wantChanged, toYAML(want))
	}
	if !changed && in != nil && reflect.ValueOf(out).UnsafePointer() != reflect.ValueOf(in).UnsafePointer() {
		t.Fatalf("%s changed nothing but returned a copy", step)
	}
}

// checkDefaultsSatisfied checks findings of a defaulted object: well formed,
// and every SecurityDefaultsMissing among them sits at a value that is not an
// object and so could not be defaulted.
func checkDefaultsSatisfied(t *testing.T, step string, obj map[string]any, findings []policies.Finding) {
	t.Helper()
	checkFindings(t, findings)
	malformed := malformedPaths(obj)
	for _, f := range findings {
		if f.Code != SecurityDefaultsMissing {
			continue
		}
		if !malformed[f.Field] || f.Message != msgNotObject {
			t.Fatalf("after %s, a default is still missing at %s: %s\n%s", step, f.Field, f.Message, toYAML(obj))
		}
	}
}

// malformedPaths is the oracle, written independently of missing.go: the
// paths of the security contexts, seccompProfiles and capabilities in a pod
// that are stated but are not objects. Only there may a default be missing
// after defaulting.
func malformedPaths(obj map[string]any) map[string]bool {
	out := map[string]bool{}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return out
	}
	check := func(path string, holder map[string]any, below ...string) {
		v := holder["securityContext"]
		if v == nil {
			return
		}
		sc, ok := v.(map[string]any)
		if !ok {
			out[path+".securityContext"] = true
			return
		}
		for _, k := range below {
			if w := sc[k]; w != nil {
				if _, ok := w.(map[string]any); !ok {
					out[path+".securityContext."+k] = true
				}
			}
		}
	}
	check("spec", spec, "seccompProfile")
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		items, _ := spec[list].([]any)
		for i, item := range items {
			if c, ok := item.(map[string]any); ok {
				check(fmt.Sprintf("spec.%s[%d]", list, i), c, "seccompProfile", "capabilities")
			}
		}
	}
	return out
}

// checkFindings checks that findings use only this package's codes, all
// denying, each with a field path and a message, and come sorted.
func checkFindings(t *testing.T, findings []policies.Finding) {
	t.Helper()
	for _, f := range findings {
		if f.Code != RunAsRootConflict && f.Code != SecurityDefaultsMissing {
			t.Fatalf("unexpected code %s", f.Code)
		}
		if f.Severity != policies.Deny {
			t.Fatalf("code %s has severity %d", f.Code, f.Severity)
		}
		if f.Field == "" || f.Message == "" {
			t.Fatalf("finding without field or message: %+v", f)
		}
	}
	sorted := slices.Clone(findings)
	policies.Sort(sorted)
	if !reflect.DeepEqual(sorted, findings) {
		t.Fatal("findings are not sorted")
	}
}
