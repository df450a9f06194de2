// Package scopelabel implements contract LABEL (CONTRACTS.md §5): the scope
// label of Enforce-mode OperatorHarnesses, copied from a namespace onto the
// objects created in it (ForNamespaced), added to cluster-scoped objects a
// harnessed service account creates (ForClusterScoped), and protected from
// removal or change by a harnessed service account (CheckUpdate). All three
// are pure and work in place on decoded JSON maps and take the scope label
// keys that apply: EnforcedKeys selects them from OperatorHarnesses (decoded
// JSON) for an object's namespace, ClaimedKeys for a requesting service
// account.
//
// Files: harnesses.go (which keys apply), labels.go (reading and writing
// metadata.labels), namespaced.go, clusterscoped.go, update.go.
//
// Codes: ScopeLabelMismatch (deny), ScopeLabelChanged (deny).
//
// Decisions where the contract leaves room:
//
//   - On cluster-scoped objects the label's value is ClusterScopedValue,
//     "true". The seed's policy "adds the label" without a value, and what
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
//   - CheckUpdate denies an UPDATE whose old object carries L and whose new
//     object lacks it or carries another value. Adding L on UPDATE is
//     allowed (it only narrows what the operator sees). It does not ratchet:
//     the finding is on a changed field by definition.
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
