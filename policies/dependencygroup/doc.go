// Package dependencygroup implements DG (docs/contracts.md §6), one CRD in one
// DependencyGroup, and CRDS (§7), the CustomResourceDefinitionSource: the
// validators ValidateGroup and ValidateSource, which see other objects
// through State, and the pure Clashes and Decide that the status reconciler
// (and `check --state`) use to close the race admission cannot.
//
// Files: group.go (DependencyGroup), source.go (source), refs.go (the two
// shapes of a source's references), claims.go (ObjectKey and what an object
// claims, for the view's indexes), manages.go (the manages string's grammar
// and scope labels), clash.go (Clashes, Decide), state.go (State, and its
// denial with policies.StateUnavailable), codes.go.
//
// Decisions where the contract leaves room:
//
//   - A CRD name is valid when it is a lowercase DNS-1123 subdomain with at
//     least one dot, as the contract states. (The API server further wants
//     the CRD's group to hold a dot; a group listing such a CRD lists one
//     that cannot exist, which is harmless.)
//   - Invalid and duplicate CRD names are not looked up; a duplicate is
//     reported at its second (and later) occurrence, naming the first.
//   - DependencyGroupCRDClaimed names every other group listing the CRD,
//     sorted. Its Evidence is the CRD name, so on UPDATE an unchanged entry is
//     ratcheted (§0.7): the older group of a raced pair stays editable, and
//     the reconciler rejects the younger.
//   - spec.harnessRef, when it is an object, needs a name and a kind that is
//     unset or OperatorHarness.
//   - manages: the group is a DependencyGroup name, so a DNS-1123
//     subdomain; the alias names only a scope, so it is a DNS-1123 label
//     (stricter is easier to loosen later). Exactly single spaces around
//     "as"; empty, white space at either end, "a as", "a as b as c" are
//     invalid. "mariadb as mariadb" is allowed (redundant).
//   - provides and requires[i].dependencyGroup.name must be DependencyGroup
//     names (CRDSourceGroupNameInvalid); when they are, their scope label
//     must be a valid label key (CRDSourceScopeLabelInvalid; the name part of
//     a label key has at most 63 characters, a subdomain up to 253). Only
//     one of the two is reported per field.
//   - Sources come in two shapes, read per field by JSON type (refs.go):
//     helmetica's (lists of {dependencyGroup: {name, as}}) and the string
//     shape (provides and manages strings). Paths point at the entry's name or
//     as. An alias is a DNS-1123 label, as in the manages grammar; an empty "as"
//     is no alias (helmetica's ScopeName). An alias on provides is denied
//     (CRDSourceProvidesAliased), as helmetica's schema does.
//   - A source with none of reference, provides, manages, a requires entry
//     is denied (CRDSourceEmpty): it means nothing. helmetica's sources
//     always have a reference and may declare no dependency (podinfo).
//   - Providing and managing the same group is fine (strimzi-operator in the
//     seed), and so is one source providing a group another manages
//     (mariadb-crds and mariadb-operator).
//   - An object is identified by ObjectKey: metadata.name, or
//     "<namespace>/<name>" when namespaced. State returns keys in that form
//     and the policy excludes the object itself from every lookup, so an
//     object never clashes with itself (an UPDATE of an unchanged source
//     draws no warning). Claims are cluster-wide: a provider or manager in
//     another namespace clashes.
//   - An object with a deletionTimestamp claims nothing: ListedCRDs,
//     ProvidedGroups and ManagedScopes (the view's indexes) return nothing
//     for it, Clashes ignores it, and its own review looks up no claim (its
//     content is still checked).
//   - State errors: the first failed lookup adds one StateUnavailable denial
//     at the field that needed it and stops further lookups; findings that
//     need no lookup are still reported. A requires lookup that fails denies
//     too, although its answer would only have warned: never allow blind.
//     With an erroring State every review that needs a lookup denies
//     (tested by fuzzing); one that needs none (a source with only a
//     reference, a group being deleted) is decided without the view.
//   - Clashes: a missing or unparsable creationTimestamp counts as the
//     newest; ties go to the smaller name; a group listing a CRD twice counts
//     once; groups without a name are skipped. A group rejected for one CRD
//     still wins its other CRDs against younger groups (see clash.go).
//     Accepted carries a fixed message; Rejected names each CRD lost and its
//     owner, sorted by CRD.
//   - UPDATE needs no special case: the webhook ratchets unchanged fields.
package dependencygroup
