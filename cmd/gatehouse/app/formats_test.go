package app

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
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

// TestCheckJUnit: one testsuite per file, one testcase per object and
// webhook at the object's file and line, a failure for each denial naming
// its codes and paths, a skipped testcase for an object no webhook
// intercepts, and counts that add up.
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
	tests, skipped := 0, 0
	for _, s := range doc.Suites {
		tests += len(s.Cases)
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d for %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		for _, c := range s.Cases {
			if c.File != s.Name || c.Line < 1 {
				t.Errorf("%s: file %q line %d, want the suite's file and a line", c.Name, c.File, c.Line)
			}
			if c.Skipped != nil {
				skipped++
			}
			if c.Failure != nil {
				failures[c.Name] = c.Line
				if !strings.Contains(c.Failure.Message, "Scope") || !strings.Contains(c.Failure.Text, "metadata.annotations[secrets.kubedoop.dev/scope]: Scope") {
					t.Errorf("%s: the failure does not name the codes and the field: %+v", c.Name, c.Failure)
				}
			}
		}
	}
	want := map[string]int{
		"PersistentVolumeClaim team-a/denied / secret-scope":      pvcLine,
		"PersistentVolumeClaim team-a/denied-item / secret-scope": itemLine,
	}
	if len(failures) != len(want) {
		t.Errorf("failures %v, want %v", failures, want)
	}
	for name, line := range want {
		if failures[name] != line {
			t.Errorf("%s: failure at line %d, want %d (all: %v)", name, failures[name], line, failures)
		}
	}
	if doc.Tests != tests || doc.Failures != 2 || doc.Errors != 0 || doc.Skipped != skipped || skipped != 1 {
		t.Errorf("totals tests=%d failures=%d errors=%d skipped=%d; counted %d testcases, %d skipped", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, tests, skipped)
	}
}

// modeResults are results as Warn and Audit modes and an undecidable
// review produce them: findings that were let through (Allowed, with
// findings), an error that denied, and one that Audit let through.
func modeResults() ([]Document, []CheckResult) {
	docs := []Document{
		{Source: "a dir/pvc.yaml", Index: 0, Item: -1, Line: 3, Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "p", "namespace": "n"}}},
		{Source: "-", Index: 0, Item: -1, Line: 1, Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "q", "namespace": "n"}}},
	}
	finding := []FindingOut{{Code: "ScopeEntryEmpty", Field: "metadata.annotations[secrets.kubedoop.dev/scope]", Message: "entry 2 of the scope is empty"}}
	ref := func(d Document) ObjectRef { return objectRef(d.Object) }
	results := []CheckResult{
		{Object: ref(docs[0]), Webhook: "secret-scope", Operation: "CREATE", Allowed: true, Mode: ModeWarn, Findings: finding, doc: 0},
		{Object: ref(docs[0]), Webhook: "service-account", Operation: "CREATE", Allowed: true, Mode: ModeAudit, Findings: []FindingOut{{Code: "ServiceAccountMismatch", Field: "spec.serviceAccountName", Message: "m"}}, doc: 0},
		{Object: ref(docs[1]), Webhook: "secret-scope", Operation: "CREATE", Allowed: false, Findings: finding, doc: 1},
		{Object: ref(docs[1]), Webhook: "pod-security", Operation: "CREATE", Allowed: false, Error: "InternalError: the evaluator failed", doc: 1},
		{Object: ref(docs[1]), Webhook: "harness", Operation: "CREATE", Allowed: true, Mode: ModeAudit, Error: "StateUnavailable: the caches are not synced", doc: 1},
	}
	return docs, results
}

