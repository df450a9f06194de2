package webhooks

import (
	"maps"
	"slices"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
)

// Selections kept current from cluster state (docs/harness-proxy-and-labels.md,
// "Selection"): with Options.ManagedNamespaceLabels, a leader-elected
// controller (webhooks/controllers) labels
//   - with Options.HarnessedNamespaceLabel every namespace that an
//     OperatorHarness with injectProxyConfiguration: true names, where
//     harness-proxy fails closed;
//   - with Options.ScopedNamespaceLabel every namespace that carries the
//     scope label of an OperatorHarness in Enforce mode, the only namespaces
//     whose objects harness-labels is sent;
//
// and the webhook configurations select by those labels alone. `gatehouse
// check` adds them to the namespaces it is given, as the controller would.

// ManagedLabel is the value of a managed namespace label.
const ManagedLabel = "true"

// ManagedNamespaceLabels returns which of the two managed labels the
// namespace called name, with these labels, should carry while these
// harnesses exist (both kinds of OperatorHarness, as decoded JSON).
func ManagedNamespaceLabels(opts Options, name string, labels map[string]string, harnesses []map[string]any) map[string]string {
	out := map[string]string{}
	if slices.Contains(proxy.InjectedNamespaces(harnesses), name) {
		out[opts.HarnessedNamespaceLabel] = ManagedLabel
	}
	for _, key := range scopelabel.EnforcedKeys(harnesses) {
		if _, ok := labels[key]; ok {
			out[opts.ScopedNamespaceLabel] = ManagedLabel
			break
		}
	}
	return out
}

// withManagedLabels adds to a namespace's labels the managed labels it
// would carry, from the harnesses the cluster view holds. The view's map is
// its own: the result is a copy when anything is added.
func withManagedLabels(opts Options, name string, labels map[string]string) (map[string]string, error) {
	if opts.ClusterState == nil {
		return labels, nil
	}
	var harnesses []map[string]any
	for _, gvk := range harness.GVKs {
		named, err := opts.ClusterState.Objects(gvk, harness.IndexClaimNamespace, name)
		if err != nil {
			return nil, err
		}
		harnesses = append(harnesses, named...)
		for key := range labels {
			scoping, err := opts.ClusterState.Objects(gvk, harness.IndexScopeLabel, key)
			if err != nil {
				return nil, err
			}
			harnesses = append(harnesses, scoping...)
		}
	}
	managed := ManagedNamespaceLabels(opts, name, labels, harnesses)
	if len(managed) == 0 {
		return labels, nil
	}
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, managed)
	return out, nil
}
