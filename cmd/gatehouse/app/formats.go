package app

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// The output formats of `gatehouse check` (and `gatehouse audit`): text and
// json for people and scripts, junit and sarif for CI systems and code
// scanning, which show each finding at the file and line of the manifest.
const (
	FormatText  = "text"
	FormatJSON  = "json"
	FormatJUnit = "junit"
	FormatSARIF = "sarif"
)

// outputFormats lists the formats -o takes, in the order usage names them.
var outputFormats = []string{FormatText, FormatJSON, FormatJUnit, FormatSARIF}

func validOutputFormat(format string) bool { return slices.Contains(outputFormats, format) }

// The enforcement modes a result can be decided in: the server
// configuration's defaultMode and webhooks.<name>.mode. An empty mode is
// Enforce.
const (
	ModeEnforce = string(configv1alpha1.ModeEnforce)
	ModeWarn    = string(configv1alpha1.ModeWarn)
	ModeAudit   = string(configv1alpha1.ModeAudit)
)

// resultMode is the mode the result's webhook decided in.
func resultMode(r CheckResult) string {
	if r.Mode == "" {
		return ModeEnforce
	}
	return r.Mode
}

// fromFile reports whether d was read from a file: not stdin, and not an
// object gatehouse audit read from a cluster (whose only location is its
// name).
func fromFile(d Document) bool { return d.Source != "-" && d.Index >= 0 }

// writeResults writes the results of admitting docs in format: the one
// writer of every -o format, for `check` and `audit` alike. objects are
// what admitAll returns beside results, one per document (the json format
// lists them); each result's doc indexes docs. The format never changes the
// exit status, and every format reports the same Summary.
func writeResults(w io.Writer, format string, docs []Document, objects []ObjectOut, results []CheckResult) error {
	switch format {
	case FormatText:
		writeText(w, docs, results)
		return nil
	case FormatJSON:
		return writeJSON(w, docs, objects, results)
	case FormatJUnit:
		return writeJUnit(w, docs, results)
	case FormatSARIF:
		return writeSARIF(w, docs, results)
	}
	return usageError("%v", configv1alpha1.OneOf("-o", format, outputFormats...))
}

// The verdicts of an object, by its results: denied when one denies (a
// webhook that could not decide for another reason denies, as the server
// does); else undecided when one is undecided; else warned when a Warn or
// Audit mode let findings or an error through; else allowed; skipped when
// no webhook intercepts it.
const (
	VerdictDenied    = "denied"
	VerdictUndecided = "undecided"
	VerdictWarned    = "warned"
	VerdictAllowed   = "allowed"
	VerdictSkipped   = "skipped"
)

// Summary is what every -o format reports, in the same numbers: the objects
// by verdict (Objects is their sum) and the results behind them, one per
// object and webhook that judged it.
type Summary struct {
	Objects   int `json:"objects"`
	Results   int `json:"results"`
	Denied    int `json:"denied"`
	Undecided int `json:"undecided"`
	Warned    int `json:"warned"`
	Allowed   int `json:"allowed"`
	Skipped   int `json:"skipped"`
}

// line is the summary as the text output's last line.
func (s Summary) line() string {
	return fmt.Sprintf("%d %s, %d %s: %d denied, %d undecided, %d warned, %d allowed, %d skipped",
		s.Objects, policies.Plural(s.Objects, "object"), s.Results, policies.Plural(s.Results, "result"),
		s.Denied, s.Undecided, s.Warned, s.Allowed, s.Skipped)
}

// verdictOfObject is the verdict of an object with these results.
func verdictOfObject(rs []CheckResult) string {
	if len(rs) == 0 {
		return VerdictSkipped
	}
	verdict := VerdictAllowed
	for _, r := range rs {
		switch {
		case r.Outcome == OutcomeDenied:
			return VerdictDenied
		case r.Outcome == OutcomeUndecided:
			verdict = VerdictUndecided
		case (softened(r) || len(r.Excused) > 0) && verdict == VerdictAllowed:
			verdict = VerdictWarned
		}
	}
	return verdict
}

// objectVerdicts are the verdicts of docs, by index.
func objectVerdicts(docs []Document, results []CheckResult) []string {
	byDoc := resultsByDoc(results)
	out := make([]string, len(docs))
	for i := range docs {
		out[i] = verdictOfObject(byDoc[i])
	}
	return out
}

