package overrides

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// blockStyleDocuments are documents the block-style reader reads and
// documents it declines, for TestBlockStyleReads and as seeds of
// FuzzMatchesBefore.
func blockStyleDocuments() (read, declined []string) {
	read = []string{
		render(benchDocument()),
		render(validDocument()),
		render(document(storageEntry(fuzzBasePatch()))),
		"a: b\n",
		"a:\n",
		"a:\nb: c\n",
		"a:\n- b\n-\n- c: d\n  e:\n  - f\n  g: ''\n",
		"a:\n  - b\n  -   c:   d\n      e: \"f g\"\n",
		"a: {}\nb: []\nc: 'it is'\nd: \"x'y\"\ne: 'a\\b'\n",
		"a:b: c\n-a: -1\n$patch: x\n~: null\n1: 0x1F\n.5: 2001-12-14\n_: =\n+1: +.inf\n",
		"a: b:c\nd: e f   \n\n   \ng: http://x/y?z=1&w={v}[0]\n",
		"a: b -c\n",
		"a:\n  b:\n    c: d\n  e: f\ng: h",
		// Flow collections (flowstyle.go).
		"a: {b: c}\n", "a: [b]\n", "a: [ ]\nb: { }\n", "a: [b, 'c d', \"e'f\", \"\", 1, 0x1F, true, ~, -1, .5, {g: [h]}]\n",
		"a: {b: {c: {d: [e, f]}}, g: h i , j k: [  l  ,m]}\n", "x:\n- [a, b]\n- {c: d}\n- e\n", "a:\n- {b: c,\n   d: [e,\n    f]}\n",
		"a: " + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "\n",
		"a: " + strings.Repeat("{b: [", 5000) + strings.Repeat("]}", 5000) + "\n",
		"a: [b:c]\n", "a: [b,]\n", "a: {b: c,}\n", "a: {'b': c}\n", "a: {\"b\": c}\n", "a: {'$patch': delete, \"c d\": [e, ]}\n",
		"a: [{name: run, image: registry.example/run:2.0}, {url: http://x:80/y}]\n", "a: [12:30, 1:2:3, a:b:c, 'x']\n",
		"a: [\n  b, c]\n", "a: {\n b: c}\n", "a:\n  b: [c,\n    d]\n  e: f\n", "x:\n- a: [b]\n  c: {d: e}\n", "a: {1: 2, y: n}\n",
	}
	declined = []string{
		"", "\n", "a\n", "- a\n", " a: b\n", "a: b # c\n", "# c\na: b\n", "---\na: b\n", "a: b\n...\n", "a: b\n---\n",
		"a: &x b\nc: *x\n", "a: !!str b\n", "a: |\n  b\n", "a: >\n  b\n", "a: b\n  c\n",
		"a: \"b\\n\"\n", "a: 'b''c'\n", "a: 'b\n  c'\n", "\"a\": b\n", "? a\n: b\n", "<<: {}\n", "a: b: c\n", "a: b:\n",
		"a:\tb\n", "a: b\r\n", "\xef\xbb\xbfa: b\n", "a: é\n", "a: -\n", "a: - b\n", "a:\n- - b\n", "a :b\n", "a : b\n",
		"a:\n  b: c\n d: e\n", "a:\n  - b\n  c: d\n", "a: b\n- c\n", "a: '\n", "a: \"\n", "a: @b\n", "a: `b`\n", "a: %b\n",
		"a:\n  b\n", "a:\n- b\n  c\n", "a:\n- b: c\n   d: e\n", strings.Repeat("a", 1100) + ": b\n",
		// Flow collections this reader leaves to yaml/v3.
		"a: [b: c]\n", "a: {b}\n", "a: {b: }\n", "a: {b:c}\n", "a: [b:]\n", "a: [b:, c]\n", "a: [b, , c]\n", "a: [,]\n", "a: [b] c\n",
		"a: {'<<': {}}\n", "a: {'b''c': d}\n", "a: {\"b\":c}\n", "a: {'b' : c}\n", "a: [b:?c]\n", "a: [b:[c]]\n", "a: [http://x/y?z=1]\n",
		"a: [b\n  c]\n", "a: [b,\nc]\n", "a: [b,\n]\n", "a: ['b\n  c']\n", "a: [\"b\\n\"]\n", "a: ['b''c']\n", "a: [? b]\n", "a: [b?c]\n", "a: [&x b, *x]\n", "a: [!!str b]\n", "a: [- b]\n", "a: [-]\n",
		"a: [b]]\n", "a: [[b]\n", "a: {<<: {}}\n", "a: [b, {c: d]\n", "a: ['b'c]\n", "a: [b #c]\n", "a: [\tb]\n",
		"a: [|]\n", "a: [>]\n", "a: [@b]\n", "a: [%b]\n", "a: [`b`]\n", "a: {" + strings.Repeat("b", 1100) + ": c}\n",
	}
	return read, declined
}

