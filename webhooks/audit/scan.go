// Package audit reviews the objects a cluster already stores through the one
// review chain (webhooks.Offline, as `gatehouse check` runs it), against the
// cluster's own state. It is the scan behind `gatehouse audit` and the
// server's background audit, which differ only in what they do with each
// result (print it, or write it into a report of each configured report API).
//
// What is reviewed (docs/audit.md): every stored object of every resource an
// enabled webhook intercepts on CREATE, found by discovery (built-in kinds,
// and the product custom resources of the configured API groups that the
// cluster serves), as a CREATE of the object as stored, less
// metadata.managedFields and status, which the API server resets or ignores
// before admission and no evaluator reads. A webhook's catch-all rule
// (harness-labels copies scope labels onto any new object) does not make the
// audit list every resource of the cluster: only the resources named in the
// webhooks' rules, and product groups, are listed.
//
// Memory stays bounded in bytes, not objects: the Pager lists page by page
// (limit/continue, pages sized by the bytes of their objects) and decodes
// each page as it streams in, one object at a time, which is dropped once
// reviewed; only the results the caller keeps remain. The client's rate
// limiter (rest.Config QPS and Burst) paces the list calls. Only get and
// list are used.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// User is the user an audited object is reviewed as.
const User = "gatehouse-audit"

// Target is one resource the audit lists.
type Target struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// Namespace and Name, when set, limit the list to one object: the only
	// webhooks that take the resource watch that one object (the
	// component-override ConfigMap), so no other is read.
	Namespace, Name string
}

// Object names one audited object.
type Object struct {
	Resource   schema.GroupVersionResource
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	UID        types.UID
}

// Result is what the chain decided on one stored object: one decision per
// webhook that took it (none when no webhook took it).
type Result struct {
	Object    Object
	Decisions []webhooks.Decision
	// Excused names, per finding, the exception that excuses it
	// (docs/contracts.md §12), as "namespace/name" or "name", from the
	// decisions' excusals (ExcusedIn); nil when none was excused. ReportResults reports an excused finding as a
	// skip with the property PropertyExcusedBy (docs/audit.md, "Excused
	// findings").
	Excused map[FindingKey]string
	// Expired names, per finding, the exception that would excuse it had
	// it not expired (ExpiredIn); the finding keeps its fail or warn, and
	// its result names the exception in PropertyExceptionExpired.
	Expired map[FindingKey]string
}

// FindingKey names one finding of one webhook's decision on an object.
type FindingKey struct {
	Webhook string
	Code    policies.Code
	Field   string
}

// Progress is told, every hundred objects and at the end of each resource,
// how far the scan is.
type Progress func(target Target, objects int)

// Scanner lists and reviews stored objects.
type Scanner struct {
	pager     *Pager
	discovery discovery.DiscoveryInterface
	hooks     []*webhooks.Webhook
	opts      route.Options
	chain     *webhooks.Offline
	// SkipNamespaces are never audited: the webhook configurations exclude
	// them, so gatehouse never judges their objects.
	SkipNamespaces []string
	// Progress, when set, is told how far the scan is.
	Progress Progress
}

// NewScanner returns a scanner that lists with pager and reviews through
// the enabled webhooks hooks (from webhooks.Build with opts, whose readers
// hold the cluster's state).
func NewScanner(pager *Pager, disc discovery.DiscoveryInterface, hooks []*webhooks.Webhook, opts route.Options) *Scanner {
	return &Scanner{pager: pager, discovery: disc, hooks: hooks, opts: opts, chain: webhooks.NewOffline(hooks, opts)}
}

