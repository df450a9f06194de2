package app

import (
	"context"
	"maps"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// clusterState is what `check` knows of the cluster: the objects given
// with --state and --namespace-labels, plus every object admitted so far,
// and, with --cluster, the cluster's own (cluster). Webhooks that read
// cluster state get it from here offline, as the server gets it from its
// informer caches: the same index functions, each lookup a map access, and
// only what the lookups read kept (namespace labels; clusterstate.TrimForLookups
// of the indexed kinds; apps/v1 workloads whole, for OVR). An indexed object
// is known by its route.ObjectKey ("<namespace>/<name>" when namespaced):
// adding it again (an object given with --state and then checked, or
// admitted twice) replaces it, as an informer's update does, and hides the
// cluster's object of that key.
//
// What a review needs by name and check was not given, it does not invent
// (docs/design.md, "What check cannot decide"): the lookup answers
// *route.StateNotGiven, remembered for TakeGaps, and the webhook's
// result is undecided. Needed by name are the Namespace of a namespaced
// object (always: no cluster lacks it), and, without --cluster, a role a
// harness binds, the DependencyGroup a source requires, and a harness
// naming a namespace labelled as harnessed. Lookups of other objects that
// clash (another DependencyGroup listing the same CRD) are answered from
// what check has.
type clusterState struct {
	namespaceLabels map[string]map[string]string
	workloads       []map[string]any
	// byName (by ObjectKey) and byIndex hold the indexed kinds.
	byName  map[schema.GroupVersionKind]map[string]map[string]any
	byIndex map[indexKey][]map[string]any
	// cluster is the cluster under the objects given (--cluster); nil
	// without.
	cluster *clusterView
	// harnessedLabel is the namespace label under which harness-proxy fails
	// closed (route.Options.HarnessedNamespaceLabel).
	harnessedLabel string
	gaps           []string
	// exceptions are the Exceptions and ClusterExceptions given or
	// admitted, by key; index is compiled from them on the first read after
	// a change (nil: stale). exceptionOpts is the configuration's block.
	exceptions    map[string]exception.Entry
	index         *exception.Index
	exceptionOpts exception.Options
}

// clusterView is what --cluster reads: the informer caches `gatehouse
// audit` reads (startClusterState). workloads is nil when OVR is off.
type clusterView struct {
	state interface {
		route.StateReader
		route.NamespaceReader
	}
	workloads route.WorkloadReader
	// exceptions are the cluster's, under those given.
	exceptions *clusterstate.CachedExceptions
}

type indexKey struct {
	gvk          schema.GroupVersionKind
	index, value string
}

var (
	_ route.StateGaps       = (*clusterState)(nil)
	_ route.ExceptionReader = (*clusterState)(nil)
)

// Exceptions implements route.ExceptionReader over the exceptions given
// with --state or admitted so far (and, with --cluster, the cluster's), as
// the server's informers hold them: an exception checked before an object
// excuses its findings.
func (s *clusterState) Exceptions() *exception.Index {
	if s.index == nil {
		var entries []exception.Entry
		if s.cluster != nil && s.cluster.exceptions != nil {
			// An exception given or admitted replaces the cluster's of
			// its key, as its UPDATE would.
			for _, e := range s.cluster.exceptions.Entries() {
				if _, given := s.exceptions[e.Key()]; !given {
					entries = append(entries, e)
				}
			}
		}
		for _, e := range s.exceptions {
			entries = append(entries, e)
		}
		s.index = exception.NewIndex(entries, s.exceptionOpts)
	}
	return s.index
}

func newClusterState(docs []Document) *clusterState {
	s := &clusterState{
		namespaceLabels: map[string]map[string]string{},
		byName:          map[schema.GroupVersionKind]map[string]map[string]any{},
		byIndex:         map[indexKey][]map[string]any{},
	}
	for _, d := range docs {
		s.add(d.Object)
	}
	return s
}

// addNamespace records a namespace and its labels, as the API server's
// namespaceSelector sees them (with kubernetes.io/metadata.name).
func (s *clusterState) addNamespace(name string, labels map[string]string) {
	withName := map[string]string{"kubernetes.io/metadata.name": name}
	maps.Copy(withName, labels)
	s.namespaceLabels[name] = withName
}

// add records an object that exists (or was just admitted), keeping only
// what a lookup reads.
func (s *clusterState) add(obj map[string]any) {
	ref := objectRef(obj)
	gvk := objectGVK(obj)
	switch {
	case ref.APIVersion == "v1" && ref.Kind == "Namespace":
		labels := map[string]string{}
		if meta, ok := obj["metadata"].(map[string]any); ok {
			if l, ok := meta["labels"].(map[string]any); ok {
				for k, v := range l {
					if sv, ok := v.(string); ok {
						labels[k] = sv
					}
				}
			}
		}
		s.addNamespace(ref.Name, labels)
	case gvk == exception.GVK || gvk == exception.ClusterGVK:
		// One that does not decode excuses nothing; the exception webhook
		// says why when it is checked.
		if e, err := exception.FromObject(obj); err == nil {
			if s.exceptions == nil {
				s.exceptions = map[string]exception.Entry{}
			}
			s.exceptions[e.Key()] = e
			s.index = nil
		}
	case gvk.Group == "apps":
		s.workloads = append(s.workloads, obj)
	case len(clusterstate.IndexNames(gvk)) > 0:
		kept := clusterstate.TrimForLookups(obj)
		key := route.ObjectKey(kept)
		if s.byName[gvk] == nil {
			s.byName[gvk] = map[string]map[string]any{}
		}
		if old, ok := s.byName[gvk][key]; ok {
			s.unindex(gvk, old)
		}
		s.byName[gvk][key] = kept
		for _, index := range clusterstate.IndexNames(gvk) {
			for _, v := range clusterstate.IndexValues(gvk, index, kept) {
				k := indexKey{gvk, index, v}
				s.byIndex[k] = append(s.byIndex[k], kept)
			}
		}
	}
}

// notGiven remembers what a lookup needed and check was not given, and is
// the lookup's answer.
func (s *clusterState) notGiven(what string) error {
	s.gaps = append(s.gaps, what)
	return &route.StateNotGiven{What: what}
}

// TakeGaps implements route.StateGaps.
func (s *clusterState) TakeGaps() []string {
	if len(s.gaps) == 0 {
		return nil
	}
	out := slices.Compact(slices.Sorted(slices.Values(s.gaps)))
	s.gaps = s.gaps[:0]
	return out
}

// unindex removes obj from every index entry of gvk it is found under.
func (s *clusterState) unindex(gvk schema.GroupVersionKind, obj map[string]any) {
	for _, index := range clusterstate.IndexNames(gvk) {
		for _, v := range clusterstate.IndexValues(gvk, index, obj) {
			k := indexKey{gvk, index, v}
			kept := s.byIndex[k][:0:0]
			for _, o := range s.byIndex[k] {
				if route.ObjectKey(o) != route.ObjectKey(obj) {
					kept = append(kept, o)
				}
			}
			s.byIndex[k] = kept
		}
	}
}

// NamespaceLabels implements route.NamespaceReader: the labels of a
// Namespace given (--state, --namespace-labels) or admitted earlier, else
// the cluster's with --cluster; without it, a namespace check was not given
// is not known.
func (s *clusterState) NamespaceLabels(name string) (map[string]string, error) {
	if labels, ok := s.namespaceLabels[name]; ok {
		return labels, nil
	}
	if s.cluster != nil {
		return s.cluster.state.NamespaceLabels(name)
	}
	return nil, s.notGiven("Namespace " + name)
}

// ListWorkloads implements route.WorkloadReader over the known objects,
// and the cluster's that none of them replaces.
func (s *clusterState) ListWorkloads(ctx context.Context, namespace, kind string, labels map[string]string) ([]map[string]any, error) {
	var out []map[string]any
	given := map[string]bool{}
	for _, obj := range s.workloads {
		ref := objectRef(obj)
		if ref.APIVersion != "apps/v1" || ref.Kind != kind || ref.Namespace != namespace {
			continue
		}
		given[ref.Name] = true
		meta, _ := obj["metadata"].(map[string]any)
		have, _ := meta["labels"].(map[string]any)
		match := true
		for k, v := range labels {
			if have[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, obj)
		}
	}
	if s.cluster == nil || s.cluster.workloads == nil {
		return out, nil
	}
	live, err := s.cluster.workloads.ListWorkloads(ctx, namespace, kind, labels)
	if err != nil {
		return nil, err
	}
	for _, obj := range live {
		if !given[objectRef(obj).Name] {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Objects implements route.StateReader with the index, over the known
// objects and the cluster's that none of them replaces.
func (s *clusterState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	given := s.byIndex[indexKey{gvk, index, value}]
	if s.cluster == nil {
		if len(given) == 0 {
			if what, needed := s.neededByName(gvk, index, value); needed {
				return nil, s.notGiven(what)
			}
		}
		return given, nil
	}
	live, err := s.cluster.state.Objects(gvk, index, value)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(given)
	for _, obj := range live {
		if _, replaced := s.byName[gvk][route.ObjectKey(obj)]; !replaced {
			out = append(out, obj)
		}
	}
	return out, nil
}

// neededByName reports whether an empty answer to the lookup would be a
// guess: the lookup names one object (a role a harness binds), or the
// harness that the labels of a given namespace say exists.
func (s *clusterState) neededByName(gvk schema.GroupVersionKind, index, value string) (string, bool) {
	switch {
	case index == harness.IndexName:
		return gvk.Kind + " " + value, true
	case index == harness.IndexClaimNamespace && slices.Contains(harness.GVKs(), gvk) && s.harnessedLabel != "":
		if _, harnessed := s.namespaceLabels[value][s.harnessedLabel]; !harnessed {
			return "", false
		}
		for _, other := range harness.GVKs() {
			if len(s.byIndex[indexKey{other, index, value}]) > 0 {
				return "", false
			}
		}
		return "the OperatorHarness naming namespace " + value + " (labelled " + s.harnessedLabel + ")", true
	}
	return "", false
}

// Lookup implements route.StateReader: the ObjectKeys of Objects, sorted.
func (s *clusterState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, err := s.Objects(gvk, index, value)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(objs))
	for _, obj := range objs {
		names = append(names, route.ObjectKey(obj))
	}
	sort.Strings(names)
	return slices.Compact(names), nil
}

// Exists implements route.StateReader for a cluster-scoped kind: an
// object check was not given is not known to be absent, without --cluster.
func (s *clusterState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	if _, ok := s.byName[gvk][name]; ok {
		return true, nil
	}
	if s.cluster != nil {
		return s.cluster.state.Exists(gvk, name)
	}
	return false, s.notGiven(gvk.Kind + " " + name)
}

func objectGVK(obj map[string]any) schema.GroupVersionKind {
	ref := objectRef(obj)
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}
