package render

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/admissionpolicy"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestManagedLabelsPolicy runs the rendered gatehouse-managed-labels policy
// and binding through the API server's own admission plugin: an UPDATE of a
// Namespace, or of its status or finalize subresource, that removes or
// changes a managed label is refused with one cause per label, for every
// requester but gatehouse's ServiceAccount (exempt requesters included);
// adding one, keeping one, changing other labels and the namespaces exempt
// by name are not.
func TestManagedLabelsPolicy(t *testing.T) {
	const harnessed, scoped = "gatehouse.dev/harnessed", "gatehouse.dev/scoped"
	o := route.ManifestOptions{Namespace: "gatehouse-system", ServiceAccount: "gatehouse", Options: route.Options{
		HarnessedNamespaceLabel: harnessed, ScopedNamespaceLabel: scoped, ManagedSelections: true,
		Exemptions: configv1alpha1.Exemptions{ServiceAccounts: []string{"flux-system/kustomize-controller"}},
	}}
	policy, binding, ok := ManagedLabelsPolicy(o)
	if !ok {
		t.Fatal("no policy with managed selections")
	}
	v, err := admissionpolicy.NewValidator([]admissionregistrationv1.ValidatingAdmissionPolicy{policy},
		[]admissionregistrationv1.ValidatingAdmissionPolicyBinding{binding}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	namespace := func(name string, labels map[string]string) []byte {
		l := map[string]any{"kubernetes.io/metadata.name": name}
		for k, val := range labels {
			l[k] = val
		}
		raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": name, "labels": l}})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	both := map[string]string{harnessed: "true", scoped: "true", "team": "a"}
	const admin, operator = "alice", "system:serviceaccount:mariadb-system:operator"
	for _, tc := range []struct {
		name     string
		ns, sub  string
		user     string
		old, new map[string]string
		want     []string // the refused keys, in the policy's order
	}{
		{name: "stripped by an admin", ns: "apps", user: admin, old: both, new: map[string]string{"team": "a"}, want: []string{harnessed, scoped}},
		{name: "stripped through status", ns: "apps", sub: "status", user: operator, old: both, new: map[string]string{scoped: "true"}, want: []string{harnessed}},
		{name: "stripped through finalize", ns: "apps", sub: "finalize", user: admin, old: both, new: map[string]string{harnessed: "true"}, want: []string{scoped}},
		{name: "changed", ns: "apps", user: admin, old: both, new: map[string]string{harnessed: "false", scoped: "true"}, want: []string{harnessed}},
		{name: "stripped by an exempt requester", ns: "apps", user: "system:serviceaccount:flux-system:kustomize-controller", old: both, new: nil, want: []string{harnessed, scoped}},
		{name: "given up by gatehouse", ns: "apps", user: "system:serviceaccount:gatehouse-system:gatehouse", old: both, new: nil},
		{name: "by a namesake in another namespace", ns: "apps", user: "system:serviceaccount:other:gatehouse", old: both, new: nil, want: []string{harnessed, scoped}},
		{name: "other labels changed", ns: "apps", user: admin, old: both, new: map[string]string{harnessed: "true", scoped: "true"}},
		{name: "added", ns: "apps", user: admin, old: map[string]string{"team": "a"}, new: both},
		{name: "in a namespace exempt by name", ns: "kube-system", user: admin, old: both, new: nil},
		{name: "in gatehouse's own namespace", ns: "gatehouse-system", user: admin, old: both, new: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(context.Background(), admissionpolicy.Request{
				Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, SubResource: tc.sub,
				Namespace: tc.ns, Name: tc.ns, Operation: admission.Update, Username: tc.user,
				Object: namespace(tc.ns, tc.new), OldObject: namespace(tc.ns, tc.old),
			})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			status := admissionpolicy.Denial(err)
			if status == nil || status.Code != 422 {
				t.Fatalf("want a 422 denial, got %v", err)
			}
			_, message, _ := strings.Cut(status.Message, "denied request: ")
			var got []string
			for _, f := range strings.Split(message, "; ") {
				field, rest, _ := strings.Cut(f, ": ")
				if !strings.HasPrefix(rest, ManagedLabelChanged+": ") || !strings.HasSuffix(rest, attributionManagedLabels) {
					t.Errorf("finding %q: want %s and the attribution", f, ManagedLabelChanged)
				}
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(field, "metadata.labels["), "]"))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("refused %v, want %v (%s)", got, tc.want, status.Message)
			}
		})
	}
}

