package webhooks

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Group is one combined endpoint (docs/contracts.md §10): every enabled webhook of
// one type and failure policy, run in registry order in one call. Each call
// the API server makes costs a TLS round trip and a full encode and decode
// of the object, and mutating entries run one after another; a Pod create
// that six entries intercept pays that once per group instead.
type Group struct {
	Name          string
	Path          string
	Type          Type
	FailurePolicy admissionregistrationv1.FailurePolicyType
}

// Groups are the combined endpoints, as few as the failure policies require.
var Groups = []Group{
	{Name: "mutating-ignore", Path: "/mutate/combined-ignore", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore},
	{Name: "mutating-fail", Path: "/mutate/combined-fail", Type: Mutating, FailurePolicy: admissionregistrationv1.Fail},
	{Name: "validating-fail", Path: "/validate/combined-fail", Type: Validating, FailurePolicy: admissionregistrationv1.Fail},
}

// harnessed says where a member runs relative to the harnessed-namespace
// label.
type harnessed int

const (
	anyNamespace harnessed = iota
	labelledOnly
	unlabelledOnly
)

// members returns the registry's webhooks that group g runs. A webhook that
// fails closed only in harnessed namespaces belongs to the failing-closed
// group there and to the failing-open group elsewhere, as its two entries in
// the separate layout do.
func (g Group) members() []member {
	var out []member
	for _, def := range Registry {
		if def.Type != g.Type {
			continue
		}
		switch {
		case def.FailClosedOnlyInHarnessed && g.FailurePolicy == admissionregistrationv1.Fail:
			out = append(out, member{def: def, where: labelledOnly})
		case def.FailClosedOnlyInHarnessed && g.FailurePolicy == admissionregistrationv1.Ignore:
			out = append(out, member{def: def, where: unlabelledOnly})
		case def.FailurePolicy == g.FailurePolicy:
			out = append(out, member{def: def, where: anyNamespace})
		}
	}
	return out
}

// selectsRequest is the part of selects that needs no namespace labels.
func (m member) selectsRequest(req *admission.Request, opts Options) bool {
	op := admissionregistrationv1.OperationType(req.Operation)
	in := m.def.Intercept
	return in.Matches(op, schema.GroupVersionResource(req.Resource), req.SubResource, opts) &&
		in.UserMatches(op, req.UserInfo.Username) && in.ObjectMatches(req.Namespace, req.Name, opts) &&
		in.ChangeMatches(op, req.Object.Raw, req.OldObject.Raw)
}

// selectsNamespace is the part of selects that reads the namespace's labels.
func (m member) selectsNamespace(namespaceLabels map[string]string, opts Options) bool {
	if !m.def.Intercept.NamespaceMatches(namespaceLabels, opts) {
		return false
	}
	_, labelled := namespaceLabels[opts.HarnessedNamespaceLabel]
	switch m.where {
	case labelledOnly:
		return labelled
	case unlabelledOnly:
		return !labelled
	}
	return true
}

// needsNamespace reports whether selecting m reads the namespace's labels.
func (m member) needsNamespace() bool {
	return m.def.Intercept.OptIn || m.where != anyNamespace
}
