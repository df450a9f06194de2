package golden

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// FixtureFiles returns the files matching any of patterns (such as
// testdata/*/*.yaml), each pattern's matches in lexical order. A pattern that
// matches nothing fails the test: a moved testdata directory or a mistyped
// pattern would otherwise leave a loop over the fixtures with nothing to
// check, and the test passing.
func FixtureFiles(tb testing.TB, patterns ...string) []string {
	tb.Helper()
	if len(patterns) == 0 {
		tb.Fatal("no fixture pattern")
	}
	var out []string
	for _, pattern := range patterns {
		files, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		if len(files) == 0 {
			tb.Fatalf("no fixture matches %s", pattern)
		}
		out = append(out, files...)
	}
	return out
}

// ReadFixtures returns the contents of every file FixtureFiles finds, in its
// order: the seed corpus of the fuzz targets.
func ReadFixtures(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	files := FixtureFiles(tb, patterns...)
	out := make([][]byte, 0, len(files))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// AddFixtureSeeds adds every fixture matching patterns to the seed corpus of
// a fuzz target that takes the object's bytes alone.
func AddFixtureSeeds(f *testing.F, patterns ...string) {
	f.Helper()
	for _, data := range ReadFixtures(f, patterns...) {
		f.Add(data)
	}
}

// EachFixture runs check on every file matching patterns, each in a subtest
// named by the file.
func EachFixture(t *testing.T, check func(t *testing.T, data []byte), patterns ...string) {
	t.Helper()
	for _, file := range FixtureFiles(t, patterns...) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			check(t, data)
		})
	}
}

// FuzzObjects runs check on every fuzz input that decodes, as YAML or JSON
// and as the webhooks decode a request's object, into an object; other inputs
// are skipped. It seeds the corpus with one such input, a list; seed the
// fixtures and the policy's own cases before calling it.
func FuzzObjects(f *testing.F, check func(t *testing.T, obj map[string]any)) {
	f.Helper()
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return
		}
		check(t, obj)
	})
}
