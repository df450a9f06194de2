package exception

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func TestValidate(t *testing.T) {
	deny := golden.Deny
	tests := []struct {
		name  string
		entry func() Entry
		rules func(*Rules)
		want  []golden.Result
	}{
		{name: "valid ClusterException", entry: func() Entry { return cluster("c") }},
		{name: "valid Exception", entry: func() Entry { return namespaced("team-a", "e") }},
		{name: "Exception naming its own namespace", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Match[0].Namespaces = []string{"team-a"}
			return e
		}},
		{name: "Exception selecting its whole namespace", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{}}
			return e
		}},
		{name: "Exception naming another namespace", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Match[0].Namespaces = []string{"team-a", "team-b"}
			return e
		}, want: []golden.Result{deny(ExceptionOutsideNamespace, "spec.match[0].namespaces[1]")}},
		{name: "Exception while namespaced exceptions are off", entry: func() Entry { return namespaced("team-a", "e") },
			rules: func(r *Rules) { r.Namespaced = false },
			want:  []golden.Result{deny(ExceptionNamespacedDisabled, "metadata.namespace")}},
		{name: "ClusterException while namespaced exceptions are off", entry: func() Entry { return cluster("c") },
			rules: func(r *Rules) { r.Namespaced = false }},
		{name: "reason blank", entry: func() Entry {
			e := cluster("c")
			e.Spec.Reason = " \t"
			return e
		}, want: []golden.Result{deny(ExceptionReasonMissing, "spec.reason")}},
		{name: "reason empty", entry: func() Entry {
			e := cluster("c")
			e.Spec.Reason = ""
			return e
		}, want: []golden.Result{deny(ExceptionReasonMissing, "spec.reason")}},
		{name: "expired", entry: func() Entry {
			e := cluster("c")
			e.Spec.Expires = in(-time.Second)
			return e
		}, want: []golden.Result{deny(ExceptionExpired, "spec.expires")}},
		{name: "expires now", entry: func() Entry {
			e := cluster("c")
			e.Spec.Expires = in(0)
			return e
		}, want: []golden.Result{deny(ExceptionExpired, "spec.expires")}},
		{name: "expiry missing", entry: func() Entry {
			e := cluster("c")
			e.Spec.Expires = metav1.Time{}
			return e
		}, want: []golden.Result{deny(ExceptionExpired, "spec.expires")}},
		{name: "expires at the maximum", entry: func() Entry {
			e := cluster("c")
			e.Spec.Expires = in(720 * time.Hour)
			return e
		}},
		{name: "expires past the maximum", entry: func() Entry {
			e := cluster("c")
			e.Spec.Expires = in(720*time.Hour + time.Second)
			return e
		}, want: []golden.Result{deny(ExceptionExpiryTooFar, "spec.expires")}},
		{name: "a shorter maximum", entry: func() Entry { return cluster("c") },
			rules: func(r *Rules) { r.MaxDuration = time.Hour },
			want:  []golden.Result{deny(ExceptionExpiryTooFar, "spec.expires")}},
		{name: "ClusterException entry selecting everything", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match = append(e.Spec.Match, exceptionsv1alpha1.ObjectSelector{})
			return e
		}, want: []golden.Result{deny(ExceptionTooBroad, "spec.match[1]")}},
		{name: "ClusterException entry with an empty label selector", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{LabelSelector: &metav1.LabelSelector{}}}
			return e
		}, want: []golden.Result{deny(ExceptionTooBroad, "spec.match[0]")}},
		{name: "ClusterException narrowed by labels alone", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hdfs"}}}}
			return e
		}},
		{name: "ClusterException narrowed by kind alone", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Pod"}}}}
			return e
		}},
		{name: "every webhook and code for named objects", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks, e.Spec.Codes = []string{"*"}, []string{"*"}
			return e
		}},
		{name: "every webhook and code for a namespace's objects", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks, e.Spec.Codes = []string{"*"}, []string{"*"}
			e.Spec.Match = append(e.Spec.Match, exceptionsv1alpha1.ObjectSelector{Namespaces: []string{"team-b"}})
			return e
		}, want: []golden.Result{deny(ExceptionTooBroad, "spec.match[1].names")}},
		{name: "every webhook and code in an Exception's namespace", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Webhooks, e.Spec.Codes = []string{"*"}, []string{"*"}
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{}}
			return e
		}, want: []golden.Result{deny(ExceptionTooBroad, "spec.match[0].names")}},
		{name: "every webhook, one code, a namespace", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{"*"}
			e.Spec.Match[0].Names = nil
			return e
		}},
		{name: "every code of one webhook, a namespace", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{"*"}
			e.Spec.Match[0].Names = nil
			return e
		}},
		{name: "wildcard beside a webhook", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{"secret-scope", "*"}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.webhooks[1]")}},
		{name: "wildcard beside a code", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{"*", string(codeOther)}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.codes[0]")}},
		{name: "unknown webhook", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{"secret-scope", "secret-scop"}
			return e
		}, want: []golden.Result{deny(ExceptionUnknownWebhook, "spec.webhooks[1]")}},
		{name: "webhooks unchecked", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{"secret-scop"}
			return e
		}, rules: func(r *Rules) { r.Webhooks = nil }},
		{name: "unknown code", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{"ScopeNameHasDelimeter"}
			return e
		}, want: []golden.Result{deny(ExceptionUnknownCode, "spec.codes[0]")}},
		{name: "codes unchecked", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{"ScopeNameHasDelimeter"}
			return e
		}, rules: func(r *Rules) { r.Codes = nil }},
		{name: "StateUnavailable", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{string(codeDelimiter), string(policies.StateUnavailable)}
			return e
		}, want: []golden.Result{deny(ExceptionCodeNeverExcused, "spec.codes[1]")}},
		{name: "StateUnavailable, codes unchecked", entry: func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{string(policies.StateUnavailable)}
			return e
		}, rules: func(r *Rules) { r.Codes = nil }, want: []golden.Result{deny(ExceptionCodeNeverExcused, "spec.codes[0]")}},
		{name: "empty lists", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match, e.Spec.Webhooks, e.Spec.Codes = nil, nil, []string{}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.codes"), deny(ExceptionInvalid, "spec.match"), deny(ExceptionInvalid, "spec.webhooks")}},
		{name: "empty entries", entry: func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{""}
			e.Spec.Codes = []string{""}
			e.Spec.Match[0].Names = []string{"hdfs", ""}
			e.Spec.Match[0].Kinds = append(e.Spec.Match[0].Kinds, exceptionsv1alpha1.GroupKind{Group: "apps"})
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.codes[0]"), deny(ExceptionInvalid, "spec.match[0].kinds[1].kind"),
			deny(ExceptionInvalid, "spec.match[0].names[1]"), deny(ExceptionInvalid, "spec.webhooks[0]")}},
		{name: "namespace that is no namespace name", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match[0].Namespaces = []string{"Team_A"}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.match[0].namespaces[0]")}},
		{name: "Exception naming an invalid namespace", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Match[0].Namespaces = []string{""}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.match[0].namespaces[0]")}},
		{name: "invalid label selector", entry: func() Entry {
			e := cluster("c")
			e.Spec.Match[0].LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn},
				{Key: "tier", Operator: "Near", Values: []string{"x"}},
				{Key: "ok", Operator: metav1.LabelSelectorOpExists},
			}}
			return e
		}, want: []golden.Result{deny(ExceptionInvalid, "spec.match[0].labelSelector.matchExpressions[0].values"),
			deny(ExceptionInvalid, "spec.match[0].labelSelector.matchExpressions[1].operator")}},
		{name: "every problem at once", entry: func() Entry {
			e := namespaced("team-a", "e")
			e.Spec.Reason = ""
			e.Spec.Expires = in(-time.Hour)
			e.Spec.Match[0].Namespaces = []string{"team-b"}
			e.Spec.Webhooks = []string{"nope"}
			e.Spec.Codes = []string{"Nope"}
			return e
		}, rules: func(r *Rules) { r.Namespaced = false }, want: []golden.Result{
			deny(ExceptionNamespacedDisabled, "metadata.namespace"),
			deny(ExceptionUnknownCode, "spec.codes[0]"),
			deny(ExceptionExpired, "spec.expires"),
			deny(ExceptionOutsideNamespace, "spec.match[0].namespaces[0]"),
			deny(ExceptionReasonMissing, "spec.reason"),
			deny(ExceptionUnknownWebhook, "spec.webhooks[0]"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rules()
			if tt.rules != nil {
				tt.rules(&r)
			}
			findings := Validate(tt.entry(), now, r)
			if got := golden.Results(findings); !slices.Equal(got, tt.want) {
				t.Errorf("Validate() = %v, want %v", got, tt.want)
			}
			for _, f := range findings {
				if !f.Ratchets() {
					t.Errorf("%s at %s carries no evidence; an UPDATE that keeps the value could not ratchet", f.Code, f.Field)
				}
			}
		})
	}
}

