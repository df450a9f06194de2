package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readErrorShape is every error readDocuments may give for stdin: where
// (stdin, the line when known, the document and item), then a message of
// its own, which names at most a kind, or the parser's reason in the
// parser's own words (describeParseError), and never quotes the input.
var readErrorShape = regexp.MustCompile(`^stdin(:\d+)?: document \d+(, item [\d.]+)?: (` +
	`not valid YAML or JSON(: ([a-zA-Z-]+|'[^a-zA-Z0-9\s']'|!![a-z]+)([,:;]? ([a-zA-Z-]+|'[^a-zA-Z0-9\s']'|!![a-z]+))*)?` +
	`|not an object \(a mapping with apiVersion and kind\)` +
	`|not an object` +
	`|apiVersion and kind must be set` +
	`|a line starting with "---" is not a document separator` +
	`|larger than \d+ bytes` +
	`|.*List\.items is not a list` +
	`|lists nested more than \d+ deep` +
	`)$`)

// FuzzReadInput feeds arbitrary bytes to the `check` input reader as
// stdin: no panic; every error names its document and has one of the
// reader's own shapes (so it never quotes the input); every document read
// has apiVersion and kind, positions in order, a line of the input where it
// starts (items of a List in order), and reads back the same when written
// out as JSON and read again.
func FuzzReadInput(f *testing.F) {
	for _, glob := range []string{"../../../deploy/examples/*.yaml", "../../../policies/*/testdata/*/*.yaml", "testdata/*/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	for _, seed := range []string{
		"", "---\n---\n", "# only a comment\n", "apiVersion: v1\nkind: List\nitems: [1]\n",
		"apiVersion: v1\nkind: PodList\nitems: {}\n", "? [a]\n: b\n", "x: !!int abc\n", "- a\n- b\n",
		`{"apiVersion":"v1","kind":"Pod"}{"apiVersion":"v1","kind":"Pod"}`, "apiVersion: v1\nkind: Pod\n---\nkind: [\n",
		"apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n- kind: ConfigMap\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := readDocuments("-", bytes.NewReader(data))
		if err != nil {
			if !readErrorShape.MatchString(err.Error()) {
				t.Fatalf("error of an unexpected shape (may quote the input): %q", err)
			}
			return
		}
		for i, d := range docs {
			apiVersion, _ := d.Object["apiVersion"].(string)
			kind, _ := d.Object["kind"].(string)
			if apiVersion == "" || kind == "" {
				t.Fatalf("%s has no apiVersion or kind", d.Where())
			}
			if d.Source != "-" || d.Item < -1 || (len(d.Path) > 0 && d.Path[0] != d.Item) ||
				(i > 0 && (d.Index < docs[i-1].Index || d.Index == docs[i-1].Index && slices.Compare(d.Path, docs[i-1].Path) <= 0)) {
				t.Fatalf("positions out of order: %+v after %+v", d, docs[max(i-1, 0)])
			}
			if !strings.HasPrefix(d.Where(), "-, document ") {
				t.Fatalf("Where() = %q", d.Where())
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; d.Line < 1 || d.Line > lines || (i > 0 && d.Index == docs[i-1].Index && d.Line < docs[i-1].Line) {
				t.Fatalf("%s: line %d of %d lines, after line %d", d.Where(), d.Line, lines, docs[max(i-1, 0)].Line)
			}
			// What was read is what a second read of it gives.
			raw, err := json.Marshal(d.Object)
			if err != nil {
				t.Fatalf("%s: cannot be written as JSON: %v", d.Where(), err)
			}
			again, err := readDocuments("-", bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s reads back with an error: %v", d.Where(), err)
			}
			if strings.HasSuffix(kind, "List") && d.Object["items"] != nil {
				continue // a List inside a List item is unwrapped again
			}
			if len(again) != 1 || !reflect.DeepEqual(again[0].Object, d.Object) {
				t.Fatalf("%s does not read back the same", d.Where())
			}
		}
	})
}

// TestReadErrorsQuoteNothing: the parser's own messages quote the document
// (a map key, a scalar, the text after "---"); the reader's do not.
func TestReadErrorsQuoteNothing(t *testing.T) {
	const marker = "PLANTED-MARKER"
	for _, input := range []string{
		"apiVersion: v1\nkind: X\n? [" + marker + "]\n: b\n",
		"apiVersion: v1\nkind: X\nx: !!int " + marker + "\n",
		"apiVersion: v1\nkind: X\nx: !!binary " + marker + "\n",
		"apiVersion: v1\nkind: X\n---" + marker + "\n",
		"apiVersion: v1\nkind: X\nx: {" + marker + ": [}\n",
		"- " + marker + "\n",
		`{"apiVersion":"v1","kind":"X","x":["` + marker + `"}`,
	} {
		_, err := readDocuments("-", strings.NewReader(input))
		if err == nil {
			t.Errorf("no error for %q", input)
			continue
		}
		if strings.Contains(err.Error(), marker) || !readErrorShape.MatchString(err.Error()) {
			t.Errorf("error quotes the input or has an unexpected shape: %q", err)
		}
	}
}
