package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadDocuments reads check's input: every example of
// deploy/examples as one multi-document stream, and one List of 1,000 Pods
// (a List document is read a second time, as YAML nodes, for its items'
// lines).
func BenchmarkReadDocuments(b *testing.B) {
	files, _ := filepath.Glob("../../../deploy/examples/*.yaml")
	var stream bytes.Buffer
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		stream.WriteString("---\n")
		stream.Write(raw)
	}
	var list bytes.Buffer
	list.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 1000 {
		fmt.Fprintf(&list, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p%d\n    namespace: team-a\n  spec:\n    containers:\n    - name: app\n      image: registry.example/app:1\n", i)
	}
	for name, input := range map[string][]byte{"examples": stream.Bytes(), "list": list.Bytes()} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readDocuments("-", bytes.NewReader(input)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
