package serviceaccount

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// FuzzValidate feeds arbitrary YAML or JSON, decoded as the webhook decodes
// an object, to Validate as a product custom resource, a StatefulSet and a
// Pod: for panics and stack overflows, and against two independent oracles
// for the upstream shapes.
func FuzzValidate(f *testing.F) {
	golden.AddFixtureSeeds(f, filepath.Join("testdata", "*", "*.yaml"))
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"r":{"podOverrides":{"spec":{"serviceAccountName":"x"}}}}}`))
	f.Add([]byte(`{"metadata":{"ownerReferences":[{"controller":true,"apiVersion":"a.kubedoop.dev/v1","kind":"K","name":"n"}]},"spec":{"serviceAccountName":"x","template":{"spec":{"serviceAccount":1}}}}`))
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"r":{"podOverrides":{"SPEC":{"ſerviceAccountName":"x"},"ſpec":{"SERVICEACCOUNT":"y"}}}}}`))
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":` + strings.Repeat(`{"a":[`, 50) + `{"podOverrides":{"spec":{"serviceAccountName":"x"}}}` + strings.Repeat(`]}`, 50) + `}`))
	f.Add([]byte(`podOverrides: podOverrides`))

	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) {
		cr := Validate(hdfsGK, obj, policies.DefaultProducts(), derivedNaming)
		checkFindings(t, cr, ServiceAccountOverridden, ServiceAccountOverrideRedundant, ServiceAccountWalkTooDeep)
		if overriddenAtUpstreamPath(obj) && !policies.Denied(cr) {
			t.Fatalf("a podOverrides ServiceAccount other than the derived name was not denied: %v", summarize(cr))
		}
		if again := Validate(hdfsGK, obj, policies.DefaultProducts(), derivedNaming); !reflect.DeepEqual(cr, again) {
			t.Fatalf("not deterministic:\n%v\n%v", cr, again)
		}
		sts := Validate(statefulSetGK, obj, policies.DefaultProducts(), derivedNaming)
		checkFindings(t, sts, ServiceAccountMismatch)
		if mismatchedPod(obj, "spec", "template", "spec") && !policies.Denied(sts) {
			t.Fatalf("a StatefulSet with a mismatching ServiceAccount was not denied: %v", summarize(sts))
		}
		p := Validate(podGK, obj, policies.DefaultProducts(), derivedNaming)
		checkFindings(t, p, ServiceAccountMismatch)
		if mismatchedPod(obj, "spec") && !policies.Denied(p) {
			t.Fatalf("a Pod with a mismatching ServiceAccount was not denied: %v", summarize(p))
		}
	})
}

// checkFindings checks that findings use only the allowed codes, each with
// its severity, carry a field path, and come sorted.
func checkFindings(t *testing.T, findings []policies.Finding, codes ...policies.Code) {
	t.Helper()
	for _, f := range findings {
		allowed := false
		for _, c := range codes {
			allowed = allowed || f.Code == c
		}
		if !allowed {
			t.Fatalf("unexpected code %s (allowed %v)", f.Code, codes)
		}
		if (f.Code == ServiceAccountOverrideRedundant) != (f.Severity == policies.Warn) {
			t.Fatalf("code %s has severity %d", f.Code, f.Severity)
		}
		if f.Field == "" || f.Message == "" {
			t.Fatalf("finding without field or message: %+v", f)
		}
	}
	sorted := append([]policies.Finding(nil), findings...)
	policies.Sort(sorted)
	if !reflect.DeepEqual(sorted, findings) {
		t.Fatal("findings are not sorted")
	}
}

// overriddenAtUpstreamPath is the oracle for rule 1, written against the
// upstream shape only: does spec.<role>.podOverrides or
// spec.<role>.roleGroups.<group>.podOverrides set spec.serviceAccountName to
// a string other than the derived name?
func overriddenAtUpstreamPath(obj map[string]any) bool {
	name, _ := fields.String(obj, "metadata", "name")
	overridden := func(holder map[string]any) bool {
		sa, ok := fields.String(holder, "podOverrides", "spec", "serviceAccountName")
		return ok && (name == "" || sa != DerivedServiceAccountName(hdfsGK.Kind, name))
	}
	spec, _ := fields.Map(obj, "spec")
	for _, r := range spec {
		role, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if overridden(role) {
			return true
		}
		groups, _ := fields.Map(role, "roleGroups")
		for _, g := range groups {
			if group, ok := g.(map[string]any); ok && overridden(group) {
				return true
			}
		}
	}
	return false
}

// mismatchedPod is the oracle for rule 2: does the first ownerReference say
// it is the controller, with a product group and a kind and name, while the
// serviceAccountName at specPath is a non-empty string other than the
// owner's derived name?
func mismatchedPod(obj map[string]any, specPath ...string) bool {
	refs, _ := fields.Slice(obj, "metadata", "ownerReferences")
	if len(refs) == 0 {
		return false
	}
	ref, _ := refs[0].(map[string]any)
	controller, _ := ref["controller"].(bool)
	apiVersion, _ := fields.String(ref, "apiVersion")
	kind, _ := fields.String(ref, "kind")
	name, _ := fields.String(ref, "name")
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	if !controller || kind == "" || name == "" || !policies.DefaultProducts().Matches(group) {
		return false
	}
	sa, ok := fields.String(obj, append(specPath, "serviceAccountName")...)
	return ok && sa != "" && sa != DerivedServiceAccountName(kind, name)
}
