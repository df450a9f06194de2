package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
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
	for _, def := range route.Registry() {
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
			{def.Intercept.Beyond == route.ProductResources, "product custom resources"},
			{def.Intercept.Namespaces == route.OptedInNamespaces, "opted-in namespaces"},
			{def.Intercept.Object == route.OverrideConfigMapOnly, "only the configured override ConfigMap"},
			{def.Intercept.Beyond.AllGroups(), "every resource (no subresources)"},
			{def.Intercept.Updates.Has(route.UpdatesByServiceAccounts), "UPDATE by service accounts only"},
			{def.Intercept.Beyond == route.EveryResourceAndStatus, "every `*/status` subresource"},
			{def.Intercept.Updates.Has(route.UpdatesChangingLabels), "only UPDATEs that change labels"},
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
// documents the project was built from (they cite docs/contracts.md), nor at
// the history of how it was built: the design's sketches ("the seed"),
// issue numbers of a tracker the clone does not have.
func TestNothingCitesADocumentOutsideTheRepository(t *testing.T) {
	outside := []string{"CONTRACTS.md", "CONTRACTS §", "../shared", "shared/spec", "shared/seeds", "STYLE.md"}
	history := regexp.MustCompile(`(?i)\bthe seed\b|\bseed's\b|\bseed \d|\bseed-shaped\b|\bissues? #\d+`)
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
		// This file names what it looks for.
		if strings.HasSuffix(path, "docs_test.go") {
			return nil
		}
		for _, s := range outside {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s cites %q, a document a clone does not have; cite docs/contracts.md", path, s)
			}
		}
		for _, m := range history.FindAllStringIndex(string(raw), -1) {
			// A fuzz target's seed corpus is Go's term, not history.
			if strings.HasPrefix(string(raw[m[1]:]), " corpus") {
				continue
			}
			t.Errorf("%s cites %q, history a clone does not have; say what the code or document does, and why", path, raw[m[0]:m[1]])
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

// TestDocsQuoteThePerformanceReport: every figure (ratios like 1.28x, sizes
// like 102.5 MiB, times like 41.9 µs) that a paragraph of the README or of
// docs/ quotes beside a link to docs/performance.md is one the report
// gives, so the two cannot drift apart when `make bench` rewrites it.
func TestDocsQuoteThePerformanceReport(t *testing.T) {
	report, err := os.ReadFile(filepath.Join(repo, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	figure := regexp.MustCompile(`\b\d+(\.\d+)?(x| MiB| µs)`)
	quoted := 0
	for _, path := range sampleDocuments(t) {
		if filepath.Base(path) == "performance.md" {
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, path)
		for _, paragraph := range strings.Split(string(raw), "\n\n") {
			if !strings.Contains(paragraph, "performance.md") {
				continue
			}
			for _, f := range figure.FindAllString(paragraph, -1) {
				quoted++
				// The report gives a ratio as 1.28x among the targets and
				// as 1.28 in the ratios table, a size or time with its unit
				// or in a column of its unit: the number is what must match.
				number := strings.TrimRight(f, "xMiBµs ")
				if !regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(number) + `([^\d.]|\.\D|$)`).MatchString(string(report)) {
					t.Errorf("%s quotes %s beside docs/performance.md, which does not report it", rel, f)
				}
			}
		}
	}
	if quoted < 3 {
		t.Fatalf("the documents quote %d figures of docs/performance.md; the pattern no longer finds them", quoted)
	}
}

// TestDocsIndexListsEveryDocument: docs/README.md and the README's
// documentation table link every document of docs/, so none is found only
// by chance.
func TestDocsIndexListsEveryDocument(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for index, prefix := range map[string]string{"README.md": "docs/", filepath.Join("docs", "README.md"): ""} {
		raw, err := os.ReadFile(filepath.Join(repo, index))
		if err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, doc := range docs {
			name := filepath.Base(doc)
			if name == "README.md" {
				continue
			}
			listed++
			if !strings.Contains(string(raw), "| ["+name+"]("+prefix+name+") | ") {
				t.Errorf("%s: the documentation table has no row for %s", index, name)
			}
		}
		if listed < 10 {
			t.Fatalf("docs/ holds %d documents; the glob is wrong", listed)
		}
	}
}

// TestConfigurationDocIsAValidConfiguration: the configuration file that
// docs/configuration.md shows is one gatehouse accepts (check loads and
// validates it as serve does).
func TestConfigurationDocIsAValidConfiguration(t *testing.T) {
	var config string
	for _, b := range docBlocks(t) {
		if b.doc == "docs/configuration.md" && b.info == "yaml" && len(b.lines) > 0 && b.lines[0] == "apiVersion: gatehouse.dev/v1alpha1" {
			config = strings.Join(b.lines, "\n") + "\n"
		}
	}
	if config == "" {
		t.Fatal("docs/configuration.md shows no ServerConfig")
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := app.Run(context.Background(), []string{"check", "--config", path, "--namespace-labels", "team-a",
		"-f", filepath.Join(repo, "deploy", "examples", "pod-allowed.yaml")}, nil, &stdout, &stderr)
	if code != 0 || stderr.Len() > 0 {
		t.Errorf("check --config with the configuration of docs/configuration.md: exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
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