// TestValidateRatchetsOnTheStoredValue: the evidence of an expiry finding
// is the expiry, so the same exception judged later (an UPDATE that leaves
// spec.expires alone) carries the same evidence, and a renewed one does not.
func TestValidateRatchetsOnTheStoredValue(t *testing.T) {
	e := cluster("c")
	e.Spec.Expires = in(-time.Hour)
	before := Validate(e, now, rules())
	later := Validate(e, now.Add(48*time.Hour), rules())
	if len(before) != 1 || len(later) != 1 || before[0].Evidence != later[0].Evidence {
		t.Fatalf("the same stored expiry judged twice: %v and %v, want one finding with one evidence", before, later)
	}
	e.Spec.Expires = in(-2 * time.Hour)
	if again := Validate(e, now, rules()); len(again) != 1 || again[0].Evidence == before[0].Evidence {
		t.Errorf("a changed expiry kept its evidence: %v", again)
	}
}

// TestValidateMessagesSayWhatToDo: each message names the remedy, and none
// quotes a value of the exception (docs/contracts.md §0.3): markers
// planted in every string the exception holds never leave.
func TestValidateMessagesSayWhatToDo(t *testing.T) {
	const marker = "MARKERexc3pt"
	e := namespaced("team-a", "e")
	e.Spec.Reason = " "
	e.Spec.Expires = in(-time.Hour)
	e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{
		Namespaces: []string{marker, "x" + strings.ToLower(marker)},
		Kinds:      []exceptionsv1alpha1.GroupKind{{Group: marker}},
		Names:      []string{marker},
		LabelSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{marker + "/" + marker: marker + "!"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: marker, Operator: metav1.LabelSelectorOperator(marker), Values: []string{marker + " "}}},
		},
	}}
	e.Spec.Webhooks = []string{marker, "*"}
	e.Spec.Codes = []string{marker}
	findings := Validate(e, now, Rules{MaxDuration: time.Hour, Webhooks: []string{"secret-scope"}, Codes: []policies.Code{codeDelimiter}})
	if len(findings) < 8 {
		t.Fatalf("Validate() = %v, want a finding for each planted value", golden.Results(findings))
	}
	for _, f := range findings {
		if strings.Contains(strings.ToLower(f.Message), strings.ToLower(marker)) || strings.Contains(strings.ToLower(f.Field), strings.ToLower(marker)) {
			t.Errorf("%s at %s quotes a value: %q", f.Code, f.Field, f.Message)
		}
	}
	for code, remedy := range map[policies.Code]string{
		ExceptionNamespacedDisabled: "ClusterException",
		ExceptionReasonMissing:      "say why",
		ExceptionExpired:            "set spec.expires",
		ExceptionOutsideNamespace:   "leave namespaces out",
		ExceptionUnknownWebhook:     "registry name",
		ExceptionUnknownCode:        "as denials print it",
	} {
		i := slices.IndexFunc(findings, func(f policies.Finding) bool { return f.Code == code })
		if i < 0 || !strings.Contains(findings[i].Message, remedy) {
			t.Errorf("%s: no finding saying %q in %v", code, remedy, golden.Results(findings))
		}
	}
}