// Targets returns the resources the cluster serves that an enabled webhook
// intercepts on CREATE, by name or as a product resource, sorted by group
// and resource. A group whose discovery fails is left out of the error only
// when nothing at all could be discovered.
func (s *Scanner) Targets() ([]Target, error) {
	lists, err := discovery.ServerPreferredResources(s.discovery)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if len(lists) == 0 && err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []Target
	for _, list := range lists {
		gv, perr := schema.ParseGroupVersion(list.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			if taken, oneObject := s.intercepted(gvr); taken {
				t := Target{GVR: gvr, Kind: r.Kind, Namespaced: r.Namespaced}
				if oneObject {
					t.Namespace, t.Name = s.opts.Overrides.Namespace, s.opts.Overrides.ConfigMapName
				}
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVR, out[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
	return out, nil
}

// intercepted reports whether an enabled webhook takes a CREATE of gvr by its
// rules, leaving out catch-all rules (see the package comment), and whether
// every webhook that takes it watches one object only.
func (s *Scanner) intercepted(gvr schema.GroupVersionResource) (taken, oneObject bool) {
	oneObject = true
	for _, h := range s.hooks {
		in := h.Intercept
		if in.Beyond.AllGroups() {
			in.Beyond = route.NothingBeyond
		}
		if in.Matches(admissionregistrationv1.Create, gvr, "", s.opts) {
			taken = true
			oneObject = oneObject && in.Object == route.OverrideConfigMapOnly
		}
	}
	return taken, taken && oneObject
}

// Stats says what a scan read.
type Stats struct {
	// Objects is the number of objects reviewed.
	Objects int
	// Forbidden are the targets the client may not list (RBAC): skipped,
	// and named, so that a partial audit never reads as a clean one.
	Forbidden []Target
}

// Scan reviews every stored object of every target, one at a time, and
// hands each result to visit in list order. A target whose resource
// disappeared since discovery is skipped; one the client may not list is
// skipped and named in Stats.Forbidden. An error of visit ends the scan.
func (s *Scanner) Scan(ctx context.Context, targets []Target, visit func(Result) error) (Stats, error) {
	var stats Stats
	for _, t := range targets {
		n, err := s.scanTarget(ctx, t, visit)
		stats.Objects += n
		// Only the list call's own refusal skips a resource: an error of
		// visit (a report that could not be written) is no list refusal.
		var listErr *ListError
		if errors.As(err, &listErr) && listErr.FirstPage {
			switch {
			case apierrors.IsForbidden(listErr.Err):
				stats.Forbidden = append(stats.Forbidden, t)
				continue
			case apierrors.IsNotFound(listErr.Err):
				continue // the resource went away (a CRD deleted since discovery)
			}
		}
		if err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// progressEvery is how many objects pass between two Progress calls.
const progressEvery = 100

func (s *Scanner) scanTarget(ctx context.Context, t Target, visit func(Result) error) (int, error) {
	l := List{GVR: t.GVR, Kind: t.Kind, Namespace: t.Namespace}
	if t.Name != "" {
		l.FieldSelector = fields.OneTermEqualSelector("metadata.name", t.Name).String()
	}
	n := 0
	err := s.pager.Each(ctx, l, func(obj *unstructured.Unstructured) error {
		if slices.Contains(s.SkipNamespaces, obj.GetNamespace()) {
			return nil
		}
		res, err := s.Review(ctx, t, obj)
		if err != nil {
			return err
		}
		n++
		if s.Progress != nil && n%progressEvery == 0 {
			s.Progress(t, n)
		}
		return visit(res)
	})
	if s.Progress != nil {
		s.Progress(t, n)
	}
	return n, err
}

// Review runs one stored object through the chain as a CREATE.
func (s *Scanner) Review(ctx context.Context, t Target, obj *unstructured.Unstructured) (Result, error) {
	req, ref, err := Request(t, obj)
	if err != nil {
		return Result{}, err
	}
	decisions, _ := s.chain.Review(ctx, req)
	return Result{Object: ref, Decisions: decisions, Excused: ExcusedIn(decisions), Expired: ExpiredIn(decisions)}, nil
}

// ExcusedIn is Result.Excused of decisions: per finding an exception
// excused, the exception's name; nil when none was.
func ExcusedIn(decisions []webhooks.Decision) map[FindingKey]string {
	return excusals(decisions, func(d *webhooks.Decision) []webhooks.Excusal { return d.Excused })
}

// CountExcused adds to counts, per exception, the findings of r it
// excused, as r's reports show them: the background audit and `gatehouse
// audit` count alike.
func (r Result) CountExcused(counts map[string]int) {
	for _, name := range r.Excused {
		counts[name]++
	}
}

// ExpiredIn is Result.Expired of decisions.
func ExpiredIn(decisions []webhooks.Decision) map[FindingKey]string {
	return excusals(decisions, func(d *webhooks.Decision) []webhooks.Excusal { return d.Expired })
}

func excusals(decisions []webhooks.Decision, of func(*webhooks.Decision) []webhooks.Excusal) map[FindingKey]string {
	var out map[FindingKey]string
	for i := range decisions {
		d := &decisions[i]
		for _, e := range of(d) {
			if out == nil {
				out = map[FindingKey]string{}
			}
			out[FindingKey{Webhook: d.Webhook, Code: e.Finding.Code, Field: e.Finding.Field}] = e.Exception
		}
	}
	return out
}

// Request is the CREATE-like review of a stored object, as `gatehouse check`
// builds one for a manifest: the object as stored, less managedFields and
// status (see the package comment), by User.
func Request(t Target, obj *unstructured.Unstructured) (admission.Request, Object, error) {
	ref := Object{Resource: t.GVR, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
	if ref.Kind == "" {
		return admission.Request{}, ref, errors.New("a listed object without a kind")
	}
	reviewed := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		if k != "status" {
			reviewed[k] = v
		}
	}
	if meta, ok := obj.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "managedFields" {
				m[k] = v
			}
		}
		reviewed["metadata"] = m
	}
	raw, err := json.Marshal(reviewed)
	if err != nil {
		return admission.Request{}, ref, fmt.Errorf("%s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	gvr := metav1.GroupVersionResource(t.GVR)
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:             types.UID("audit-" + string(ref.UID)),
		Kind:            metav1.GroupVersionKind(gvk),
		Resource:        gvr,
		RequestKind:     ptr(metav1.GroupVersionKind(gvk)),
		RequestResource: &gvr,
		Name:            ref.Name,
		Namespace:       ref.Namespace,
		Operation:       admissionv1.Create,
		UserInfo:        authenticationv1.UserInfo{Username: User},
		Object:          runtime.RawExtension{Raw: raw},
	}}, ref, nil
}

func ptr[T any](v T) *T { return &v }