// TestBlockStyleReads: the block-style reader reads the documents it is
// for, declines the rest, and builds what yaml/v3 builds.
func TestBlockStyleReads(t *testing.T) {
	read, declined := blockStyleDocuments()
	for _, doc := range read {
		if _, ok := parseBlockStyle(doc); !ok {
			t.Errorf("declined %q", doc)
		}
		checkBlockStyle(t, doc)
	}
	for _, doc := range declined {
		if _, ok := parseBlockStyle(doc); ok {
			t.Errorf("read %q", doc)
		}
	}
	rng := rand.New(rand.NewPCG(13, 17))
	accepted := 0
	for _, data := range differentialInputs(t) {
		for value := range sortedValues(data) {
			checkBlockStyle(t, value)
			for range 40 {
				edited := editYAML(rng, value)
				checkBlockStyle(t, edited)
				if _, ok := parseBlockStyle(edited); ok {
					accepted++
				}
			}
		}
	}
	if accepted < 1000 {
		t.Errorf("only %d edited documents were in block style", accepted)
	}
}

// TestBlockStyleTooDeep: a document that opens more flow collections
// inside one another than yaml/v3 reads is found too deep, as yaml/v3 finds
// it, whatever follows; one with an error before that point, or that stays
// within the limit, is not.
func TestBlockStyleTooDeep(t *testing.T) {
	deep := strings.Repeat("[", maxFlowLevel+1)
	tooDeep := []string{
		"a: " + deep + "\n",
		"a: " + deep + strings.Repeat("]", maxFlowLevel+1) + "\n",
		"a: " + deep + " b: : c\n",
		"a: b\nc: [d, {e: " + strings.Repeat("[", maxFlowLevel-1) + "\n",
		"a: [b,\n  " + strings.Repeat("{c: [", maxFlowLevel/2) + "\n",
	}
	for _, doc := range tooDeep {
		if _, read := readBlockStyle(doc); read != blockTooDeep {
			t.Errorf("%.40q... (%d bytes): read %v, want too deep", doc, len(doc), read)
		}
		checkBlockStyle(t, doc)
	}
	notTooDeep := []string{
		"a: " + strings.Repeat("[", maxFlowLevel) + strings.Repeat("]", maxFlowLevel) + "\n",
		"a: [b: c, " + deep + "\n",
		"a: [\"b\\n\", " + deep + "\n",
		"a: &x " + deep + "\n",
		"a: b\n c\nd: " + deep + "\n",
	}
	for _, doc := range notTooDeep {
		if _, read := readBlockStyle(doc); read == blockTooDeep {
			t.Errorf("%.40q... (%d bytes): too deep", doc, len(doc))
		}
		checkBlockStyle(t, doc)
	}
}

