package exception

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// Subject is the object a review is about, as an exception's match reads
// it. On UPDATE, Labels are the labels the object is updated to: an
// exception judges the object that will be stored.
type Subject struct {
	// Namespace is empty for a cluster-scoped object.
	Namespace string
	Kind      schema.GroupKind
	// Name is empty on a CREATE with generateName; such an object matches
	// no names.
	Name   string
	Labels map[string]string
}

// Options are the server configuration's exceptions block as the index
// applies it.
type Options struct {
	// Namespaced is exceptions.namespaced: off, Exceptions excuse nothing
	// (and are reported as Disabled).
	Namespaced bool
	// MaxDuration is exceptions.maxDuration: an exception whose expiry lies
	// further from the time of a review excuses nothing then (and is
	// reported as Invalid), as the exception webhook would have refused
	// it. Zero leaves expiries unbounded.
	MaxDuration time.Duration
}

// Index holds the exceptions of the cluster, compiled for matching. Build
// it when the exceptions change (NewIndex), not per review: it is
// immutable and safe for concurrent use, and expiry is judged at each
// Match, so an index built yesterday stops excusing on time.
type Index struct {
	entries     []compiled
	maxDuration time.Duration
	// byNamespace lists, per namespace, the selectors that may match an
	// object there: the namespace's own Exceptions' and those of
	// ClusterExceptions that name it. anyNamespace are the selectors of
	// ClusterExceptions that name no namespace, which match in every
	// namespace and cluster-scoped objects too. Each list is in entry order.
	byNamespace  map[string][]selector
	anyNamespace []selector
}

// compiled is one exception.
type compiled struct {
	key     string
	expires time.Time
	state   State // Disabled or Invalid when it can never excuse; "" otherwise
	// allWebhooks and allCodes stand for "*".
	allWebhooks, allCodes bool
	webhooks              []string
	codes                 []policies.Code
}

// selector is one entry of an exception's match, for one namespace list.
type selector struct {
	entry int32
	kinds []schema.GroupKind // nil: any
	names []string           // nil: any
	// labels is nil for no labelSelector.
	labels labels.Selector
}

func (s *selector) matches(subject *Subject) bool {
	if s.kinds != nil && !slices.Contains(s.kinds, subject.Kind) {
		return false
	}
	if s.names != nil && !slices.Contains(s.names, subject.Name) {
		return false
	}
	return s.labels == nil || s.labels.Matches(labels.Set(subject.Labels))
}

// NewIndex compiles entries. An Exception while opts.Namespaced is off, and
// an exception that breaks a rule of what it may say (validateContent: no
// reason, a match that selects everything, a label selector that does not
// parse; one the exception webhook would have refused), excuse nothing and
// are reported as Disabled and Invalid. An Exception's selectors apply in its
// own namespace only, whatever their namespaces say: an entry naming other
// namespaces alone matches nothing.
//
// Keys are unique in a cluster; entries given twice under one key (offline
// input) are kept apart, and Excuse names the same key whichever excuses.
func NewIndex(entries []Entry, opts Options) *Index {
	sorted := slices.Clone(entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key() < sorted[j].Key() })
	ix := &Index{entries: make([]compiled, len(sorted)), maxDuration: opts.MaxDuration, byNamespace: map[string][]selector{}}
	for i := range sorted {
		e := &sorted[i]
		c := compiled{
			key:         e.Key(),
			expires:     e.Spec.Expires.Time,
			allWebhooks: slices.Contains(e.Spec.Webhooks, exceptionsv1alpha1.Wildcard),
			allCodes:    slices.Contains(e.Spec.Codes, exceptionsv1alpha1.Wildcard),
			webhooks:    slices.Clone(e.Spec.Webhooks),
		}
		for _, code := range e.Spec.Codes {
			c.codes = append(c.codes, policies.Code(code))
		}
		sels, ok := compileMatch(int32(i), e.Spec.Match)
		switch {
		case e.Namespaced() && !opts.Namespaced:
			c.state = StateDisabled
		case !ok || len(validateContent(*e, nil, nil)) > 0:
			c.state = StateInvalid
		default:
			ix.place(e, sels)
		}
		ix.entries[i] = c
	}
	return ix
}

