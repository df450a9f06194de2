package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// The README and docs/ show what commands print in `console` blocks: a line
// `$ COMMAND`, the lines it prints (a line `...` stands for lines left out,
// and `...` inside a line for text left out), and optionally `$ echo $?` with
// the exit status. Every such command is run by a test that compares what it
// prints (docSampleCheckers); TestEveryDocSampleIsChecked fails on output
// shown any other way, so none can drift from the binary.

// docBlock is one fenced code block of a document.
type docBlock struct {
	doc   string // relative to the repository: README.md, docs/check.md
	line  int    // the line of the opening fence
	info  string // the fence's info string: console, sh, yaml, ...
	lines []string
}

// docCommand is one `$ ` line of a console block, the lines quoted under it
// and the exit status a following `$ echo $?` shows (-1 without one).
type docCommand struct {
	doc     string
	line    int
	command string
	quoted  []string
	exit    int
}

func (c docCommand) String() string { return fmt.Sprintf("%s:%d: $ %s", c.doc, c.line, c.command) }

// sampleDocuments are the documents whose samples are checked: the README
// and every document of docs/.
func sampleDocuments(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil || len(docs) < 10 {
		t.Fatalf("docs/*.md: %d documents, %v", len(docs), err)
	}
	return append([]string{filepath.Join(repo, "README.md")}, docs...)
}

// docBlocks reads the fenced code blocks of the sample documents.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var blocks []docBlock
	for _, path := range sampleDocuments(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, path)
		var open *docBlock
		indent := ""
		for i, line := range strings.Split(string(raw), "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case open == nil && strings.HasPrefix(trimmed, "```"):
				open = &docBlock{doc: filepath.ToSlash(rel), line: i + 1, info: strings.TrimPrefix(trimmed, "```")}
				// A block in a list item is indented as its fence is.
				indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			case open != nil && trimmed == "```":
				blocks = append(blocks, *open)
				open = nil
			case open != nil:
				open.lines = append(open.lines, strings.TrimPrefix(line, indent))
			}
		}
		if open != nil {
			t.Fatalf("%s:%d: a code block is never closed", rel, open.line)
		}
	}
	return blocks
}

// commands splits a console block into its commands.
func (b docBlock) commands() []docCommand {
	var out []docCommand
	for i := 0; i < len(b.lines); i++ {
		command, ok := strings.CutPrefix(b.lines[i], "$ ")
		if !ok || command == "echo $?" {
			continue
		}
		c := docCommand{doc: b.doc, line: b.line + 1 + i, command: command, exit: -1}
		j := i + 1
		for ; j < len(b.lines) && !strings.HasPrefix(b.lines[j], "$ "); j++ {
			c.quoted = append(c.quoted, b.lines[j])
		}
		if j+1 < len(b.lines) && b.lines[j] == "$ echo $?" {
			c.exit, _ = strconv.Atoi(b.lines[j+1])
		}
		out = append(out, c)
	}
	return out
}

// docSampleCheckers: for each command the documents show the output of, by
// prefix, the test that runs it and compares what it prints with the lines
// quoted (with docSamples and quotes). A command printing nothing is quoted
// with nothing under it.
var docSampleCheckers = []struct{ prefix, test string }{
	{"go build -o bin/gatehouse ./cmd/gatehouse", "TestDocsQuoteTheBinarysOutput"},
	{"bin/gatehouse check ", "TestDocsQuoteTheBinarysOutput"},
	{"gatehouse check ", "TestDocsQuoteTheBinarysOutput"},
	{"gatehouse version", "TestDocsQuoteTheBinarysOutput"},
	{"gatehouse audit", "TestAuditStoredObjects"},
	{"kubectl apply -f deploy/examples/pod-denied.yaml", "TestReadmeDenialIsTheAPIServers"},
	{"kubectl apply -f pod.yaml", "TestRolloutWalk"},
	{"kubectl apply -f web.yaml", "TestExceptionsWalk"},
	{"kubectl label namespace team-a gatehouse.dev/harnessed-", "TestManagedLabelsHold"},
}

