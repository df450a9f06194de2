package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// treeRows are the rows of docs/design.md's source layout that describe a
// whole tree: every package below them is theirs.
var treeRows = []string{"api", "cmd/gatehouse"}

// TestDesignMapsEveryPackage: docs/design.md's source layout names every
// package of the product module (`go list ./...`): by its own row, by the
// `policies/<contract>/` row for a contract directly below policies/ (a
// package that declares finding codes, or one that row names), by the
// `policies/internal/` row, or by a tree row (treeRows); and every row names
// a directory that exists. The map is the picture of the house, and the
// arrows test (TestImportArrows) the rule.
func TestDesignMapsEveryPackage(t *testing.T) {
	raw, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(raw), "## Source layout")
	if !ok {
		t.Fatal("docs/design.md has no Source layout section")
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)$")
	rows := map[string]bool{}
	contractRow := ""
	for _, m := range row.FindAllStringSubmatch(layout, -1) {
		dir := strings.TrimSuffix(m[1], "/")
		rows[dir] = true
		if dir == "policies/<contract>" {
			contractRow = m[2]
		}
		if dir == "policies/<contract>" {
			continue
		}
		if info, err := os.Stat(filepath.Join("../..", dir)); err != nil || !info.IsDir() {
			t.Errorf("docs/design.md maps %s, which is no directory", m[1])
		}
	}
	module, pkgs := modulePackages(t)
	for _, p := range pkgs {
		rel := p.rel(module)
		parts := strings.Split(rel, "/")
		switch {
		case rows[rel]:
		case len(parts) == 2 && parts[0] == "policies" && (declaresCodes(t, p) || strings.Contains(contractRow, "`"+parts[1]+"/`")):
		case len(parts) == 3 && parts[0] == "policies" && parts[1] == "internal" && rows["policies/internal"]:
		case mappedByTree(rel, rows):
		default:
			t.Errorf("docs/design.md's source layout has no row for package %s", rel)
		}
	}
}

// declaresCodes reports whether p declares finding codes: a contract.
func declaresCodes(t *testing.T, p listedPackage) bool {
	t.Helper()
	for _, f := range p.sourceFiles(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "policies.Code = ") {
			return true
		}
	}
	return false
}

func mappedByTree(rel string, rows map[string]bool) bool {
	for _, tree := range treeRows {
		if rows[tree] && (rel == tree || strings.HasPrefix(rel, tree+"/")) {
			return true
		}
	}
	return false
}
