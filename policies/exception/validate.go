package exception

// Validate reviews an Exception or ClusterException on CREATE and UPDATE.
//
// Reads: metadata.namespace, spec.match[*] (namespaces, kinds, names,
// labelSelector), spec.webhooks, spec.codes, spec.reason, spec.expires.
// Allows: a reason that is not blank; an expiry after now and within
// Rules.MaxDuration of it; an Exception only where Rules.Namespaced, naming
// no namespace but its own; a ClusterException entry that narrows the
// objects somehow; "*" for both webhooks and codes only when every match
// entry names its objects; webhooks and codes among Rules' known ones.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// Rules are what Validate holds an exception to: the server
// configuration's exceptions block and, where the caller knows them, the
// webhooks and codes that exist.
type Rules struct {
	// MaxDuration is exceptions.maxDuration: the latest expiry accepted is
	// now plus this.
	MaxDuration time.Duration
	// Namespaced is exceptions.namespaced: whether Exceptions are honoured.
	Namespaced bool
	// Webhooks are the registry's webhook names; nil leaves spec.webhooks
	// unchecked.
	Webhooks []string
	// Codes are the codes the webhooks can report; nil leaves spec.codes
	// unchecked.
	Codes []policies.Code
}

var (
	pathNamespace = field.NewPath("metadata", "namespace")
	pathSpec      = field.NewPath("spec")
	pathMatch     = pathSpec.Child("match")
	pathWebhooks  = pathSpec.Child("webhooks")
	pathCodes     = pathSpec.Child("codes")
	pathReason    = pathSpec.Child("reason")
	pathExpires   = pathSpec.Child("expires")
)

// Validate returns the findings about e at now, sorted. Each carries the
// offending value as evidence, so that an UPDATE which leaves that value
// as stored is warned, not denied (an expired exception can still lose its
// finalizers).
func Validate(e Entry, now time.Time, r Rules) []policies.Finding {
	var out []policies.Finding
	spec := &e.Spec
	if e.Namespaced() && !r.Namespaced {
		out = append(out, policies.Denial(ExceptionNamespacedDisabled, pathNamespace, e.Namespace, msgNamespacedOff))
	}
	out = append(out, validateExpiry(spec, now, r.MaxDuration)...)
	out = append(out, validateContent(e, r.Webhooks, r.Codes)...)
	policies.Sort(out)
	return out
}

// validateContent checks what e says, by rules that hold whenever it is
// read: a reason, object selectors that narrow, and webhooks and codes
// that can be excused, among webhooks and codes when those are not nil.
// The index holds the exceptions of the cluster to it as well (NewIndex),
// so an exception stored while the exception webhook did not enforce
// (Warn, Audit, or gatehouse not yet installed) excuses nothing by being
// stored.
func validateContent(e Entry, webhooks []string, codes []policies.Code) []policies.Finding {
	var out []policies.Finding
	spec := &e.Spec
	if strings.TrimSpace(spec.Reason) == "" {
		out = append(out, policies.Denial(ExceptionReasonMissing, pathReason, spec.Reason, msgReasonMissing))
	}
	out = append(out, validateMatch(e, allWildcard(spec.Webhooks) && allWildcard(spec.Codes))...)
	out = append(out, validateNames(pathWebhooks, spec.Webhooks, "webhook", webhooks != nil, func(w string) (policies.Finding, bool) {
		if slices.Contains(webhooks, w) {
			return policies.Finding{}, false
		}
		return policies.Denial(ExceptionUnknownWebhook, nil, w, msgUnknownWebhook), true
	})...)
	out = append(out, validateNames(pathCodes, spec.Codes, "code", true, func(c string) (policies.Finding, bool) {
		switch {
		case !excusableCode(policies.Code(c)):
			return policies.Denial(ExceptionCodeNeverExcused, nil, c, msgCodeNeverExcused), true
		case codes != nil && !slices.Contains(codes, policies.Code(c)):
			return policies.Denial(ExceptionUnknownCode, nil, c, msgUnknownCode), true
		}
		return policies.Finding{}, false
	})...)
	return out
}

