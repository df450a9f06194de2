package app

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// formatInputs writes a directory of manifests whose lines are known: a
// denied PVC on line 4 of its file (after a comment and a separator), an
// allowed one after it, and a List of a PriorityClass no webhook
// intercepts, an allowed PVC and a denied one whose first line (after a
// comment on the item's own line) is line 13.
func formatInputs(t *testing.T) (dir string, deniedPVCLine, deniedItemLine int) {
	t.Helper()
	dir = t.TempDir()
	pvcs := `# two claims
---

apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: denied
  namespace: team-a
  annotations:
    secrets.kubedoop.dev/class: tls
    secrets.kubedoop.dev/scope: "node,,pod"
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: allowed, namespace: team-a, annotations: {secrets.kubedoop.dev/class: tls, secrets.kubedoop.dev/scope: "node"}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
`
	list := `apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: untouched}
  value: 5
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: ok-item, namespace: team-a}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
- # the denied item
  apiVersion: v1
  kind: PersistentVolumeClaim
  metadata:
    name: denied-item
    namespace: team-a
    annotations: {secrets.kubedoop.dev/class: tls, secrets.kubedoop.dev/scope: "pod="}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
`
	for name, content := range map[string]string{"pvcs.yaml": pvcs, "sub/list.yaml": list} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, 4, 13
}

// inDir runs fn with the working directory set to dir, so that check is
// given relative paths, as CI runs it.
func inDir(t *testing.T, dir string, fn func()) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(wd); err != nil {
			t.Fatal(err)
		}
	}()
	fn()
}