// summarize counts docs by verdict, and results.
func summarize(docs []Document, results []CheckResult) Summary {
	s := Summary{Objects: len(docs), Results: len(results)}
	for _, v := range objectVerdicts(docs, results) {
		switch v {
		case VerdictDenied:
			s.Denied++
		case VerdictUndecided:
			s.Undecided++
		case VerdictWarned:
			s.Warned++
		case VerdictAllowed:
			s.Allowed++
		case VerdictSkipped:
			s.Skipped++
		}
	}
	return s
}

// ciVerdict is what CI makes of a result.
type ciVerdict int

const (
	verdictPass        ciVerdict = iota
	verdictDenied                // a denial: fails the build
	verdictErrored               // the webhook could not decide and denied: fails the build
	verdictUndecided             // the webhook could not decide for want of state check was not given
	verdictNotEnforced           // findings or an error that a Warn or Audit mode or an exception admitted
)

// verdictOf sorts a result by the answer given: Allowed is the answer, so
// findings or an error that came with an allowed answer were let through by
// the webhook's mode.
func verdictOf(r CheckResult) ciVerdict {
	switch {
	case r.Outcome == OutcomeUndecided:
		return verdictUndecided
	case !r.Allowed && r.Error != "":
		return verdictErrored
	case !r.Allowed:
		return verdictDenied
	case len(r.Findings) > 0 || r.Error != "" || len(r.Excused) > 0:
		return verdictNotEnforced
	}
	return verdictPass
}

// objectName is "Kind namespace/name" (or "Kind name").
func objectName(ref ObjectRef) string {
	name := ref.Name
	if ref.Namespace != "" {
		name = ref.Namespace + "/" + ref.Name
	}
	return ref.Kind + " " + name
}

// --- JUnit XML ---
//
// One testsuite per input file, one testcase per object, so that JUnit's
// counts are the summary's: tests are the objects, failures the denied ones,
// errors the undecided ones (a webhook could not decide for want of state
// check was not given), skipped the ones no webhook intercepts. Each
// testcase has a property per result (the webhook and its outcome), and
// each testsuite the number of its results. A denial's failure names each
// denying webhook's codes, with the findings in its text (a webhook that
// could not decide and denied gives its error); findings or an error a Warn
// or Audit mode let through pass, marked by a property "not-enforced" and
// listed in <system-out>.

type junitTestsuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Errors   int              `xml:"errors,attr"`
	Skipped  int              `xml:"skipped,attr"`
	Suites   []junitTestsuite `xml:"testsuite"`
}

type junitTestsuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitTestcase  `xml:"testcase"`
}

type junitTestcase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	File       string           `xml:"file,attr,omitempty"`
	Line       int              `xml:"line,attr,omitempty"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitProblem    `xml:"failure,omitempty"`
	Error      *junitProblem    `xml:"error,omitempty"`
	Skipped    *junitProblem    `xml:"skipped,omitempty"`
	SystemOut  *junitText       `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"` // CDATA keeps the line breaks readable
}

type junitText struct {
	Text string `xml:",cdata"`
}

func systemOut(s string) *junitText {
	if s == "" {
		return nil
	}
	return &junitText{Text: s}
}