// TestPlainTags: the reader tags plain scalars as yaml/v3 resolves them,
// also those its shortcuts decide (strings by their first characters,
// decimal integers).
func TestPlainTags(t *testing.T) {
	values := []string{
		"", "0", "00", "01", "07", "08", "09", "0123", "1", "10", "8081", "999999999999999999", "9999999999999999999",
		"-1", "+1", "-0", "1_000", "0x1F", "0o17", "0b101", "-0b1", "1e3", "1E-3", ".5", "5.", "-.5", "+.inf", "-.Inf", ".nan",
		"1.2.3", "2001-12-14", "2001-12-14T21:59:43.10Z", "2001-12-14 21:59:43.10", "20011-12-14", "1:2", "10%", "512Mi",
		"100m", "1Gi", "--flag", "-x", "true", "True", "TRUE", "tRUE", "false", "no", "yes", "on", "off", "y", "n", "null",
		"Null", "NULL", "nULL", "~", "~x", "Never", "Always", "OnDelete", "node", "nan", "inf", "Infinity", "0x", "0b", "0o",
		"1e", "e1", "+", "-", ".", "1a", "1-2", "12:30", "190:20:30", "0.0.0.0", "1 2", "=", "$x", "_1", "/x",
	}
	for _, digits := range []string{"0123456789", "0123456789abcdefxXoObBeE_+-.:tTzZ "} {
		rng := rand.New(rand.NewPCG(29, uint64(len(digits))))
		for range 3000 {
			value := make([]byte, 1+rng.IntN(12))
			for i := range value {
				value[i] = digits[rng.IntN(len(digits))]
			}
			values = append(values, string(value))
		}
	}
	var p blockParser
	p.slab.size = nodesPerSlab
	for _, value := range values {
		want := (&yaml.Node{Kind: yaml.ScalarNode, Value: value}).ShortTag()
		if got := p.plain(value).tag; got != want {
			t.Errorf("plain %q is tagged %s, yaml/v3 resolves %s", value, got, want)
		}
	}
}

// checkBlockStyle fails the test when the block-style reader reads doc to
// another tree than yaml/v3, or reads a document that yaml/v3 refuses or
// finds more than one document in.
func checkBlockStyle(t *testing.T, doc string) {
	t.Helper()
	got, read := readBlockStyle(doc)
	if read == blockDeclined {
		return
	}
	decoder := yaml.NewDecoder(strings.NewReader(doc))
	var want, extra yaml.Node
	err := decoder.Decode(&want)
	if read == blockTooDeep {
		if err == nil || !strings.Contains(err.Error(), parserDepthLimit) {
			t.Fatalf("found %q too deep, where yaml/v3 says %v", doc, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("read %q, which yaml/v3 refuses: %v", doc, err)
	}
	if err := decoder.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("read %q, in which yaml/v3 finds more than one document: %v", doc, err)
	}
	if want.Kind != yaml.DocumentNode || len(want.Content) != 1 {
		t.Fatalf("read %q, which yaml/v3 reads as %v", doc, want.Kind)
	}
	if diff := treeDiff(got, fromYAML(want.Content[0]), "$"); diff != "" {
		t.Fatalf("read %q to another tree than yaml/v3: %s", doc, diff)
	}
}

// treeDiff describes the first difference between two trees, "" when
// there is none.
func treeDiff(got, want *node, at string) string {
	switch {
	case got.kind != want.kind || got.tag != want.tag || got.value != want.value:
		return fmt.Sprintf("at %s: got %v %q %q, want %v %q %q", at, got.kind, got.tag, got.value, want.kind, want.tag, want.value)
	case got.kind == yaml.AliasNode || want.kind == yaml.AliasNode:
		return fmt.Sprintf("at %s: an alias", at)
	case len(got.content) != len(want.content) || (got.content == nil) != (want.content == nil):
		return fmt.Sprintf("at %s: got %d children, want %d", at, len(got.content), len(want.content))
	}
	for i := range got.content {
		if diff := treeDiff(got.content[i], want.content[i], fmt.Sprintf("%s/%d", at, i)); diff != "" {
			return diff
		}
	}
	return ""
}
