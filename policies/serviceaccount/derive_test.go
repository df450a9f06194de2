package serviceaccount

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// upstreamHashed is the derived name of an over-long name written out step by
// step from docs/contracts.md §3, independently of derive.go: the first 4 bytes of
// the SHA-256 of the full name, hex-encoded, are its first 8 hex characters.
func upstreamHashed(fullName string) string {
	sum := sha256.Sum256([]byte(fullName))
	head := []byte(fullName)[:244]
	for len(head) > 0 && head[len(head)-1] == '-' {
		head = head[:len(head)-1]
	}
	return string(head) + "-" + hex.EncodeToString(sum[:4])
}

func TestDerivedServiceAccountName(t *testing.T) {
	// "hdfscluster-" is 12 bytes, so a cluster name of 241 bytes makes the
	// full name exactly 253.
	const prefix = "hdfscluster-"
	dashRun := strings.Repeat("a", 228) + strings.Repeat("-", 10) + strings.Repeat("b", 20)
	// "x" puts each two-byte "é" at an odd offset, so one starts at byte
	// 243 and the cut at byte 244 splits it.
	multiByte := "x" + strings.Repeat("é", 130)

	tests := []struct {
		name    string
		kind    string
		cluster string
		want    string
	}{
		{"short", "HdfsCluster", "prod", "hdfscluster-prod"},
		{"kind is lower-cased, cluster is not", "TrinoCluster", "Prod", "trinocluster-Prod"},
		{"empty cluster", "HdfsCluster", "", "hdfscluster-"},
		{"exactly 253 bytes is kept", "HdfsCluster", strings.Repeat("a", 241), prefix + strings.Repeat("a", 241)},
		// Expected suffix computed outside Go, twice:
		//   python3 -c 'import hashlib; print(hashlib.sha256(("hdfscluster-"+"a"*242).encode()).hexdigest()[:8])'
		//   printf 'hdfscluster-%s' "$(printf 'a%.0s' $(seq 242))" | sha256sum
		// both print 4f41221e...
		{"254 bytes is hashed", "HdfsCluster", strings.Repeat("a", 242), prefix + strings.Repeat("a", 232) + "-4f41221e"},
		{"254 bytes, formula", "HdfsCluster", strings.Repeat("a", 242), upstreamHashed(prefix + strings.Repeat("a", 242))},
		// Bytes 240..249 are '-': the head name[:244] ends in four of them,
		// all trimmed. python3 gives the suffix 4462bc8b.
		{"trailing dashes of the head are trimmed", "HdfsCluster", dashRun, prefix + strings.Repeat("a", 228) + "-4462bc8b"},
		{"trailing dashes, formula", "HdfsCluster", dashRun, upstreamHashed(prefix + dashRun)},
		// Byte slicing keeps the first byte (0xc3) of the "é" at 243..244.
		// python3 gives the suffix 3f3aa336.
		{"multi-byte name is cut by bytes", "HdfsCluster", multiByte, prefix + "x" + strings.Repeat("é", 115) + "\xc3" + "-3f3aa336"},
		{"multi-byte, formula", "HdfsCluster", multiByte, upstreamHashed(prefix + multiByte)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DerivedServiceAccountName(tc.kind, tc.cluster)
			if got != tc.want {
				t.Errorf("DerivedServiceAccountName(%q, %q)\n got %q (%d bytes)\nwant %q (%d bytes)", tc.kind, tc.cluster, got, len(got), tc.want, len(tc.want))
			}
			if len(got) > maxServiceAccountNameLen {
				t.Errorf("result is %d bytes, over %d", len(got), maxServiceAccountNameLen)
			}
		})
	}
}

func FuzzDerivedServiceAccountName(f *testing.F) {
	f.Add("HdfsCluster", "prod")
	f.Add("HdfsCluster", strings.Repeat("a", 241))
	f.Add("HdfsCluster", strings.Repeat("a", 242))
	f.Add("HdfsCluster", strings.Repeat("a", 228)+strings.Repeat("-", 30))
	f.Add("İİİ", "x"+strings.Repeat("é", 130))
	f.Add("", "")
	f.Fuzz(func(t *testing.T, kind, cluster string) {
		got := DerivedServiceAccountName(kind, cluster)
		if len(got) > maxServiceAccountNameLen {
			t.Fatalf("%d bytes, over %d", len(got), maxServiceAccountNameLen)
		}
		if again := DerivedServiceAccountName(kind, cluster); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		full := strings.ToLower(kind) + "-" + cluster
		if len(full) <= maxServiceAccountNameLen {
			if got != full {
				t.Fatalf("short name changed: %q, want %q", got, full)
			}
			return
		}
		if want := upstreamHashed(full); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

func BenchmarkDerivedServiceAccountName(b *testing.B) {
	long := strings.Repeat("a", 300)
	b.Run("short", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = DerivedServiceAccountName("HdfsCluster", "prod")
		}
	})
	b.Run("hashed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = DerivedServiceAccountName("HdfsCluster", long)
		}
	})
}

// derivedNaming is the naming of operator-go after e1f8813, under which
// most fixtures of this package are written: every product derives.
var derivedNaming = Naming{}