// junitDoc is what a JUnit consumer reads.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Skipped    int    `xml:"skipped,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name       string `xml:"name,attr"`
			File       string `xml:"file,attr"`
			Line       int    `xml:"line,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// wellFormedXML reads every token of out with a strict decoder.
func wellFormedXML(t *testing.T, out string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, out)
		}
	}
}

func parseJUnit(t *testing.T, out string) junitDoc {
	t.Helper()
	wellFormedXML(t, out)
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCheckJUnit: one testsuite per file, one testcase per object at the
// object's file and line, with a property per webhook's result; a failure
// for each denied object naming its webhooks, codes and paths; an error for
// an undecided one naming what was missing; a skipped testcase for an
// object no webhook intercepts; and counts that add up.
func TestCheckJUnit(t *testing.T) {
	dir, pvcLine, itemLine := formatInputs(t)
	var code int
	var stdout, stderr string
	inDir(t, dir, func() { code, stdout, stderr = run(t, "", "check", "-f", ".", "-o", "junit") })
	if code != exitDenied {
		t.Fatalf("exit %d (stderr %q), want 1: two objects are denied", code, stderr)
	}
	doc := parseJUnit(t, stdout)
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "pvcs.yaml" || doc.Suites[1].Name != filepath.Join("sub", "list.yaml") {
		t.Fatalf("want the suites pvcs.yaml and sub/list.yaml, got %+v", doc.Suites)
	}
	failures := map[string]int{} // testcase name -> line
	errored := map[string]string{}
	tests, skipped, results := 0, 0, 0
	for _, s := range doc.Suites {
		tests += len(s.Cases)
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d for %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		caseResults := 0
		for _, c := range s.Cases {
			if c.File != s.Name || c.Line < 1 {
				t.Errorf("%s: file %q line %d, want the suite's file and a line", c.Name, c.File, c.Line)
			}
			if c.Skipped != nil {
				skipped++
			}
			for _, p := range c.Properties {
				if _, ok := route.Lookup(p.Name); ok {
					caseResults++
				}
			}
			if c.Failure != nil {
				failures[c.Name] = c.Line
				if !strings.Contains(c.Failure.Message, "denied by secret-scope (Scope") ||
					!strings.Contains(c.Failure.Text, "secret-scope: metadata.annotations[secrets.kubedoop.dev/scope]: Scope") {
					t.Errorf("%s: the failure does not name the webhook, the codes and the field: %+v", c.Name, c.Failure)
				}
			}
			if c.Error != nil {
				errored[c.Name] = c.Error.Type + ": " + c.Error.Text
			}
		}
		if len(s.Properties) != 1 || s.Properties[0].Name != "results" || s.Properties[0].Value != fmt.Sprint(caseResults) {
			t.Errorf("suite %s: properties %+v, want results=%d", s.Name, s.Properties, caseResults)
		}
		results += caseResults
	}
	want := map[string]int{
		"PersistentVolumeClaim team-a/denied":      pvcLine,
		"PersistentVolumeClaim team-a/denied-item": itemLine,
	}
	if len(failures) != len(want) {
		t.Errorf("failures %v, want %v", failures, want)
	}
	for name, line := range want {
		if failures[name] != line {
			t.Errorf("%s: failure at line %d, want %d (all: %v)", name, failures[name], line, failures)
		}
	}
	// team-a was not given: harness-labels cannot tell which scope labels
	// the allowed claims need.
	for _, name := range []string{"PersistentVolumeClaim team-a/allowed", "PersistentVolumeClaim team-a/ok-item"} {
		if e := errored[name]; !strings.HasPrefix(e, "undecided: harness-labels: undecided: Namespace team-a was not given\n") {
			t.Errorf("%s: error %q, want undecided naming the namespace", name, e)
		}
	}
	if len(errored) != 2 {
		t.Errorf("errors %v, want the two undecided claims", errored)
	}
	if doc.Tests != tests || tests != 5 || doc.Failures != 2 || doc.Errors != 2 || doc.Skipped != skipped || skipped != 1 {
		t.Errorf("totals tests=%d failures=%d errors=%d skipped=%d; counted %d testcases, %d skipped", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, tests, skipped)
	}
	if results != 7 {
		t.Errorf("%d results in the testcases' properties, want 7", results)
	}
}

// modeResults are results as Warn and Audit modes and an undecidable
// review produce them: findings that were let through (Allowed, with
// findings), an error that denied, one that Audit let through, and a
// webhook that could not decide without the namespace.
func modeResults() ([]Document, []CheckResult) {
	docs := []Document{
		{Source: "a dir/pvc.yaml", Index: 0, Item: -1, Line: 3, Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "p", "namespace": "n"}}},
		{Source: "-", Index: 0, Item: -1, Line: 1, Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "q", "namespace": "n"}}},
		{Source: "a dir/pvc.yaml", Index: 1, Item: -1, Line: 9, Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "u", "namespace": "m"}}},
	}
	finding := []FindingOut{{Code: "ScopeEntryEmpty", Field: "metadata.annotations[secrets.kubedoop.dev/scope]", Message: "entry 2 of the scope is empty"}}
	ref := func(d Document) ObjectRef { return objectRef(d.Object) }
	results := []CheckResult{
		{Object: ref(docs[0]), Webhook: "secret-scope", Operation: "CREATE", Outcome: OutcomeAllowed, Allowed: true, Mode: ModeWarn, Findings: finding, doc: 0},
		{Object: ref(docs[0]), Webhook: "service-account", Operation: "CREATE", Outcome: OutcomeAllowed, Allowed: true, Mode: ModeAudit, Findings: []FindingOut{{Code: "ServiceAccountMismatch", Field: "spec.serviceAccountName", Message: "m"}}, doc: 0},
		{Object: ref(docs[1]), Webhook: "secret-scope", Operation: "CREATE", Outcome: OutcomeDenied, Allowed: false, Findings: finding, doc: 1},
		{Object: ref(docs[1]), Webhook: "pod-security", Operation: "CREATE", Outcome: OutcomeDenied, Allowed: false, Error: "InternalError: the evaluator failed", doc: 1},
		{Object: ref(docs[1]), Webhook: "harness", Operation: "CREATE", Outcome: OutcomeAllowed, Allowed: true, Mode: ModeAudit, Error: "StateUnavailable: the caches are not synced", doc: 1},
		{Object: ref(docs[2]), Webhook: "secret-scope", Operation: "CREATE", Outcome: OutcomeAllowed, Allowed: true, doc: 2},
		{Object: ref(docs[2]), Webhook: "harness-labels", Operation: "CREATE", Outcome: OutcomeUndecided, Missing: []string{"Namespace m"}, doc: 2},
	}
	return docs, results
}

// TestJUnitModes: a Warn or Audit finding passes and is marked as not
// enforced; an Enforce denial or an error that denied fails; an undecided
// object is an <error>.
func TestJUnitModes(t *testing.T) {
	docs, results := modeResults()
	var buf bytes.Buffer
	if err := writeResults(&buf, FormatJUnit, docs, nil, results); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.String())
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 {
		t.Fatalf("tests=%d failures=%d errors=%d, want 3, 1, 1:\n%s", doc.Tests, doc.Failures, doc.Errors, buf.String())
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			props := map[string]string{}
			for _, p := range c.Properties {
				props[p.Name] = p.Value
			}
			switch {
			case strings.HasSuffix(c.Name, "n/p"):
				if c.Failure != nil || c.Error != nil || props["secret-scope"] != "not enforced (Warn)" || props["service-account"] != "not enforced (Audit)" ||
					props["not-enforced"] != "ScopeEntryEmpty, ServiceAccountMismatch" ||
					!strings.Contains(c.SystemOut, "NOT ENFORCED (mode Warn): secret-scope would deny") || !strings.Contains(c.SystemOut, "NOT ENFORCED (mode Audit)") {
					t.Errorf("the Warn and Audit findings: %+v", c)
				}
			case strings.HasSuffix(c.Name, "n/q"):
				if c.Failure == nil || c.File != "" || props["secret-scope"] != "denied" || props["pod-security"] != "denied" ||
					!strings.Contains(c.Failure.Message, "denied by secret-scope (ScopeEntryEmpty), pod-security (could not decide)") ||
					!strings.Contains(c.Failure.Text, "pod-security: error: InternalError") || props["not-enforced"] != "ReviewError" {
					t.Errorf("the denials from stdin (no file), and the error Audit let through: %+v", c)
				}
			case strings.HasSuffix(c.Name, "m/u"):
				if c.Error == nil || c.Error.Type != "undecided" || props["harness-labels"] != "undecided" || props["secret-scope"] != "allowed" ||
					!strings.Contains(c.Error.Text, "harness-labels: undecided: Namespace m was not given") {
					t.Errorf("the undecided object: %+v", c)
				}
			default:
				t.Errorf("unexpected testcase %q", c.Name)
			}
		}
	}
}

// sarifSchema compiles the vendored OASIS SARIF 2.1.0 schema, with format
// assertions on (uri, uri-reference, ...).
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validSARIF(t *testing.T, schema *jsonschema.Schema, out string) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, out)
	}
	var log map[string]any
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

// sarifResultsOf flattens the results of the one run.
type sarifOut struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID      string `json:"id"`
					HelpURI string `json:"helpUri"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			Properties map[string]string `json:"properties"`
		} `json:"results"`
		Properties struct {
			Summary Summary `json:"summary"`
		} `json:"properties"`
	} `json:"runs"`
}

