// Package harness implements HARNESS (CONTRACTS.md §8): the review of an
// OperatorHarness (vshn.net/v1, cluster-scoped) on CREATE and UPDATE. Its
// claims (scope label, operator identity) are checked against other
// harnesses through State; its cluster-wide grants are reviewed alone.
//
// Files: harness.go (entry, mode, scope label), operator.go (namespace and
// service accounts), grants.go (dangerous rules), acknowledgements.go
// (acknowledgements and severities), state.go, codes.go.
//
// Decisions where the contract leaves room:
//
//   - The shape is api/harness/v1 (seed 001 read literally): spec.clusterRoles
//     is one object {rules: [...]}, rules shaped like rbacv1.PolicyRule. A
//     clusterRoles, rules or rule of any other shape, or a rule list field
//     that is not a list, is denied (HarnessClusterRolesInvalid, at the
//     offending field): grants the review cannot read must not pass. Items
//     of a verbs/resources/... list that are not strings are skipped (the
//     API server rejects them). The pass fixtures decode strictly into
//     harnessv1.OperatorHarness (types_test.go).
//   - Only spec.clusterRoles is reviewed. spec.roles are namespaced and only
//     reach namespaces carrying the scope label (the seed grants "*" there);
//     spec.clusterRoleBindings / roleBindings to existing ClusterRoles (such
//     as cluster-admin) are a known gap of this review.
//   - Dangerous: the verbs escalate, bind, impersonate, "*"; a resource "*"
//     or "*/<subresource>"; get, list or watch on secrets with apiGroups ""
//     or "*" and no resourceNames; and scopedlist whose resourceNames are
//     not exactly this harness's scopeToLabel (without resourceNames it lets
//     the operator list every other harness's scope, secrets included).
//     scopedlist with the harness's own label is allowed on any resource,
//     secrets too: that is the seed's design. list on secrets next to
//     scopedlist in one rule is judged on its own: with resourceNames (a
//     label key cannot name a Secret, so it grants nothing real) it passes,
//     without them it is dangerous. Verbs match case-sensitively, as RBAC
//     does.
//   - One finding per dangerous rule, at spec.clusterRoles.rules[j],
//     listing every reason; its Evidence fingerprints the rule's lists and the
//     scope label, so an unchanged rule is ratcheted on UPDATE.
//   - Acknowledgements: spec.acknowledgedGrants[]{name, apiGroups,
//     resources, verbs, reason} (api/harness/v1 doc.go). A dangerous rule
//     expands into the (apiGroup, resource, verb) triples that carry one of
//     its reasons (for the secrets reason only the core/"*" groups, secrets
//     and get/list/watch; for a dangerous verb every group and resource
//     with that verb; for a "*" resource every group and verb). The rule is
//     acknowledged when EACH of those triples is listed by SOME valid entry
//     (one entry listing that apiGroup, that resource and that verb);
//     different triples may be covered by different entries. Strings match
//     literally: "*" in an entry matches only "*" in the rule. A dangerous
//     rule with no triple (a dangerous verb without apiGroups or resources)
//     cannot be acknowledged. An acknowledged rule warns
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
//     grants), optional in Report mode (the seed's report example has none).
//   - operator.namespace is required (a DNS-1123 label): every harness
//     claims something in it. Service accounts are DNS-1123 subdomains; a
//     name listed twice is looked up once. An empty or missing list claims
//     the whole namespace and is reported at spec.operator.serviceAccounts.
//   - State errors: the first failed lookup adds one StateUnavailable denial
//     at the field that needed it and stops further lookups. With an
//     erroring State every review denies (tested by fuzzing), because every
//     valid harness needs at least one lookup.
package harness
