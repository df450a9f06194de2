// Package harness implements HARNESS (docs/contracts.md §8): the review of an
// OperatorHarness (vshn.net/v1, cluster-scoped) on CREATE and UPDATE. Its
// claims (scope label, operator identity) are checked against other
// harnesses through State; its grants, and the roles its bindings
// reference (read through State too), by what they allow.
//
// Files: harness.go (entry, mode, scope label), operator.go (namespace and
// service accounts), rbac.go (the RBAC authorizer's rule matching),
// dangerous.go (the fixed list of dangerous requests), grants.go (rules of
// spec.clusterRoles), bindings.go (roles that bindings reference),
// acknowledgements.go (acknowledgements and severities), state.go, codes.go.
//
// Decisions where the contract leaves room:
//
//   - The shape is api/harness/v1 (its doc.go): spec.clusterRoles
//     is one object {rules: [...]}, rules shaped like rbacv1.PolicyRule. A
//     clusterRoles, rules or rule of any other shape, or a rule list field
//     that is not a list, is denied (HarnessClusterRolesInvalid, at the
//     offending field): grants the review cannot read must not pass. Items
//     of a verbs/resources/... list that are not strings are skipped (the
//     API server rejects them). The pass fixtures decode strictly into
//     harnessv1.OperatorHarness (types_test.go).
//   - Grants are reviewed by what they allow: each rule is asked the fixed
//     list of dangerous requests of dangerous.go with the RBAC authorizer's
//     matching (rbac.go), so "*", "*/<subresource>" and a resourceNames ""
//     mean what they mean to the authorizer, and a wildcard that covers no
//     dangerous request (resources "*" in the operator's own API group) is
//     not dangerous. scopedlist (the harness proxy's custom verb, which it
//     asks with the scope label as the name) is dangerous for any name but
//     this harness's scopeToLabel, so a verb "*" without exactly that name
//     is too.
//   - Reviewed: spec.clusterRoles, and the roles that spec.clusterRoleBindings
//     and spec.roleBindings.roleRefs reference, read from the cluster
//     through State (bindings.go has the resolution: aggregated
//     ClusterRoles, Roles of one name in every namespace, missing roles).
//     The same list is asked of roleBindings, whose roles are bound in every
//     scoped namespace: impersonating, exec-ing into or minting tokens for a
//     tenant's service accounts leaves the operator's own rights. spec.roles
//     are not reviewed (a harness may grant "*" there; the contract reviews the
//     cluster-wide grants and the bound roles).
//   - Dangerous rules of spec.clusterRoles are reported one per rule, at
//     spec.clusterRoles.rules[j]; a binding's role is reported once, at the
//     binding, listing the rules (and aggregated roles) it comes from.
//   - Each finding lists every reason; its Evidence fingerprints the rule's
//     lists (for a binding: the role and every dangerous rule it resolves to)
//     and the scope label, so an unchanged grant is ratcheted on UPDATE.
//     Findings about the view (StateUnavailable, HarnessRoleNotFound,
//     HarnessRoleUnreadable) and the limit HarnessGrantTooLarge never
//     ratchet.
//   - Acknowledgements: spec.acknowledgedGrants[]{name, apiGroups,
//     resources, verbs, reason} (api/harness/v1 doc.go). A dangerous rule
//     expands into its literal (apiGroup, resource, verb) triples that on
//     their own (with the rule's resourceNames) cover a dangerous request.
//     The grant (a rule, or all dangerous rules of a bound role) is
//     acknowledged when EACH of those triples is listed by SOME valid entry
//     (one entry listing that apiGroup, that resource and that verb);
//     different triples may be covered by different entries. Strings match
//     literally: "*" in an entry matches only "*" in the rule. A grant with
//     more than MaxTriples triples is denied in both modes
//     (HarnessGrantTooLarge). An acknowledged grant warns
//     (HarnessGrantAcknowledged, naming the entries, never a reason) in both
//     modes. A triple is credited to the first entry listing it; an entry
//     credited in no acknowledged rule warns HarnessAcknowledgementUnused.
//     An entry that is not an object, has no name, a name that is not a
//     DNS-1123 label or repeats an earlier one, an empty or non-list
//     apiGroups/resources/verbs, or a reason shorter than 10 characters
//     (after trimming white space) or longer than 1024, is denied
//     (HarnessAcknowledgementInvalid) and acknowledges nothing.
//   - mode: unset means Enforce; any value but Enforce or Report is denied
//     (HarnessModeInvalid) and reviewed as Enforce. Report mode softens only
//     the grant review; clashes of scope label and identity deny in both.
//   - scopeToLabel is required in Enforce mode (it scopes the cluster-wide
//     grants), optional in Report mode (a harness that only reports scopes nothing).
//     A key whose prefix is kubernetes.io, k8s.io or a subdomain of either
//     is denied (HarnessScopeLabelReserved): Kubernetes sets those labels.
//   - operator.namespace is required (a DNS-1123 label): every harness
//     claims something in it. Service accounts are DNS-1123 subdomains; a
//     name listed twice is looked up once. An empty or missing list claims
//     the whole namespace and is reported at spec.operator.serviceAccounts.
//   - State errors: the first failed lookup (of harnesses or of roles) adds
//     one StateUnavailable denial at the field that needed it and stops
//     further lookups. With an erroring State every review denies (tested by
//     fuzzing), because every valid harness needs at least one lookup.
package harness