func parseSARIF(t *testing.T, out string) sarifOut {
	t.Helper()
	var s sarifOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 1 || s.Runs[0].Tool.Driver.Name != "gatehouse" {
		t.Fatalf("want one run of tool gatehouse:\n%s", out)
	}
	for _, r := range s.Runs[0].Results {
		rules := s.Runs[0].Tool.Driver.Rules
		if r.RuleIndex < 0 || r.RuleIndex >= len(rules) || rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s: ruleIndex %d does not point at its rule", r.RuleID, r.RuleIndex)
		}
	}
	return s
}

// TestCheckSARIF: `check -o sarif` on files given by relative path is
// valid SARIF 2.1.0 (the OASIS schema), has one error-level result per
// denying finding at the file as given and the line where the object, or
// the List item, starts, and a rule per code with a helpUri into
// docs/contracts.md.
func TestCheckSARIF(t *testing.T) {
	schema := sarifSchema(t)
	dir, pvcLine, itemLine := formatInputs(t)
	var code int
	var stdout, stderr string
	inDir(t, dir, func() { code, stdout, stderr = run(t, "", "check", "-f", "pvcs.yaml", "-f", "sub", "-o", "sarif") })
	if code != exitDenied {
		t.Fatalf("exit %d (stderr %q), want 1", code, stderr)
	}
	validSARIF(t, schema, stdout)
	s := parseSARIF(t, stdout)
	got := map[string]int{}
	for _, r := range s.Runs[0].Results {
		wantLevel := "error"
		if r.RuleID == ruleUndecided {
			wantLevel = "warning" // team-a was not given: harness-labels could not decide
		}
		if r.Level != wantLevel || len(r.Locations) != 1 || r.Locations[0].PhysicalLocation == nil || r.Locations[0].PhysicalLocation.Region == nil {
			t.Fatalf("result %+v: want level %s at a file and line", r, wantLevel)
		}
		loc := r.Locations[0]
		got[loc.PhysicalLocation.ArtifactLocation.URI+" "+loc.LogicalLocations[0].FullyQualifiedName+" "+r.RuleID] = loc.PhysicalLocation.Region.StartLine
	}
	want := map[string]int{
		"pvcs.yaml PersistentVolumeClaim team-a/denied ScopeEntryEmpty":               pvcLine,
		"sub/list.yaml PersistentVolumeClaim team-a/denied-item ScopeUnexpectedValue": itemLine,
		"pvcs.yaml PersistentVolumeClaim team-a/denied Undecided":                     pvcLine,
		"pvcs.yaml PersistentVolumeClaim team-a/allowed Undecided":                    pvcLine + 10,
		"sub/list.yaml PersistentVolumeClaim team-a/ok-item Undecided":                8,
		"sub/list.yaml PersistentVolumeClaim team-a/denied-item Undecided":            itemLine,
	}
	if len(got) != len(want) {
		t.Errorf("results %v, want %v", got, want)
	}
	for k, line := range want {
		if got[k] != line {
			t.Errorf("%s at line %d, want %d (all: %v)", k, got[k], line, got)
		}
	}
	contracts, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs[0].Properties.Summary != (Summary{Objects: 5, Results: 7, Denied: 2, Undecided: 2, Skipped: 1}) {
		t.Errorf("run summary %+v", s.Runs[0].Properties.Summary)
	}
	for _, rule := range s.Runs[0].Tool.Driver.Rules {
		if rule.HelpURI != docsURL+"contracts.md" || !bytes.Contains(contracts, []byte("`"+rule.ID+"`")) {
			t.Errorf("rule %s: helpUri %s, and docs/contracts.md must name the code", rule.ID, rule.HelpURI)
		}
	}
}