// docSamples returns every command of the documents that starts with
// prefix; it fails when there is none, so a checker never passes on a
// sample that was removed or renamed.
func docSamples(t *testing.T, prefix string) []docCommand {
	t.Helper()
	var out []docCommand
	for _, b := range docBlocks(t) {
		if b.info != "console" {
			continue
		}
		for _, c := range b.commands() {
			if strings.HasPrefix(c.command, prefix) {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no document shows `$ %s...`", prefix)
	}
	return out
}

// quotes reports how the quoted lines differ from out, the output of the
// command: they are runs of lines separated by lines `...`; each run is
// consecutive whole lines of out, the runs in order; without a leading
// `...` the first run starts out, without a trailing one the last ends it.
// A `...` inside a line stands for any text.
func quotes(quoted []string, out string) error {
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		got = nil
	}
	for len(quoted) > 0 && quoted[len(quoted)-1] == "" {
		quoted = quoted[:len(quoted)-1]
	}
	var runs [][]string
	run := []string{}
	openStart, openEnd := false, false
	for i, q := range quoted {
		if strings.TrimSpace(q) == "..." {
			if i == 0 {
				openStart = true
			}
			if i == len(quoted)-1 {
				openEnd = true
			}
			if len(run) > 0 {
				runs = append(runs, run)
			}
			run = []string{}
			continue
		}
		run = append(run, q)
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	if len(runs) == 0 {
		if len(got) > 0 && !openStart {
			return fmt.Errorf("nothing quoted, and it prints %d lines", len(got))
		}
		return nil
	}
	at := 0
	for i, r := range runs {
		found := -1
		for k := at; k+len(r) <= len(got); k++ {
			if linesMatch(r, got[k:k+len(r)]) {
				found = k
				break
			}
			if i == 0 && !openStart {
				break
			}
		}
		if found < 0 {
			return fmt.Errorf("these quoted lines are not printed together, in this order:\n%s", strings.Join(r, "\n"))
		}
		at = found + len(r)
	}
	if !openEnd && at != len(got) {
		return fmt.Errorf("it prints %d more lines after the last one quoted (end the quote with ...)", len(got)-at)
	}
	return nil
}

func linesMatch(quoted, got []string) bool {
	for i := range quoted {
		if quoted[i] == got[i] {
			continue
		}
		if !strings.Contains(quoted[i], "...") {
			return false
		}
		parts := strings.Split(quoted[i], "...")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got[i]) {
			return false
		}
	}
	return true
}

// TestQuotesMatchesAsDocumented: the matching the samples rely on fails
// where it must.
func TestQuotesMatchesAsDocumented(t *testing.T) {
	out := "a\nb\nc\nd\n"
	for _, c := range []struct {
		quoted []string
		ok     bool
	}{
		{[]string{"a", "b", "c", "d"}, true},
		{[]string{"a", "...", "d"}, true},
		{[]string{"...", "b", "c", "..."}, true},
		{[]string{"a", "b", "...", "d", ""}, true},
		{[]string{"a", "...", "c"}, false},        // d follows, unquoted
		{[]string{"b", "c", "d"}, false},          // a precedes, unquoted
		{[]string{"...", "b", "d", "..."}, false}, // b and d are not together
		{[]string{"...", "c", "...", "b"}, false}, // out of order
		{[]string{"a", "b...", "...", "d"}, true},
		{[]string{"x...", "..."}, false},
	} {
		if err := quotes(c.quoted, out); (err == nil) != c.ok {
			t.Errorf("quotes(%q): %v, want ok=%v", c.quoted, err, c.ok)
		}
	}
}

// TestDocsQuoteTheBinarysOutput runs every `$ gatehouse check ...` (or
// `bin/gatehouse check ...`) and `$ gatehouse version` the README and docs/ show with the
// binary built from this tree, from the repository root, and compares what it
// prints and its exit status with what they quote. `go build -o
// bin/gatehouse ./cmd/gatehouse` is the build itself, and prints nothing.
func TestDocsQuoteTheBinarysOutput(t *testing.T) {
	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	commands := docSamples(t, "bin/gatehouse check ")
	commands = append(commands, docSamples(t, "gatehouse check ")...)
	commands = append(commands, docSamples(t, "gatehouse version")...)
	for _, c := range docSamples(t, "go build -o bin/gatehouse ./cmd/gatehouse") {
		if err := quotes(c.quoted, ""); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	if len(commands) < 8 {
		t.Errorf("the documents show %d gatehouse commands; the README's, and check.md's text, undecided, json, junit and sarif excerpts are missing", len(commands))
	}
	for _, c := range commands {
		args := strings.Fields(c.command)[1:]
		cmd := exec.Command(bin, args...)
		cmd.Dir = repo
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("%s: %v", c, err)
			}
			code = exit.ExitCode()
		}
		if c.exit >= 0 && code != c.exit {
			t.Errorf("%s: exit status %d, the document says %d (stderr: %s)", c, code, c.exit, stderr.String())
		}
		if err := quotes(c.quoted, stdout.String()); err != nil {
			t.Errorf("%s: %v\n--- it prints:\n%s", c, err, stdout.String())
		}
	}
}