// TestJUnitModes: a Warn or Audit finding passes and is marked as not
// enforced; an Enforce denial fails; an error is an <error>.
func TestJUnitModes(t *testing.T) {
	docs, results := modeResults()
	var buf bytes.Buffer
	if err := writeResults(&buf, FormatJUnit, docs, nil, results); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.String())
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 1 {
		t.Fatalf("tests=%d failures=%d errors=%d, want 5, 1, 1:\n%s", doc.Tests, doc.Failures, doc.Errors, buf.String())
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			props := map[string]string{}
			for _, p := range c.Properties {
				props[p.Name] = p.Value
			}
			switch {
			case strings.HasSuffix(c.Name, "p / secret-scope"):
				if c.Failure != nil || props["mode"] != ModeWarn || props["not-enforced"] != "ScopeEntryEmpty" || !strings.Contains(c.SystemOut, "NOT ENFORCED (mode Warn)") {
					t.Errorf("the Warn finding: %+v", c)
				}
			case strings.HasSuffix(c.Name, "p / service-account"):
				if c.Failure != nil || props["mode"] != ModeAudit || !strings.Contains(c.SystemOut, "NOT ENFORCED (mode Audit)") {
					t.Errorf("the Audit finding: %+v", c)
				}
			case strings.HasSuffix(c.Name, "q / secret-scope"):
				if c.Failure == nil || props["mode"] != ModeEnforce || c.File != "" {
					t.Errorf("the Enforce denial from stdin (no file): %+v", c)
				}
			case strings.HasSuffix(c.Name, "q / harness"):
				if c.Error != nil || c.Failure != nil || props["not-enforced"] != "ReviewError" || !strings.Contains(c.SystemOut, "StateUnavailable") {
					t.Errorf("the error Audit let through: %+v", c)
				}
			case strings.HasSuffix(c.Name, "q / pod-security"):
				if c.Error == nil || !strings.Contains(c.Error.Text, "InternalError") {
					t.Errorf("the error: %+v", c)
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
		if r.Level != "error" || len(r.Locations) != 1 || r.Locations[0].PhysicalLocation == nil || r.Locations[0].PhysicalLocation.Region == nil {
			t.Fatalf("result %+v: want level error at a file and line", r)
		}
		loc := r.Locations[0]
		got[loc.PhysicalLocation.ArtifactLocation.URI+" "+loc.LogicalLocations[0].FullyQualifiedName+" "+r.RuleID] = loc.PhysicalLocation.Region.StartLine
	}
	want := map[string]int{
		"pvcs.yaml PersistentVolumeClaim team-a/denied ScopeEntryEmpty":               pvcLine,
		"sub/list.yaml PersistentVolumeClaim team-a/denied-item ScopeUnexpectedValue": itemLine,
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
		if strings.HasSuffix(r.Locations[0].LogicalLocations[0].FullyQualifiedName, "n/p") {
			if pl == nil || pl.ArtifactLocation.URI != "a%20dir/pvc.yaml" || pl.Region == nil || pl.Region.StartLine != 3 {
				t.Errorf("%s: physical location %+v, want a%%20dir/pvc.yaml line 3", key, pl)
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
// for a denial, 0 when all is allowed; an unknown format is a usage error.
func TestCheckFormatKeepsExitStatus(t *testing.T) {
	dir, _, _ := formatInputs(t)
	for _, format := range outputFormats {
		if code, _, stderr := run(t, "", "check", "-f", filepath.Join(dir, "pvcs.yaml"), "-o", format); code != exitDenied {
			t.Errorf("-o %s on a denied object: exit %d (%s), want 1", format, code, stderr)
		}
		allowed := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team-a}\n"
		if code, _, stderr := run(t, allowed, "check", "-f", "-", "-o", format); code != 0 {
			t.Errorf("-o %s on an allowed object: exit %d (%s), want 0", format, code, stderr)
		}
	}
	if code, _, stderr := run(t, "", "check", "-f", dir, "-o", "xml"); code != exitUsage || !strings.Contains(stderr, "junit") {
		t.Errorf("-o xml: exit %d (%s), want a usage error naming the formats", code, stderr)
	}
}

// TestReadmeQuotesRealFormatOutput: the README's `-o junit` and `-o sarif`
// excerpts are what check prints for that example, line for line (a line
// "..." stands for lines left out).
func TestReadmeQuotesRealFormatOutput(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{FormatJUnit, FormatSARIF} {
		command := "$ gatehouse check -f deploy/examples/pvc-denied.yaml -o " + format + "\n"
		_, quoted, ok := strings.Cut(string(readme), command)
		if !ok {
			t.Errorf("README.md does not show %q", strings.TrimSpace(command))
			continue
		}
		quoted, _, _ = strings.Cut(quoted, "\n$ ")
		quoted, _, _ = strings.Cut(quoted, "\n```")
		var stdout string
		inDir(t, filepath.Join("..", "..", ".."), func() {
			_, stdout, _ = run(t, "", "check", "-f", "deploy/examples/pvc-denied.yaml", "-o", format)
		})
		// Each quoted line is found in the output, in order.
		rest := stdout
		checked := 0
		for _, line := range strings.Split(quoted, "\n") {
			if strings.TrimSpace(line) == "..." || line == "" {
				continue
			}
			i := strings.Index(rest, line+"\n")
			if i < 0 {
				t.Errorf("README.md -o %s quotes a line check does not print (in this order):\n%s\n--- output:\n%s", format, line, stdout)
				break
			}
			rest = rest[i+len(line)+1:]
			checked++
		}
		if checked < 10 {
			t.Errorf("README.md -o %s: only %d lines quoted", format, checked)
		}
	}
}
