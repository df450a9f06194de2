package render

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The managed namespace labels (webhooks/route/selection.go) are all that sends a harnessed
// namespace's pods to harness-proxy's fail-closed entry and a scoped
// namespace's objects to harness-labels. With Options.ManagedSelections the
// API server itself keeps anyone but gatehouse from removing or changing
// them (docs/contracts.md §11): a ValidatingAdmissionPolicy, rendered beside
// the webhook configurations, refuses every UPDATE of a Namespace (and of
// namespaces/status and namespaces/finalize, whose strategies store label
// changes too) that removes or changes a managed label the stored Namespace
// carries, unless gatehouse's own ServiceAccount makes it. It decides
// in-process, so it holds while gatehouse is unavailable, and fails closed.
//
// Adding a managed label is not refused: it only sends more requests, and
// harness-labels adds the labels a Namespace should carry on the
// requester's own CREATE or UPDATE. While gatehouse answers, a requester's
// UPDATE of the main resource that drops a wanted label gets it back from
// harness-labels before the policy sees it (validating admission comes
// after mutating), so only what cannot be restored is refused.
//
// Exemptions by requester do not apply: they say whose requests gatehouse's
// webhooks never judge, and this policy protects what decides which requests
// reach them. Namespaces exempt by name do: every entry excludes them, so a
// managed label there selects nothing (and the platform team can clean up
// its own namespaces). Namespaces exempt by label do not: their exempting
// label can go, and the managed label must then still be there.

// ManagedLabelsPolicyName names the policy and its binding.
const ManagedLabelsPolicyName = "gatehouse-managed-labels"

// ManagedLabelChanged is the code of the policy's denial.
const ManagedLabelChanged = "ManagedLabelChanged"

// attributionManagedLabels ends the policy's messages, as a webhook's
// name ends the in-process policies' (docs/in-process.md).
const attributionManagedLabels = " (gatehouse managed-labels)"

// ServerUserCondition names the policy's matchCondition that leaves out
// gatehouse's own requests.
const ServerUserCondition = "gatehouse-not-gatehouse"

// managedLabelsMessage explains a denial, after the label's key.
const managedLabelsMessage = ", which selects the namespace for gatehouse's webhooks, is removed or changed only by gatehouse " +
	"(harness.manageSelections), which gives it up when no OperatorHarness needs it"

// ServerUsername is the user gatehouse's requests carry: its ServiceAccount
// in its namespace (the defaults of deploy/ when unset).
func ServerUsername(o route.ManifestOptions) string {
	ns, sa := o.Namespace, o.ServiceAccount
	if ns == "" {
		ns = route.DefaultNamespace
	}
	if sa == "" {
		sa = route.DefaultServiceAccount
	}
	return route.ServiceAccountUsers + ns + ":" + sa
}

// ManagedLabelsPolicy renders the policy and its binding; ok is false when
// gatehouse manages no namespace label under o.
func ManagedLabelsPolicy(o route.ManifestOptions) (admissionregistrationv1.ValidatingAdmissionPolicy, admissionregistrationv1.ValidatingAdmissionPolicyBinding, bool) {
	keys := o.ManagedLabelKeys()
	if len(keys) == 0 {
		return admissionregistrationv1.ValidatingAdmissionPolicy{}, admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, false
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	// The keys the stored Namespace carries that the new one lacks or
	// carries with another value.
	changed := fmt.Sprintf("[%s].filter(k, has(oldObject.metadata.labels) && k in oldObject.metadata.labels && "+
		"!(has(object.metadata.labels) && k in object.metadata.labels && object.metadata.labels[k] == oldObject.metadata.labels[k]))",
		strings.Join(quoted, ", "))
	equivalent := admissionregistrationv1.Equivalent
	failure := admissionregistrationv1.Fail
	invalid := metav1.StatusReasonInvalid
	meta := metav1.ObjectMeta{Name: ManagedLabelsPolicyName, Labels: map[string]string{"app.kubernetes.io/name": "gatehouse"}}
	policy := admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: meta,
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &failure,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
						Resources: []string{"namespaces", "namespaces/status", "namespaces/finalize"}},
				}}},
				MatchPolicy:       &equivalent,
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: ServerUserCondition, Expression: fmt.Sprintf("request.userInfo.username != %q", ServerUsername(o)),
			}},
			Variables: []admissionregistrationv1.Variable{{Name: "changed", Expression: changed}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "size(variables.changed) == 0",
				MessageExpression: fmt.Sprintf("variables.changed.map(k, \"metadata.labels[\" + k + \"]: %s: the namespace label \" + k + %q).join(\"; \")",
					ManagedLabelChanged, managedLabelsMessage+attributionManagedLabels),
				Message: fmt.Sprintf("metadata.labels: %s: the namespace labels %s are removed or changed only by gatehouse%s",
					ManagedLabelChanged, strings.Join(keys, " and "), attributionManagedLabels),
				Reason: &invalid,
			}},
		},
	}
	// Only the namespaces exempt by name are left out (see above).
	names := &metav1.LabelSelector{}
	if exempt := o.ExemptNamespaces(o.Namespace); len(exempt) > 0 {
		names.MatchExpressions = []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: exempt,
		}}
	}
	binding := admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: meta,
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: ManagedLabelsPolicyName,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: names,
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       &equivalent,
			},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding, true
}

// managedLabelsManifests renders the policy and binding as YAML documents;
// none when gatehouse manages no namespace label.
func managedLabelsManifests(o route.ManifestOptions) ([]byte, error) {
	policy, binding, ok := ManagedLabelsPolicy(o)
	if !ok {
		return nil, nil
	}
	var out []byte
	for _, obj := range []any{&policy, &binding} {
		doc, err := marshalManifest(obj)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), doc...)
	}
	return out, nil
}