// kubectlError renders err as kubectl prints an API error it exits on
// (checkErr and StandardErrorMessage in k8s.io/kubectl/pkg/cmd/util/
// helpers.go, v0.36): an Invalid status as "The <kind> "<name>" is
// invalid:" with one "* <field>: <message>" line per distinct cause, any
// other status as "Error from server (<reason>): <message>".
func kubectlError(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "error: " + err.Error()
	}
	s := status.Status()
	if s.Reason != metav1.StatusReasonInvalid {
		return fmt.Sprintf("Error from server (%s): %s", s.Reason, err.Error())
	}
	head := "The request is invalid"
	if s.Details == nil {
		if s.Message != "" {
			head += ": " + s.Message
		}
		return head
	}
	if s.Details.Kind != "" || s.Details.Name != "" {
		head = fmt.Sprintf("The %s %q is invalid", s.Details.Kind, s.Details.Name)
	} else if s.Message != "" && len(s.Details.Causes) == 0 {
		head += ": " + s.Message
	}
	var causes []string
	seen := map[string]bool{}
	for _, c := range s.Details.Causes {
		line := fmt.Sprintf("%s: %s", c.Field, c.Message)
		if !seen[line] {
			seen[line] = true
			causes = append(causes, line)
		}
	}
	switch len(causes) {
	case 0:
		return head
	case 1:
		return head + ": " + causes[0]
	}
	// kubectl ends the head line with the space of its ": " prefix.
	return head + ": \n* " + strings.Join(causes, "\n* ")
}

// TestReadmeDenialIsTheAPIServers creates the Pod of the README's kubectl
// sample through the real API server, with gatehouse registered, and
// requires what kubectl prints for the refusal to be what the README
// quotes.
func TestReadmeDenialIsTheAPIServers(t *testing.T) {
	e := requireCluster(t)
	samples := docSamples(t, "kubectl apply -f deploy/examples/pod-denied.yaml")
	objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "pod-denied.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("deploy/examples/pod-denied.yaml: %d objects, %v", len(objs), err)
	}
	pod := objs[0]
	ensureNamespace(t, e, pod.GetNamespace(), nil)
	err = e.client.Create(context.Background(), pod, client.DryRunAll)
	if err == nil {
		t.Fatal("the API server admitted deploy/examples/pod-denied.yaml")
	}
	// A document cannot keep the trailing space kubectl prints after the
	// head line; every other byte is compared.
	printed := strings.ReplaceAll(kubectlError(err), " \n", "\n")
	for _, c := range samples {
		if err := quotes(c.quoted, printed+"\n"); err != nil {
			t.Errorf("%s: %v\n--- kubectl prints:\n%s", c, err, printed)
		}
	}
}

// TestEveryDocSampleIsChecked: the README and docs/ show output only in
// console blocks, and only of commands a test runs and compares
// (docSampleCheckers); each checker exists and reads its samples with
// docSamples. Command blocks (sh) show no prompt, since a prompt would be
// followed by output nobody checks; text and json blocks, which would hold
// output, are not used.
func TestEveryDocSampleIsChecked(t *testing.T) {
	sources := map[string]string{}
	for _, dir := range []string{repo, filepath.Join(repo, "cmd", "gatehouse", "app"), "."} {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sources[f] = string(raw)
		}
	}
	for _, c := range docSampleCheckers {
		defined := false
		for _, src := range sources {
			if strings.Contains(src, "func "+c.test+"(") {
				defined = true
				if !strings.Contains(src, "docSamples(t, "+strconv.Quote(c.prefix)+")") {
					t.Errorf("%s checks `$ %s...`, but its file never reads those samples with docSamples(t, %q)", c.test, c.prefix, c.prefix)
				}
			}
		}
		if !defined {
			t.Errorf("the checker of `$ %s...`, %s, is defined in no test file", c.prefix, c.test)
		}
	}
	checked := 0
	for _, b := range docBlocks(t) {
		where := fmt.Sprintf("%s:%d", b.doc, b.line)
		switch b.info {
		case "console":
			if len(b.lines) == 0 || !strings.HasPrefix(b.lines[0], "$ ") {
				t.Errorf("%s: a console block starts with the `$ ` line of the command whose output it shows", where)
			}
			for _, c := range b.commands() {
				claimed := false
				for _, checker := range docSampleCheckers {
					claimed = claimed || strings.HasPrefix(c.command, checker.prefix)
				}
				if !claimed {
					t.Errorf("%s: no test runs `$ %s` and compares its output; add a checker to docSampleCheckers, or show no output", c, c.command)
				}
				checked++
			}
		case "sh", "bash", "yaml", "promql":
			for i, line := range b.lines {
				if strings.HasPrefix(strings.TrimSpace(line), "$ ") {
					t.Errorf("%s:%d: a prompt in a %s block: show output in a console block, which a test checks", b.doc, b.line+1+i, b.info)
				}
			}
		default:
			t.Errorf("%s: a ```%s block; show commands in sh, configuration in yaml, and output only in a console block that a test checks", where, b.info)
		}
	}
	if checked < 10 {
		t.Errorf("found %d commands with output in the documents; the parser no longer finds them", checked)
	}
}
