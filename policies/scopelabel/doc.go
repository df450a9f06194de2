// Package scopelabel implements contract LABEL (docs/contracts.md §5): the scope
// label of Enforce-mode OperatorHarnesses, copied from a namespace onto the
// objects created in it (ForNamespaced), added to cluster-scoped objects a
// harnessed service account creates (ForClusterScoped), and guarded on
// UPDATE by a harnessed service account, through the main resource and the
// status subresources alike (Guard, CheckUpdate). All three are pure and
// work in place on decoded JSON maps and take the scope label keys that
// apply: EnforcedKeys selects them from OperatorHarnesses (decoded JSON) for
// an object's namespace, ClaimedKeys for a requesting service account, and
// Guard every Enforce-mode harness's key the object carries.
//
// Files: harnesses.go (which keys apply), labels.go (reading and writing
// metadata.labels), namespaced.go, clusterscoped.go, update.go.
//
// Codes: ScopeLabelMismatch (deny), ScopeLabelChanged (deny),
// ScopeLabelAdded (deny), StateUnavailable (deny, never ratchets).
//
// Decisions where the contract leaves room:
//
//   - On cluster-scoped objects the label's value is ClusterScopedValue,
//     "true". The contract "adds the label" without a value, and what
//     scopes an operator is the label key (the harness proxy's scoped list
//     and the scopedlist verb name the key); "true" is the conventional
//     value of a presence label. The harness name was rejected: two
//     harnesses may share a key, and the value would then depend on which
//     one the caller found first. An object that already carries the key
//     keeps its value, whatever it is: the key is what scopes it.
//   - ForNamespaced: for each key L present in the namespace's labels (with
//     any value, "" included), an object without L gets the namespace's
//     value; an object with L and the same value is left alone; an object
//     with L and another value is denied with ScopeLabelMismatch at
//     metadata.labels[L] and not changed for that key (other keys are still
//     copied, so the caller should not apply a denied object's mutation).
//   - ForClusterScoped returns only whether it changed the object: it never
//     denies, so it has no findings to return.
//   - Keys are deduplicated and handled in sorted order, so findings and
//     output are deterministic; an empty key is ignored.
//   - Guard: the caller is harnessed when any OperatorHarness claims it, in
//     either mode (a Report-mode operator may not rewrite an Enforce-mode
//     harness's scope either); the keys guarded are those of every
//     Enforce-mode harness, not only the caller's, so an operator can strip
//     neither its own scope label nor another harness's. The harnesses are
//     found by the label keys the old and new object carry, so the lookup
//     is one index read per label.
//   - CheckUpdate denies an UPDATE whose old object carries L and whose new
//     object lacks it or carries another value (ScopeLabelChanged), even
//     when the new value is the namespace's: a change is a change. Adding L
//     is allowed only with the namespace's value of L, which is what CREATE
//     would have copied; any other value, a namespace without L, and a
//     cluster-scoped object (which has no namespace's value; only its CREATE
//     is labelled) are denied (ScopeLabelAdded): an operator that could add
//     the key could pull objects into a scope. A Namespace is cluster-scoped
//     here, so a harnessed operator cannot put a namespace into a scope.
//     The namespace's labels are read only to judge an addition. Neither
//     finding ratchets: it is about a changed field by definition (the
//     webhook judges the transition, never the old object alone).
//   - A metadata or metadata.labels that is present but not an object is
//     left alone (the API server rejects it when decoding); a missing one is
//     created. Label values that are not strings read as absent, so an
//     object whose L is not a string gets it replaced on CREATE.
//   - Messages name the label key and never echo a label value.
//   - Admission registration objects (ValidatingWebhookConfiguration,
//     MutatingWebhookConfiguration, ValidatingAdmissionPolicy(Binding),
//     MutatingAdmissionPolicy(Binding)) are never sent to admission webhooks
//     by the API server, so a webhook running this contract cannot label
//     them; that is a limit of webhooks, not a choice.
package scopelabel
