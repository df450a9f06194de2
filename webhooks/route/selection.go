package route

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
)

// Selections kept current from cluster state (docs/harness-proxy-and-labels.md,
// "Selection"): with Options.ManagedSelections, a leader-elected
// controller (webhooks/controllers) labels
//   - with Options.HarnessedNamespaceLabel every namespace that an
//     OperatorHarness with injectProxyConfiguration: true names, where
//     harness-proxy fails closed;
//   - with Options.ScopedNamespaceLabel every namespace that carries the
//     scope label of an OperatorHarness in Enforce mode, the only namespaces
//     whose objects harness-labels is sent;
//
// and the webhook configurations select by those labels alone. It also adds
// to the entries that only harnessed service accounts need reach
// (HarnessedAccountEntries: the cluster-scoped creates of harness-labels,
// harness-labels-guard) the matchCondition HarnessedAccountsCondition, the
// list of the service accounts the harnesses claim. `gatehouse check`
// applies both as the controller would.

// ManagedLabel is the value of a managed namespace label.
const ManagedLabel = "true"

// ManagedSelections returns which of the two managed labels the
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

// WithManagedLabels adds to a namespace's labels the managed labels it
// would carry, from the harnesses the cluster view holds. The view's map is
// its own: the result is a copy when anything is added.
func WithManagedLabels(opts Options, name string, labels map[string]string) (map[string]string, error) {
	if opts.ClusterState == nil {
		return labels, nil
	}
	var harnesses []map[string]any
	for _, gvk := range harness.GVKs() {
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

// HarnessedAccountsCondition names the matchCondition gatehouse adds to the
// entries of HarnessedAccountEntries. The rendered configurations leave it
// out, so that whoever applies them (a GitOps tool) owns none of it: before
// gatehouse adds it, those entries are sent every service account's
// requests.
const HarnessedAccountsCondition = "gatehouse-harnessed-accounts"

// maxAccountsExpression bounds the condition's expression; a longer list
// renders as "true", every service account, as before it was added.
const maxAccountsExpression = 8192

// HarnessedAccountsExpression is the CEL expression of
// HarnessedAccountsCondition: true for the requests of every service
// account an OperatorHarness (either group, any mode) claims, by the
// claims the server's own lookups index (harness.IndexClaim), and false
// when none does.
func HarnessedAccountsExpression(harnesses []map[string]any) string {
	var users, prefixes []string
	for _, h := range harnesses {
		for _, claim := range policies.IndexValues(harness.Indexes(), harness.GVKs()[0], harness.IndexClaim, h) {
			namespace, account, _ := strings.Cut(claim, "/")
			if account == "*" {
				prefixes = append(prefixes, fmt.Sprintf("request.userInfo.username.startsWith(%q)", ServiceAccountUsers+namespace+":"))
			} else {
				users = append(users, fmt.Sprintf("%q", ServiceAccountUsers+namespace+":"+account))
			}
		}
	}
	slices.Sort(users)
	slices.Sort(prefixes)
	var terms []string
	if users = slices.Compact(users); len(users) > 0 {
		terms = append(terms, "request.userInfo.username in ["+strings.Join(users, ", ")+"]")
	}
	terms = append(terms, slices.Compact(prefixes)...)
	expr := strings.Join(terms, " || ")
	switch {
	case expr == "":
		return "false"
	case len(expr) > maxAccountsExpression:
		return "true"
	}
	return expr
}

// HarnessedAccountEntries are the names of the entries, in either layout,
// that only the requests of harnessed service accounts need reach under
// opts (none unless gatehouse manages the selections).
func HarnessedAccountEntries(opts Options) []string {
	var out []string
	for _, def := range registry {
		for _, p := range def.Placements(opts) {
			if p.Accounts {
				out = append(out, def.Name+p.Suffix+".gatehouse.dev")
			}
		}
	}
	for _, g := range groupTable {
		if g.Accounts {
			out = append(out, g.EntryNames(opts)...)
		}
	}
	return out
}

// harnessedAccount reports whether a harness in the cluster view claims the
// service account username; true when the view cannot say.
func harnessedAccount(opts Options, username string) bool {
	namespace, account, ok := scopelabel.ServiceAccount(username)
	if !ok {
		return false
	}
	if opts.ClusterState == nil {
		return true
	}
	claiming, err := PolicyState{opts.ClusterState}.HarnessesClaiming(namespace, account)
	return err != nil || len(claiming) > 0
}

// ManagedLabelKeys are the managed namespace labels under o, none unless
// gatehouse manages the selections.
func (o Options) ManagedLabelKeys() []string {
	if !o.ManagedSelections {
		return nil
	}
	var out []string
	for _, key := range []string{o.HarnessedNamespaceLabel, o.ScopedNamespaceLabel} {
		if key != "" && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}