// place files the selectors of e under the namespaces they match in.
func (ix *Index) place(e *Entry, sels []compiledSelector) {
	for _, s := range sels {
		switch {
		case e.Namespaced():
			if len(s.namespaces) == 0 || slices.Contains(s.namespaces, e.Namespace) {
				ix.byNamespace[e.Namespace] = append(ix.byNamespace[e.Namespace], s.selector)
			}
		case len(s.namespaces) == 0:
			ix.anyNamespace = append(ix.anyNamespace, s.selector)
		default:
			seen := map[string]bool{}
			for _, ns := range s.namespaces {
				if ns != "" && !seen[ns] {
					seen[ns] = true
					ix.byNamespace[ns] = append(ix.byNamespace[ns], s.selector)
				}
			}
		}
	}
}

// compiledSelector is a selector with the namespaces it names.
type compiledSelector struct {
	selector
	namespaces []string
}

// compileMatch compiles the entries of one exception's match; ok is false
// when a label selector does not parse.
func compileMatch(entry int32, match []exceptionsv1alpha1.ObjectSelector) ([]compiledSelector, bool) {
	out := make([]compiledSelector, 0, len(match))
	for _, m := range match {
		s := compiledSelector{selector: selector{entry: entry, names: slices.Clone(m.Names)}, namespaces: m.Namespaces}
		for _, gk := range m.Kinds {
			s.kinds = append(s.kinds, schema.GroupKind{Group: gk.Group, Kind: gk.Kind})
		}
		if m.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(m.LabelSelector)
			if err != nil {
				return nil, false
			}
			s.labels = sel
		}
		out = append(out, s)
	}
	return out, true
}

// Matches are the exceptions whose match selects one review's object,
// split into those in force and those expired at the review's time.
type Matches struct {
	ix            *Index
	live, expired []int32 // entry indexes, ascending: key order
}

// Match returns the exceptions that select subject, judged at now: once per
// review, before its findings are excused one by one.
func (ix *Index) Match(subject Subject, now time.Time) Matches {
	m := Matches{ix: ix}
	if ix == nil {
		return m
	}
	// A cluster-scoped object (namespace "") is reached only by
	// ClusterExceptions without namespaces: place files nothing under "".
	m.collect(ix.byNamespace[subject.Namespace], &subject, now)
	m.collect(ix.anyNamespace, &subject, now)
	return m
}

// collect adds the exceptions of sels that select subject.
func (m *Matches) collect(sels []selector, subject *Subject, now time.Time) {
	for i := range sels {
		s := &sels[i]
		if !s.matches(subject) {
			continue
		}
		switch expires := m.ix.entries[s.entry].expires; {
		case !now.Before(expires):
			m.expired = insertSorted(m.expired, s.entry)
		case !m.ix.tooFar(expires, now):
			m.live = insertSorted(m.live, s.entry)
		}
	}
}

// tooFar reports whether an expiry lies further from now than the
// exceptions' maximum duration: such an exception excuses nothing then.
func (ix *Index) tooFar(expires, now time.Time) bool {
	return ix.maxDuration > 0 && expires.After(now.Add(ix.maxDuration))
}

// insertSorted adds v to the ascending list, once.
func insertSorted(list []int32, v int32) []int32 {
	i, found := slices.BinarySearch(list, v)
	if found {
		return list
	}
	return slices.Insert(list, i, v)
}

// Excuse reports the exception that excuses f, reported by webhook, if
// any: the first by key of those in force whose webhooks and codes name
// it. A finding that is not Excusable is never excused.
func (m Matches) Excuse(webhook string, f policies.Finding) (name string, ok bool) {
	return m.first(m.live, webhook, f)
}

// Expired reports the exception that would excuse f had it not expired:
// the first by key, so that the response can say why the finding was not
// excused. Never a finding that is not Excusable.
func (m Matches) Expired(webhook string, f policies.Finding) (name string, ok bool) {
	return m.first(m.expired, webhook, f)
}

func (m Matches) first(list []int32, webhook string, f policies.Finding) (string, bool) {
	if len(list) == 0 || !Excusable(f) {
		return "", false
	}
	for _, i := range list {
		c := &m.ix.entries[i]
		if (c.allWebhooks || slices.Contains(c.webhooks, webhook)) && (c.allCodes || slices.Contains(c.codes, f.Code)) {
			return c.key, true
		}
	}
	return "", false
}

// Empty reports whether no exception, in force or expired, selects the
// review's object: the findings need not be offered to Excuse.
func (m Matches) Empty() bool { return len(m.live) == 0 && len(m.expired) == 0 }

// Expires returns the expiry of the exception named name, one of those
// that select the review's object (as Excuse or Expired named it).
func (m Matches) Expires(name string) (time.Time, bool) {
	for _, list := range [][]int32{m.live, m.expired} {
		for _, i := range list {
			if c := &m.ix.entries[i]; c.key == name {
				return c.expires, true
			}
		}
	}
	return time.Time{}, false
}