// validateExpiry: the expiry lies after now and within maxDuration of it.
func validateExpiry(spec *exceptionsv1alpha1.ExceptionSpec, now time.Time, maxDuration time.Duration) []policies.Finding {
	expires := spec.Expires.Time
	evidence := expires.UTC().Format(time.RFC3339)
	switch {
	case !now.Before(expires):
		return []policies.Finding{policies.Denial(ExceptionExpired, pathExpires, evidence, msgExpired, maxDuration)}
	case expires.After(now.Add(maxDuration)):
		return []policies.Finding{policies.Denial(ExceptionExpiryTooFar, pathExpires, evidence, msgExpiryTooFar, maxDuration)}
	}
	return nil
}

// validateMatch checks each object selector; excusesAll says webhooks and
// codes are both "*", when every entry must name its objects.
func validateMatch(e Entry, excusesAll bool) []policies.Finding {
	var out []policies.Finding
	if len(e.Spec.Match) == 0 {
		return []policies.Finding{policies.Denial(ExceptionInvalid, pathMatch, "", msgListEmpty, "object selector")}
	}
	for i, sel := range e.Spec.Match {
		at := pathMatch.Index(i)
		for j, ns := range sel.Namespaces {
			nsPath := at.Child("namespaces").Index(j)
			switch {
			case len(validation.IsDNS1123Label(ns)) > 0:
				out = append(out, policies.Denial(ExceptionInvalid, nsPath, ns, msgNamespaceInvalid))
			case e.Namespaced() && ns != e.Namespace:
				out = append(out, policies.Denial(ExceptionOutsideNamespace, nsPath, ns, msgOutsideNamespace))
			}
		}
		for j, gk := range sel.Kinds {
			if gk.Kind == "" {
				out = append(out, policies.Denial(ExceptionInvalid, at.Child("kinds").Index(j).Child("kind"), "", msgEntryEmpty))
			}
		}
		for j, name := range sel.Names {
			if name == "" {
				out = append(out, policies.Denial(ExceptionInvalid, at.Child("names").Index(j), "", msgEntryEmpty))
			}
		}
		for _, err := range metav1validation.ValidateLabelSelector(sel.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, at.Child("labelSelector")) {
			// The error's detail states the rule; its value is the
			// exception's own and stays out of the message.
			f := policies.Denial(ExceptionInvalid, nil, fmt.Sprint(err.BadValue), msgSelectorInvalid, err.Type.String()+": "+err.Detail)
			f.Field = err.Field
			out = append(out, f)
		}
		if !e.Namespaced() && selectsEverything(sel) {
			out = append(out, policies.Denial(ExceptionTooBroad, at, "", msgSelectsEverything))
		}
		if excusesAll && len(sel.Names) == 0 {
			out = append(out, policies.Denial(ExceptionTooBroad, at.Child("names"), "", msgEverythingNamed))
		}
	}
	return out
}

// selectsEverything reports whether sel narrows nothing: no namespace, no
// kind, no name, and no label selector or one without requirements.
func selectsEverything(sel exceptionsv1alpha1.ObjectSelector) bool {
	return len(sel.Namespaces) == 0 && len(sel.Kinds) == 0 && len(sel.Names) == 0 &&
		(sel.LabelSelector == nil || (len(sel.LabelSelector.MatchLabels) == 0 && len(sel.LabelSelector.MatchExpressions) == 0))
}

// allWildcard reports whether list is "*" alone.
func allWildcard(list []string) bool {
	return len(list) == 1 && list[0] == exceptionsv1alpha1.Wildcard
}

// validateNames checks spec.webhooks or spec.codes at fldPath: not empty,
// no empty entry, "*" alone. When check is set, unknown returns the finding
// about an entry other than "*" (its path is set here), if any.
func validateNames(fldPath *field.Path, list []string, what string, check bool, unknown func(string) (policies.Finding, bool)) []policies.Finding {
	if len(list) == 0 {
		return []policies.Finding{policies.Denial(ExceptionInvalid, fldPath, "", msgListEmpty, what+`, or "*"`)}
	}
	var out []policies.Finding
	for i, name := range list {
		at := fldPath.Index(i)
		switch {
		case name == "":
			out = append(out, policies.Denial(ExceptionInvalid, at, "", msgEntryEmpty))
		case name == exceptionsv1alpha1.Wildcard:
			if len(list) > 1 {
				out = append(out, policies.Denial(ExceptionInvalid, at, name, msgWildcardNotAlone, what))
			}
		case check:
			if f, bad := unknown(name); bad {
				f.Field = at.String()
				out = append(out, f)
			}
		}
	}
	return out
}