// TestSARIFModes: levels follow the mode (Enforce error, Warn warning,
// Audit note), an undecided review is a ReviewError (error when it
// denied, note when Audit let it through), a
// path with a space is a valid URI reference, and stdin has no physical
// location; all of it valid SARIF 2.1.0.
func TestSARIFModes(t *testing.T) {
	docs, results := modeResults()
	var buf bytes.Buffer
	if err := writeResults(&buf, FormatSARIF, docs, nil, results); err != nil {
		t.Fatal(err)
	}
	validSARIF(t, sarifSchema(t), buf.String())
	s := parseSARIF(t, buf.String())
	got := map[string]string{}
	for _, r := range s.Runs[0].Results {
		key := r.Properties["webhook"] + " " + r.RuleID
		got[key] = r.Level
		pl := r.Locations[0].PhysicalLocation
		if name := r.Locations[0].LogicalLocations[0].FullyQualifiedName; strings.HasSuffix(name, "n/p") || strings.HasSuffix(name, "m/u") {
			if pl == nil || pl.ArtifactLocation.URI != "a%20dir/pvc.yaml" || pl.Region == nil || (pl.Region.StartLine != 3 && pl.Region.StartLine != 9) {
				t.Errorf("%s: physical location %+v, want a%%20dir/pvc.yaml line 3 or 9", key, pl)
			}
		} else if pl != nil {
			t.Errorf("%s: an object from stdin has physical location %+v", key, pl)
		}
	}
	want := map[string]string{
		"secret-scope ScopeEntryEmpty":           "error", // the Enforce denial (it wins over the Warn one in this map)
		"service-account ServiceAccountMismatch": "note",
		"pod-security ReviewError":               "error",
		"harness ReviewError":                    "note",
		"harness-labels Undecided":               "warning",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: level %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	warned := false
	for _, r := range s.Runs[0].Results {
		warned = warned || (r.RuleID == "ScopeEntryEmpty" && r.Properties["mode"] == ModeWarn && r.Level == "warning")
	}
	if !warned {
		t.Error("the Warn finding is not at level warning")
	}
}

// TestCheckFormatKeepsExitStatus: every -o format exits as text does: 1
// for a denial, 3 for an undecided object, 0 when all is allowed; an
// unknown format is a usage error.
func TestCheckFormatKeepsExitStatus(t *testing.T) {
	dir, _, _ := formatInputs(t)
	for _, format := range outputFormats {
		if code, _, stderr := run(t, "", "check", "-f", filepath.Join(dir, "pvcs.yaml"), "-o", format); code != exitDenied {
			t.Errorf("-o %s on a denied object: exit %d (%s), want 1", format, code, stderr)
		}
		allowed := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team-a}\n"
		if code, _, stderr := run(t, allowed, "check", "-f", "-", "-o", format, "--namespace-labels", "team-a"); code != 0 {
			t.Errorf("-o %s on an allowed object: exit %d (%s), want 0", format, code, stderr)
		}
		if code, _, stderr := run(t, allowed, "check", "-f", "-", "-o", format); code != exitUndecided {
			t.Errorf("-o %s on an object whose namespace was not given: exit %d (%s), want 3", format, code, stderr)
		}
	}
	if code, _, stderr := run(t, "", "check", "-f", dir, "-o", "xml"); code != exitUsage || !strings.Contains(stderr, "junit") {
		t.Errorf("-o xml: exit %d (%s), want a usage error naming the formats", code, stderr)
	}
}

