package app

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// TestDocumentLines: each document, and each item of a List (nested ones
// too), knows the line of its file where it starts, past separators,
// comments and blank lines, in YAML and JSON, with "\r\n" line ends.
func TestDocumentLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  []int
	}{
		{"one", "apiVersion: v1\nkind: Pod\n", []int{1}},
		{"separators and comments", "---\n# a comment\n\napiVersion: v1\nkind: Pod\n---\n---\napiVersion: v1\nkind: Service\n--- # end\n", []int{4, 8}},
		{"comment-only documents", "# c\n---\n# only a comment\n---\napiVersion: v1\nkind: Pod\n", []int{5}},
		{"crlf", "apiVersion: v1\r\nkind: Pod\r\n---\r\napiVersion: v1\r\nkind: Pod\r\n", []int{1, 4}},
		{"no final newline", "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod", []int{1, 4}},
		{"list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n- # the second\n  apiVersion: v1\n  kind: Pod\n", []int{4, 7}},
		{"typed list", "---\napiVersion: v1\nkind: PodList\nitems:\n  - metadata: {name: a}\n  - metadata: {name: b}\n", []int{5, 6}},
		{"nested list", "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - apiVersion: v1\n    kind: Pod\n  - apiVersion: v1\n    kind: Pod\n- apiVersion: v1\n  kind: Pod\n", []int{1, 10, 12, 14}},
		{"json", "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n  {\"apiVersion\": \"v1\", \"kind\": \"Pod\"},\n  {\"apiVersion\": \"v1\", \"kind\": \"Pod\"}\n]}\n", []int{2, 3}},
		{"anchored items", "apiVersion: v1\nkind: List\nx: &pods\n- apiVersion: v1\n  kind: Pod\nitems: *pods\n", []int{4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := readDocuments("-", strings.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, d := range docs {
				got = append(got, d.Line)
			}
			if !slicesEqual(got, tc.want) {
				t.Errorf("lines %v, want %v", got, tc.want)
			}
		})
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzDocumentReaderAsUpstream: the line-counting reader splits every
// input into the same documents as apimachinery's YAMLReader, which
// `check` used before, fails where it fails, and its lines name a line of
// the input on which the document's first line stands.
func FuzzDocumentReaderAsUpstream(f *testing.F) {
	for _, seed := range []string{
		"", "---\n---\n", "a: 1\n---\nb: 2\n", "--- # c\na: 1\n", "---x\n", "a: 1\n----\n", "a\r\n---\r\nb\r\n",
		"a: 1", "\n\n---\n\na\n---", strings.Repeat("x", 70*1024) + "\n---\ny\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		upstream := yaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(data), 64*1024))
		ours := newDocumentReader(bufio.NewReaderSize(bytes.NewReader(data), 64*1024))
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		for {
			want, wantErr := upstream.Read()
			got, start, err := ours.read()
			var syntax yaml.YAMLSyntaxError
			switch {
			case errors.As(wantErr, &syntax):
				if !errors.Is(err, errBadSeparator) {
					t.Fatalf("upstream: %v; ours: %v", wantErr, err)
				}
				return
			case errors.Is(wantErr, io.EOF):
				if !errors.Is(err, io.EOF) {
					t.Fatalf("upstream ended, ours gave %q, %v", got, err)
				}
				return
			case wantErr != nil:
				t.Fatalf("upstream: %v", wantErr)
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("document %q, %v; upstream %q", got, err, want)
			}
			first, _, _ := strings.Cut(string(got), "\n")
			if start < 1 || start > len(lines) || strings.TrimSuffix(lines[start-1], "\r") != strings.TrimSuffix(first, "\r") {
				t.Fatalf("line %d of %q is not the document's first line %q", start, data, first)
			}
		}
	})
}
