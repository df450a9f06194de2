// Package podsecurity implements contract PSC (docs/contracts.md §2): the pod
// security context defaults that the mutating webhook fills in on Pod CREATE
// (DefaultPod) and on pods/ephemeralcontainers UPDATE
// (DefaultNewEphemeralContainers), and the fail-closed guard on the final
// object (ValidatePod) with its early twin for workload templates
// (ValidateTemplate).
//
// Mutation happens in place on the decoded JSON map, so fields that the Go
// types do not know survive; the webhook diffs the request bytes against the
// re-marshalled map. The validators are pure and return findings sorted.
//
// Files: defaults.go (the table and its configuration), mutate.go (the
// defaulting), runasroot.go (rule 1, RunAsRootConflict), missing.go (rule 2,
// SecurityDefaultsMissing), validate.go (entry points, codes, messages),
// values.go (reading decoded JSON values), cel.go (where the guard allows,
// as CEL, for the in-process layout's narrowing).
//
// Decisions where the contract leaves room:
//
//   - A field is stated when its key is present with a non-null value of any
//     type: a stated false or 0 is kept, and so is a value of the wrong type
//     (the API server rejects it; rule 2 does not report it as missing). A
//     null is what the API server decodes as unset, so it is defaulted. The one
//     exception is seccompProfile.type: "" is unset, because SeccompProfile.Type
//     has no omitempty and a profile written without a type reaches webhooks
//     as type: "".
//   - Container-level runAsNonRoot and seccompProfile are defaulted to the
//     pod's effective value (its pod-level value after the pod level is
//     defaulted), not to the table's value, so that a container default never
//     overrides what the pod states: a pod stating runAsNonRoot: false gets
//     runAsNonRoot: false in each container that states nothing, and a pod
//     seccompProfile (Localhost with its localhostProfile, or Unconfined) is
//     copied into each container that has none. With only the builtin
//     defaults and nothing stated this is the table's true / RuntimeDefault.
//     Defaulting containers to the table instead would turn a root pod that
//     correctly states runAsNonRoot: false into a RunAsRootConflict.
//   - A seccompProfile object without a type gets the configured type, at
//     either level, even when it holds a localhostProfile (the API server
//     rejects a profile without a type anyway).
//   - A container that states privileged: true or adds the capability
//     "CAP_SYS_ADMIN" gets allowPrivilegeEscalation: true, not the configured
//     value: the API server rejects false next to either, and the kernel
//     grants escalation to such a container anyway.
//   - A Windows pod (spec.os.name: windows) gets, and is required to have,
//     only runAsNonRoot at both levels: the API server forbids every other
//     field of the table on Windows pods.
//   - capabilities.drop is defaulted only when no non-null drop is present; an
//     empty list counts as stated and is not reported missing. Through the API
//     server an empty drop list arrives omitted (omitempty) and so is
//     defaulted to the configured list; only offline checks see it.
//   - readOnlyRootFilesystem is never set; runAsUser and runAsGroup are set
//     at the pod level only. Numbers are written as int64.
//   - A securityContext, seccompProfile or capabilities that is not an object
//     (nor null) is left alone by the mutation, and rule 2 reports it once,
//     at its own path, instead of the fields below it. Container entries that
//     are not objects, and lists that are not lists, are skipped by both. The
//     API server rejects all of these when it decodes the request, before any
//     webhook sees it; they matter to offline checks and to robustness.
//   - Rule 1 counts only an explicit runAsUser that is a number equal to 0
//     (float64, any Go integer type, json.Number). For rule 1 a runAsUser or
//     runAsNonRoot of the wrong type reads as absent, so the pod value applies.
//   - Rule 1 reports a container-level runAsUser: 0 once per container, at
//     that container's runAsUser; a pod-level runAsUser: 0 once, at
//     spec.securityContext.runAsUser, naming every affected container in pod
//     order. Its Evidence fingerprints "0/true" plus the affected containers,
//     so that on a pods/ephemeralcontainers UPDATE a newly added affected
//     container is denied rather than ratcheted with the old finding.
//   - On pods/ephemeralcontainers UPDATE an ephemeral container is new when
//     its name is not among the old object's ephemeral containers; one
//     without a string name counts as new. Rule 1 runs on every container
//     (the webhook ratchets the unchanged ones), rule 2 on the new ephemeral
//     containers only, and the pod level is neither defaulted nor checked.
//   - ValidateTemplate applies to the kinds with a pod template in
//     workload.Kinds(); a Pod, which has no template, gets nil (ValidatePod is
//     its guard), as does every other kind.
//   - A Pod without a spec object is not defaulted and gets no findings.
//   - Defaults.Validate accepts seccomp type RuntimeDefault or Unconfined
//     (Localhost needs a localhostProfile, which Defaults cannot carry), ids
//     in 0..2147483647 as the API server does, fsGroupChangePolicy
//     OnRootMismatch or Always, at least one capability to drop, each
//     non-empty, without white space and listed once, and rejects runAsUser 0
//     with runAsNonRoot true, a pair that rule 1 would deny in every pod the
//     defaults fill in.
//
// Known limit, outside what admission can see:
//
//   - An ephemeral container added to a pod that predates the opt-in gets
//     runAsNonRoot from the defaults but no runAsUser (the pod level, which
//     would carry it, is immutable there). An image whose USER is root is then
//     refused by the kubelet, which rule 1 cannot foresee (no explicit 0).
package podsecurity
