// Derived ServiceAccount name.
//
// Reads: nothing from an object; callers pass a product kind and a cluster
// (custom resource) name.
// Allows: any input; the result is always at most 253 bytes, the limit on a
// ServiceAccount name (a DNS subdomain).

package serviceaccount

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// maxServiceAccountNameLen is the DNS-subdomain limit on a ServiceAccount
	// name, in bytes.
	maxServiceAccountNameLen = 253
	// hashSuffixLen is how many hex characters of the SHA-256 of the full
	// name replace what is cut off a name that is too long.
	hashSuffixLen = 8
)

// DerivedServiceAccountName returns the ServiceAccount that a kubedoop
// operator runs a product cluster's pods as: "<lowercased kind>-<cluster>",
// e.g. "hdfscluster-prod".
//
// It reproduces kubedoop operator-go's reconciler.ServiceAccountResourceName
// byte for byte (docs/contracts.md §3), because the operator creates exactly that
// ServiceAccount and a policy that derived any other name would deny the
// operator's own workloads. A name longer than 253 bytes keeps its first 244
// bytes, with trailing '-' trimmed, followed by '-' and the first 8 hex
// characters of the SHA-256 of the full, untruncated name.
//
// Lengths are in bytes and the cut is a byte slice, exactly as upstream does:
// a multi-byte UTF-8 character straddling byte 244 is split. The API server
// would reject such a ServiceAccount name anyway (names are ASCII), but
// matching upstream is what counts here, so do not "fix" it to runes.
func DerivedServiceAccountName(kind, cluster string) string {
	name := strings.ToLower(kind) + "-" + cluster
	if len(name) <= maxServiceAccountNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:hashSuffixLen]
	head := strings.TrimRight(name[:maxServiceAccountNameLen-hashSuffixLen-1], "-")
	return head + "-" + suffix
}