// TestManagedLabelsPolicyRendered: the policy is rendered beside the webhook
// configurations in every layout exactly when gatehouse manages the
// selections, names gatehouse's ServiceAccount as configured, and its binding
// leaves out only the namespaces exempt by name.
func TestManagedLabelsPolicyRendered(t *testing.T) {
	for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined, route.LayoutInProcess} {
		for _, managed := range []bool{false, true} {
			o := route.ManifestOptions{Namespace: "platform", ServiceAccount: "admission", Layout: layout, Options: route.Options{
				HarnessedNamespaceLabel: "h.example/harnessed", ScopedNamespaceLabel: "h.example/scoped", ManagedSelections: managed,
				Exemptions: configv1alpha1.Exemptions{NamespaceLabels: []configv1alpha1.NamespaceLabel{
					{Key: "tier", Operator: configv1alpha1.LabelOpIn, Values: []string{"infra"}}}},
			}}
			rendered, err := WebhookConfigurations(o)
			if err != nil {
				t.Fatal(err)
			}
			var policy *admissionregistrationv1.ValidatingAdmissionPolicy
			var binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
			for _, doc := range strings.Split(string(rendered), "---\n") {
				var meta struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				}
				if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
					t.Fatal(err)
				}
				if meta.Metadata.Name != ManagedLabelsPolicyName {
					continue
				}
				var into any
				switch meta.Kind {
				case "ValidatingAdmissionPolicy":
					policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
					into = policy
				case "ValidatingAdmissionPolicyBinding":
					binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
					into = binding
				}
				if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
					t.Fatal(err)
				}
			}
			if !managed {
				if policy != nil || binding != nil {
					t.Errorf("%s: rendered without managed selections", layout)
				}
				continue
			}
			if policy == nil || binding == nil {
				t.Fatalf("%s: policy %v, binding %v", layout, policy != nil, binding != nil)
			}
			if c := policy.Spec.MatchConditions; len(c) != 1 || c[0].Expression != `request.userInfo.username != "system:serviceaccount:platform:admission"` {
				t.Errorf("%s: matchConditions %+v", layout, c)
			}
			if !strings.Contains(policy.Spec.Variables[0].Expression, `["h.example/harnessed", "h.example/scoped"]`) {
				t.Errorf("%s: the policy does not protect the configured labels: %s", layout, policy.Spec.Variables[0].Expression)
			}
			sel := binding.Spec.MatchResources.NamespaceSelector
			if len(sel.MatchExpressions) != 1 || strings.Join(sel.MatchExpressions[0].Values, " ") != "platform kube-system kube-node-lease" {
				t.Errorf("%s: binding namespaceSelector %+v, want the names exempt by name only", layout, sel)
			}
		}
	}
}

// BenchmarkManagedLabelsPolicy is what the policy costs the API server per
// Namespace UPDATE it matches, in its own admission plugin: one that keeps
// the managed labels (the common case) and one that strips them.
func BenchmarkManagedLabelsPolicy(b *testing.B) {
	o := route.ManifestOptions{Namespace: route.DefaultNamespace, Options: route.Options{
		HarnessedNamespaceLabel: "gatehouse.dev/harnessed", ScopedNamespaceLabel: "gatehouse.dev/scoped", ManagedSelections: true}}
	policy, binding, _ := ManagedLabelsPolicy(o)
	v, err := admissionpolicy.NewValidator([]admissionregistrationv1.ValidatingAdmissionPolicy{policy},
		[]admissionregistrationv1.ValidatingAdmissionPolicyBinding{binding}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ns := func(labels map[string]any) []byte {
		raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "apps", "labels": labels}})
		return raw
	}
	stored := ns(map[string]any{"kubernetes.io/metadata.name": "apps", "gatehouse.dev/harnessed": "true", "gatehouse.dev/scoped": "true", "team": "a"})
	for name, object := range map[string][]byte{
		"kept":     ns(map[string]any{"kubernetes.io/metadata.name": "apps", "gatehouse.dev/harnessed": "true", "gatehouse.dev/scoped": "true", "team": "b"}),
		"stripped": ns(map[string]any{"kubernetes.io/metadata.name": "apps", "team": "a"}),
	} {
		b.Run(name, func(b *testing.B) {
			req := admissionpolicy.Request{
				Kind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
				Namespace: "apps", Name: "apps", Operation: admission.Update, Username: "alice", Object: object, OldObject: stored,
			}
			for b.Loop() {
				_ = v.Validate(context.Background(), req)
			}
		})
	}
}
