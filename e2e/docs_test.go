package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// TestOperationsDocMatchesTheRegistry keeps the webhook table of
// docs/operations.md true: one row per registered webhook (and no other)
// with its type, failure policy, every resource and subresource it
// intercepts, its operations and its namespace and object selection.
func TestOperationsDocMatchesTheRegistry(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 5 {
			t.Fatalf("a webhook row needs 5 cells: %s", line)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[strings.Trim(cells[0], "`")] = cells
	}
	for _, def := range webhooks.Registry {
		cells, ok := rows[def.Name]
		if !ok {
			t.Errorf("docs/operations.md has no row for %s", def.Name)
			continue
		}
		delete(rows, def.Name)
		if want := strings.ToLower(string(def.Type)); cells[1] != want {
			t.Errorf("%s: type %q, want %q", def.Name, cells[1], want)
		}
		if cells[2] != string(def.FailurePolicy) {
			t.Errorf("%s: failure policy %q, want %q", def.Name, cells[2], def.FailurePolicy)
		}
		intercepts := cells[3]
		for _, r := range def.Intercept.Resources {
			name := r.GVR.Resource
			if r.Subresource != "" {
				name += "/" + r.Subresource
			}
			if !strings.Contains(intercepts, "`"+name+"`") {
				t.Errorf("%s: intercepts %s, which the row does not name", def.Name, name)
			}
			for _, op := range r.Operations {
				if !strings.Contains(intercepts, fmt.Sprintf("`%s` %s", name, op)) {
					t.Errorf("%s: the row must say %s is intercepted on %s only", def.Name, name, op)
				}
			}
		}
		for _, op := range def.Intercept.Operations {
			if !strings.Contains(intercepts, string(op)) {
				t.Errorf("%s: the row does not name operation %s", def.Name, op)
			}
		}
		for _, sel := range []struct {
			on   bool
			text string
		}{
			{def.Intercept.Products, "product custom resources"},
			{def.Intercept.OptIn, "opted-in namespaces"},
			{def.Intercept.OneObject, "only the configured override ConfigMap"},
			{def.Intercept.AllResources, "every resource (no subresources)"},
			{def.Intercept.UpdatesByServiceAccountsOnly, "UPDATE by service accounts only"},
			{def.Intercept.StatusSubresources, "every `*/status` subresource"},
			{def.Intercept.LabelChangesOnly, "only UPDATEs that change labels"},
			{def.FailClosedOnlyInHarnessed, "harnessed namespaces"},
		} {
			if sel.on != strings.Contains(intercepts, sel.text) {
				t.Errorf("%s: the row must say %q exactly when the webhook has that selection (%v)", def.Name, sel.text, sel.on)
			}
		}
	}
	for name := range rows {
		t.Errorf("docs/operations.md has a row for %s, which is not in the registry", name)
	}
}

// TestNothingCitesADocumentOutsideTheRepository: a user's clone holds the
// repository alone, so no comment, doc or script may point at the design
// documents the project was built from; they cite docs/contracts.md.
func TestNothingCitesADocumentOutsideTheRepository(t *testing.T) {
	outside := []string{"CONTRACTS.md", "CONTRACTS §", "../shared", "shared/spec", "shared/seeds", "STYLE.md"}
	seen := 0
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "bin", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".sh", ".env":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen++
		for _, s := range outside {
			// This file names what it looks for.
			if strings.Contains(string(raw), s) && !strings.HasSuffix(path, "docs_test.go") {
				t.Errorf("%s cites %q, a document a clone does not have; cite docs/contracts.md", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("read only %d files; the walk no longer sees the repository", seen)
	}
}

// TestReadmeQuotesThePerformanceReport: every figure the README's
// performance paragraph quotes (ratios like 1.28x, sizes like 102.5 MiB) is
// one docs/performance.md reports, so the two cannot drift apart when `make
// bench` rewrites the report.
func TestReadmeQuotesThePerformanceReport(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(repo, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\nPerformance, ")
	if !ok {
		t.Fatal(`README.md has no paragraph starting "Performance, "`)
	}
	paragraph, _, _ := strings.Cut(rest, "\n\n")
	figures := regexp.MustCompile(`\b\d+(\.\d+)?(x| MiB| µs)`).FindAllString(paragraph, -1)
	if len(figures) < 5 {
		t.Fatalf("the README's performance paragraph quotes %d figures (%q); the pattern no longer finds them", len(figures), figures)
	}
	for _, f := range figures {
		// A ratio is reported as 1.28x among the targets and as 1.28 in the
		// ratios table; a size or a time with its unit.
		pattern := regexp.QuoteMeta(f)
		if number, isRatio := strings.CutSuffix(f, "x"); isRatio {
			pattern = regexp.QuoteMeta(number) + `(x|\s)`
		}
		if !regexp.MustCompile(`(^|[^\d.])` + pattern).MatchString(string(report)) {
			t.Errorf("README.md quotes %s, which docs/performance.md does not report", f)
		}
	}
}

// TestMakeHelpListsEveryTarget: every target of the Makefile carries a "##"
// description, so `make help` (which lists those) lists them all.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	target := regexp.MustCompile(`^([a-z0-9][a-z0-9-]*):`)
	listed := regexp.MustCompile(`^[a-z0-9-]+:.*## `) // the help target's own pattern
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		m := target.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, ":=") {
			continue
		}
		n++
		if !listed.MatchString(line) {
			t.Errorf("make help does not list %s: give it a \"## description\"", m[1])
		}
	}
	if n < 10 {
		t.Fatalf("found %d targets in the Makefile; the pattern is wrong", n)
	}
}
