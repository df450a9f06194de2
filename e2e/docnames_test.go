package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

var (
	// A backticked file name or path: `webhooks/chain.go`, `deadline.go`,
	// `deploy/default/`.
	backticked = regexp.MustCompile("`([A-Za-z0-9_.\\-]+(?:/[A-Za-z0-9_.\\-]+)*/?)`")
	fileLike   = regexp.MustCompile(`(^|/)[A-Za-z0-9_\-]+\.(go|md|yaml|yml|sh|json|env|tsv|txt)$|/$`)
	// A relative Markdown link: [text](path#anchor).
	mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)(#[^)]*)?\)`)
	// A Go test, fuzz target or benchmark named in prose.
	testName = regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
)

// notRepositoryFiles are file names the documents use for something other
// than a file of this repository.
var notRepositoryFiles = map[string]string{
	"config.yaml":       "the key of the server configuration in its ConfigMap, and its path in the container",
	"cert-manager.yaml": "cert-manager's release manifest, which the kind path downloads",
}

// TestDocsNameWhatExists keeps the documents honest about the tree: every
// file or directory a Markdown document names in backticks or links to
// exists (relative to the document, the repository root, or, for a bare
// file name, anywhere in the repository), and every test, fuzz target and
// benchmark it names is defined in some Go file (a name given to -run may be
// a prefix). A path whose first directory is not one of this repository's,
// such as an upstream project's `internal/csi/backend/autotls.go` or an
// annotation prefix, names something elsewhere and is not checked.
func TestDocsNameWhatExists(t *testing.T) {
	basenames := map[string]bool{}
	var goSource strings.Builder
	var docs []string
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "bin", "node_modules":
				return filepath.SkipDir
			}
			basenames[d.Name()+"/"] = true
			return nil
		}
		basenames[d.Name()] = true
		switch filepath.Ext(path) {
		case ".go":
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			goSource.Write(raw)
		case ".md":
			if !strings.Contains(filepath.ToSlash(path), "/testdata/") {
				docs = append(docs, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 10 {
		t.Fatalf("found %d documents; the walk no longer sees the repository", len(docs))
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`).FindAllStringSubmatch(goSource.String(), -1) {
		defined[m[1]] = true
	}
	exists := func(doc, name string) bool {
		if notRepositoryFiles[name] != "" {
			return true
		}
		for _, base := range []string{filepath.Dir(doc), repo} {
			if _, err := os.Stat(filepath.Join(base, filepath.FromSlash(name))); err == nil {
				return true
			}
		}
		if !strings.Contains(strings.TrimSuffix(name, "/"), "/") {
			return basenames[name]
		}
		return false
	}
	named := 0
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, doc)
		for _, m := range backticked.FindAllStringSubmatch(string(raw), -1) {
			if !fileLike.MatchString(m[1]) || strings.HasPrefix(m[1], "/") || elsewhere(doc, m[1]) {
				continue
			}
			named++
			if !exists(doc, m[1]) {
				t.Errorf("%s names `%s`, which is not in the tree", rel, m[1])
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			named++
			if !exists(doc, m[1]) {
				t.Errorf("%s links to %s, which is not in the tree", rel, m[1])
			}
		}
		for _, name := range testName.FindAllString(string(raw), -1) {
			named++
			if !defined[name] && !slices.ContainsFunc(slices.Collect(maps.Keys(defined)), func(d string) bool { return strings.HasPrefix(d, name) }) {
				t.Errorf("%s names %s, which no Go file defines", rel, name)
			}
		}
	}
	if named < 150 {
		t.Fatalf("the documents name only %d files and tests; the patterns no longer match", named)
	}
}

// elsewhere reports whether a path with directories names something outside
// this repository: its first directory is neither at the repository root nor
// beside the document.
func elsewhere(doc, name string) bool {
	first, _, nested := strings.Cut(strings.TrimSuffix(name, "/"), "/")
	if !nested {
		// A bare `example.io/` is a label or annotation prefix.
		return strings.HasSuffix(name, "/") && strings.Contains(first, ".")
	}
	for _, base := range []string{filepath.Dir(doc), repo} {
		if _, err := os.Stat(filepath.Join(base, first)); err == nil {
			return false
		}
	}
	return true
}

// TestContractNamesTableCoversTheRegistry: every webhook of the registry is
// in the names table of docs/contracts.md exactly once, so a newcomer finds
// its contract, package and adapter from its name.
func TestContractNamesTableCoversTheRegistry(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	rows := 0
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 6 || !regexp.MustCompile(`^\| \d+$`).MatchString(cells[0]) {
			continue
		}
		rows++
		for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(cells[3], -1) {
			seen[m[1]]++
		}
	}
	if rows == 0 {
		t.Fatal("no rows in the names table of docs/contracts.md")
	}
	for _, name := range route.Names() {
		if seen[name] != 1 {
			t.Errorf("webhook %s is in the names table %d times, want once", name, seen[name])
		}
		delete(seen, name)
	}
	for name := range seen {
		t.Errorf("the names table lists %s, which the registry does not serve", name)
	}
}
