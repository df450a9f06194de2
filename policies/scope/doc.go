// Package scope implements SCOPE (docs/contracts.md §1): the secret-operator
// volume annotations (secrets.kubedoop.dev/*) on PersistentVolumeClaims and
// on the PVC templates of Pods and workloads, and the CredentialsScope names
// that kubedoop product custom resources render into those annotations.
//
// Validate is pure: it reads the object, never changes it, and returns the
// findings sorted. Each finding's Evidence fingerprints the offending value
// (the annotation value, or the CredentialsScope name), so that the webhook
// can ratchet a finding on UPDATE when that value did not change.
//
// Decisions where the contract leaves room:
//
//   - Entry (ParseScope) is what secret-operator reads, not what was
//     written: "service=a=b" parses as {service, a}. Every ","-separated
//     part yields an entry, also empty and invalid ones.
//   - One finding per scope entry. "service==b" (empty name that also holds
//     "=") is ScopeValueMissing; "node=a=b" is ScopeUnexpectedValue.
//   - Unknown scope keys only warn, whatever their value holds, and so do
//     keys that differ from a known one by case or spaces ("Node", " pod"),
//     because secret-operator skips them rather than misreading them.
//   - An empty format annotation is SecretFormatUnknown, a warning like every
//     format that is not one of the three.
//   - A wholly empty scope annotation is ScopeEmpty, a warning; one empty
//     entry among others is ScopeEntryEmpty, a denial.
//   - SecretPasswordReadable is reported at the tlsPKCS12Password key, also
//     when that key is absent and tls-p12 falls back to the default password.
//   - A CredentialsScope name that is not a string (null, a number) is
//     ScopeNameEmpty; a services or listenerVolumes value that is not a list
//     is skipped, as is every value of an unexpected type (the CRD schema
//     rejects them before any operator reads them).
//   - A name with both "," and "=" is reported once, for the ",".
//   - The custom-resource walk reads as deep as the API server accepts,
//     10000 levels, and denies with ScopeWalkLimit (never ratcheted) past
//     them (crwalk.go).
//   - A service or listener volume name that is not a valid name is
//     reported once, after the checks for emptiness and delimiters.
//   - The certificate lifetime is judged once per annotation map, at the
//     first of lifetime, restart buffer and jitter factor that is set
//     (certlife.go); its evidence is all three values.
package scope
