package overrides

import (
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestPositionHashes: the hashes positionWalk keeps while it walks without
// set are those of the positions it passes to set, in the same order, so
// that claimsOf's shortcut sees every position an entry sets twice.
func TestPositionHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	patches := 0
	for _, data := range differentialInputs(t) {
		for value := range sortedValues(data) {
			for _, doc := range []string{value, editYAML(rng, value)} {
				root, ok := parseBlockStyle(doc)
				if !ok {
					continue
				}
				entries := lookup(root, "overrides")
				if entries == nil {
					continue
				}
				for _, item := range entries.content {
					patch := lookup(item, "patch")
					if patch == nil {
						continue
					}
					patches++
					var pw positionWalk
					var want []uint64
					pw.walk(patch, field.NewPath("patch"), func(_ *node, position []byte, _ *field.Path) {
						want = append(want, hashMore(hashStart, position))
					})
					pw.walk(patch, nil, nil)
					if len(pw.hashes) != len(want) {
						t.Fatalf("%d hashes, %d positions in %q", len(pw.hashes), len(want), doc)
					}
					for i := range want {
						if pw.hashes[i] != want[i] {
							t.Fatalf("hash %d is not its position's in %q", i, doc)
						}
					}
				}
			}
		}
	}
	if patches < 200 {
		t.Fatalf("only %d patches walked", patches)
	}
}