func writeJUnit(w io.Writer, docs []Document, results []CheckResult) error {
	byDoc := resultsByDoc(results)
	out := junitTestsuites{Name: "gatehouse"}
	suiteOf := map[string]int{}
	suiteResults := map[int]int{}
	for i, d := range docs {
		si, ok := suiteOf[d.Source]
		if !ok {
			si = len(out.Suites)
			suiteOf[d.Source] = si
			out.Suites = append(out.Suites, junitTestsuite{Name: d.Source})
		}
		suite := &out.Suites[si]
		suiteResults[si] += len(byDoc[i])
		tc := junitTestcaseOf(d, byDoc[i])
		switch {
		case tc.Failure != nil:
			suite.Failures++
		case tc.Error != nil:
			suite.Errors++
		case tc.Skipped != nil:
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for i := range out.Suites {
		s := &out.Suites[i]
		s.Tests = len(s.Cases)
		s.Properties = &junitProperties{Property: []junitProperty{{Name: "results", Value: fmt.Sprint(suiteResults[i])}}}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitTestcaseOf is the testcase of one object with these results.
func junitTestcaseOf(d Document, rs []CheckResult) junitTestcase {
	ref := objectRef(d.Object)
	where := d.Where()
	tc := junitTestcase{Name: objectName(ref), Classname: "gatehouse", Line: d.Line}
	if fromFile(d) {
		tc.File = d.Source
	}
	if len(rs) == 0 {
		tc.Skipped = &junitProblem{Message: "no webhook intercepts it (" + where + ")"}
		return tc
	}
	props := []junitProperty{{Name: "source", Value: where}}
	var denied, undecided, notEnforced []string
	var failure, errText, sysOut strings.Builder
	for _, r := range rs {
		var lines strings.Builder
		for _, f := range r.Findings {
			fmt.Fprintf(&lines, "%s: %s: %s: %s\n", r.Webhook, f.Field, f.Code, f.Message)
		}
		for _, warning := range r.Warnings {
			fmt.Fprintf(&lines, "%s: warning: %s\n", r.Webhook, warning)
		}
		value := r.Outcome
		switch verdictOf(r) {
		case verdictUndecided:
			undecided = append(undecided, r.Webhook)
			fmt.Fprintf(&errText, "%s: undecided: %s\n", r.Webhook, missingText(r.Missing))
		case verdictErrored:
			denied = append(denied, r.Webhook+" (could not decide)")
			fmt.Fprintf(&failure, "%s: error: %s\n%s", r.Webhook, r.Error, lines.String())
		case verdictDenied:
			denied = append(denied, r.Webhook+" ("+findingCodes(r)+")")
			failure.WriteString(lines.String())
		case verdictNotEnforced:
			codes := findingCodes(r)
			if r.Error != "" {
				codes = ruleReviewError
				fmt.Fprintf(&lines, "%s: error: %s\n", r.Webhook, r.Error)
			}
			notEnforced = append(notEnforced, codes)
			value = "not enforced (" + resultMode(r) + ")"
			fmt.Fprintf(&sysOut, "NOT ENFORCED (mode %s): %s would deny; admitted\n%s", resultMode(r), r.Webhook, lines.String())
		default:
			sysOut.WriteString(lines.String())
		}
		props = append(props, junitProperty{Name: r.Webhook, Value: value})
	}
	if len(notEnforced) > 0 {
		props = append(props, junitProperty{Name: "not-enforced", Value: strings.Join(notEnforced, ", ")})
	}
	tc.Properties = &junitProperties{Property: props}
	tc.SystemOut = systemOut(sysOut.String())
	switch {
	case len(denied) > 0:
		tc.Failure = &junitProblem{Message: "denied by " + strings.Join(denied, ", ") + " (" + where + ")", Type: VerdictDenied, Text: failure.String() + errText.String()}
	case len(undecided) > 0:
		tc.Error = &junitProblem{Message: "undecided: " + strings.Join(undecided, ", ") + " could not decide (" + where + ")", Type: VerdictUndecided,
			Text: errText.String() + undecidedHint + "\n"}
	}
	return tc
}

// findingCodes lists a result's finding codes, sorted and without repeats.
func findingCodes(r CheckResult) string {
	seen := map[string]bool{}
	var codes []string
	for _, f := range r.Findings {
		if !seen[f.Code] {
			seen[f.Code] = true
			codes = append(codes, f.Code)
		}
	}
	sort.Strings(codes)
	return strings.Join(codes, ", ")
}

func resultsByDoc(results []CheckResult) map[int][]CheckResult {
	byDoc := map[int][]CheckResult{}
	for _, r := range results {
		byDoc[r.doc] = append(byDoc[r.doc], r)
	}
	return byDoc
}

// --- SARIF 2.1.0 ---
//
// One run of tool gatehouse. Its rules are the finding codes that occur
// (and ReviewError for a webhook that could not decide), each with a
// helpUri into docs/contracts.md, which names every code. One result per
// finding (or error), at level error for what denied, warning for what
// Warn mode admitted and note for what Audit mode admitted, located at the file as given on the command line and
// the line where the object starts (the item's own line inside a List).
// Objects read from stdin have no physical location, only the logical one.

// sarifSchemaURI is the OASIS schema the output validates against
// (testdata/sarif/sarif-schema-2.1.0.json is a copy).
const sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// docsURL is where the repository's docs/ are published.
const docsURL = "https://github.com/gatehouse-dev/gatehouse/blob/main/docs/"

// ruleReviewError is the rule of a result for a webhook that could not
// decide (the server would deny with this error); ruleUndecided the rule of
// one that could not decide for want of state check was not given.
const (
	ruleReviewError = "ReviewError"
	ruleUndecided   = "Undecided"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
	// Properties carry the summary every format reports.
	Properties struct {
		Summary Summary `json:"summary"`
	} `json:"properties"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	HelpURI          string       `json:"helpUri"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string            `json:"ruleId"`
	RuleIndex  int               `json:"ruleIndex"`
	Level      string            `json:"level"`
	Message    sarifMessage      `json:"message"`
	Locations  []sarifLocation   `json:"locations"`
	Properties map[string]string `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogicalLocation struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifLevel is the level of a result's findings (or error): error for
// what denied, warning for what could not be decided, else by the mode that
// let it through.
func sarifLevel(r CheckResult) string {
	switch r.Outcome {
	case OutcomeDenied:
		return "error"
	case OutcomeUndecided:
		return "warning"
	}
	if resultMode(r) == ModeAudit {
		return "note"
	}
	return "warning"
}

// artifactURI is a path as given on the command line as a URI reference:
// relative paths stay relative (to the directory check ran in), with
// forward slashes; absolute ones become file: URIs.
func artifactURI(source string) string {
	p := filepath.ToSlash(source)
	if filepath.IsAbs(source) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

func writeSARIF(w io.Writer, docs []Document, results []CheckResult) error {
	ruleIndex := map[string]int{}
	var ruleIDs []string
	for _, r := range results {
		if r.Error != "" {
			ruleIDs = append(ruleIDs, ruleReviewError)
		}
		if r.Outcome == OutcomeUndecided {
			ruleIDs = append(ruleIDs, ruleUndecided)
		}
		for _, f := range r.Findings {
			ruleIDs = append(ruleIDs, f.Code)
		}
	}
	sort.Strings(ruleIDs)
	run := sarifRun{
		Tool:    sarifTool{Driver: sarifDriver{Name: "gatehouse", InformationURI: docsURL + "contracts.md", Rules: []sarifRule{}}},
		Results: []sarifResult{},
	}
	for _, id := range ruleIDs {
		if _, ok := ruleIndex[id]; ok {
			continue
		}
		ruleIndex[id] = len(run.Tool.Driver.Rules)
		desc := "gatehouse finding " + id + " (docs/contracts.md names every code and its contract)"
		switch id {
		case ruleReviewError:
			desc = "a webhook could not decide; the server denies such a request"
		case ruleUndecided:
			desc = "a webhook could not decide: check was not given the cluster state it needs (" + undecidedHint + ")"
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: id, ShortDescription: sarifMessage{Text: desc}, HelpURI: docsURL + "contracts.md",
		})
	}
	for _, r := range results {
		if r.doc < 0 || r.doc >= len(docs) {
			return fmt.Errorf("a result of %s names no input document", r.Webhook)
		}
		d := docs[r.doc]
		loc := sarifLocation{LogicalLocations: []sarifLogicalLocation{{FullyQualifiedName: objectName(r.Object), Kind: "object"}}}
		if fromFile(d) {
			loc.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: artifactURI(d.Source)}}
			if d.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: d.Line}
			}
		}
		props := map[string]string{"webhook": r.Webhook, "mode": resultMode(r), "source": d.Where()}
		if r.Outcome == OutcomeUndecided {
			run.Results = append(run.Results, sarifResult{
				RuleID: ruleUndecided, RuleIndex: ruleIndex[ruleUndecided], Level: sarifLevel(r),
				Message:   sarifMessage{Text: fmt.Sprintf("%s: %s: undecided: %s", objectName(r.Object), r.Webhook, missingText(r.Missing))},
				Locations: []sarifLocation{loc}, Properties: props,
			})
			continue
		}
		if r.Error != "" {
			run.Results = append(run.Results, sarifResult{
				RuleID: ruleReviewError, RuleIndex: ruleIndex[ruleReviewError], Level: sarifLevel(r),
				Message:   sarifMessage{Text: fmt.Sprintf("%s: %s: %s", objectName(r.Object), r.Webhook, r.Error)},
				Locations: []sarifLocation{loc}, Properties: props,
			})
		}
		for _, f := range r.Findings {
			fprops := map[string]string{"field": f.Field}
			for k, v := range props {
				fprops[k] = v
			}
			run.Results = append(run.Results, sarifResult{
				RuleID: f.Code, RuleIndex: ruleIndex[f.Code], Level: sarifLevel(r),
				Message:   sarifMessage{Text: fmt.Sprintf("%s: %s: %s: %s", objectName(r.Object), r.Webhook, f.Field, f.Message)},
				Locations: []sarifLocation{loc}, Properties: fprops,
			})
		}
	}
	run.Properties.Summary = summarize(docs, results)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}})
}