// TestEveryFormatReportsTheSameSummary: text, json, junit and sarif report
// the same objects, results, denied, undecided, warned, allowed and skipped
// numbers for the same input: the examples (denials, patches, objects no
// webhook intercepts), with secret-scope in Warn, and a document whose
// namespace was not given (undecided).
func TestEveryFormatReportsTheSameSummary(t *testing.T) {
	undecided := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(undecided, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: not-given}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "-f", "../../../deploy/examples", "-f", undecided, "--mode", "secret-scope=Warn"}
	summaries := map[string]Summary{}
	for _, format := range outputFormats {
		code, stdout, stderr := run(t, "", append(args, "-o", format)...)
		if code != exitDenied {
			t.Fatalf("-o %s: exit %d: %s", format, code, stderr)
		}
		var s Summary
		switch format {
		case FormatText:
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if _, err := fmt.Sscanf(lines[len(lines)-1], "%d objects, %d results: %d denied, %d undecided, %d warned, %d allowed, %d skipped",
				&s.Objects, &s.Results, &s.Denied, &s.Undecided, &s.Warned, &s.Allowed, &s.Skipped); err != nil {
				t.Fatalf("text summary %q: %v", lines[len(lines)-1], err)
			}
		case FormatJSON:
			var out struct {
				Summary Summary       `json:"summary"`
				Results []CheckResult `json:"results"`
				Objects []ObjectOut   `json:"objects"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			s = out.Summary
			if len(out.Results) != s.Results || len(out.Objects) != s.Objects {
				t.Errorf("json: %d results and %d objects listed, summary %+v", len(out.Results), len(out.Objects), s)
			}
			verdicts := map[string]int{}
			for _, o := range out.Objects {
				verdicts[o.Verdict]++
			}
			if (Summary{Objects: s.Objects, Results: s.Results, Denied: verdicts[VerdictDenied], Undecided: verdicts[VerdictUndecided],
				Warned: verdicts[VerdictWarned], Allowed: verdicts[VerdictAllowed], Skipped: verdicts[VerdictSkipped]}) != s {
				t.Errorf("json: the objects' verdicts %v do not add up to the summary %+v", verdicts, s)
			}
		case FormatJUnit:
			doc := parseJUnit(t, stdout)
			s = Summary{Objects: doc.Tests, Denied: doc.Failures, Undecided: doc.Errors, Skipped: doc.Skipped}
			for _, suite := range doc.Suites {
				for _, p := range suite.Properties {
					n, _ := strconv.Atoi(p.Value)
					s.Results += n
				}
				for _, c := range suite.Cases {
					if c.Failure != nil || c.Error != nil || c.Skipped != nil {
						continue
					}
					warned := false
					for _, p := range c.Properties {
						warned = warned || p.Name == "not-enforced"
					}
					if warned {
						s.Warned++
					} else {
						s.Allowed++
					}
				}
			}
		case FormatSARIF:
			s = parseSARIF(t, stdout).Runs[0].Properties.Summary
		}
		summaries[format] = s
	}
	want := summaries[FormatJSON]
	if want.Denied == 0 || want.Undecided != 1 || want.Warned == 0 || want.Allowed == 0 || want.Skipped == 0 ||
		want.Objects != want.Denied+want.Undecided+want.Warned+want.Allowed+want.Skipped {
		t.Fatalf("json summary %+v: want every verdict, adding up", want)
	}
	for format, s := range summaries {
		if s != want {
			t.Errorf("-o %s summary %+v, -o json %+v", format, s, want)
		}
	}
}
