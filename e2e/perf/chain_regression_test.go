package perf

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// chainRecord is where TestReviewChainAnswersAsRecorded keeps the answers:
// every response body and every `check -o json` output, by request.
const chainRecord = "testdata/chain-answers.json.gz"

// labelledNamespaces answers every namespace with the labels that opt it in
// to the pod security webhooks and mark it harnessed, so every member of
// every combined endpoint is selected somewhere.
type namespaceLabels map[string]string

func (n namespaceLabels) NamespaceLabels(string) (map[string]string, error) { return n, nil }

// TestReviewChainAnswersAsRecorded replays the whole corpus (every golden
// fixture as written and as the API server sends it, as a CREATE and as an
// UPDATE of itself) through every per-webhook endpoint and every combined
// endpoint whose namespaceSelector takes the namespace (an opted-in
// harnessed one and a plain one), and
// every fixture through `gatehouse check -o json`, and compares each answer
// byte for byte with the one recorded when the review chain was rewritten.
// GATEHOUSE_UPDATE_CHAIN=1 records the answers of the code as it is.
func TestReviewChainAnswersAsRecorded(t *testing.T) {
	got := chainAnswers(t)
	if os.Getenv("GATEHOUSE_UPDATE_CHAIN") == "1" {
		again := chainAnswers(t)
		for k, v := range got {
			if again[k] != v {
				t.Fatalf("%s: two runs answer differently; the record would not be a regression test", k)
			}
		}
		writeRecord(t, got)
		t.Logf("recorded %d answers", len(got))
		return
	}
	want := readRecord(t)
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	differ := 0
	for _, k := range keys {
		if got[k] != want[k] {
			if differ++; differ <= 5 {
				t.Errorf("%s:\n got: %s\nwant: %s", k, got[k], want[k])
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: answered, but no answer was recorded", k)
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d answers differ from the record", differ, len(want))
	}
	if len(want) < 1000 {
		t.Errorf("the record holds %d answers; the corpus gives thousands", len(want))
	}
}

func chainAnswers(t *testing.T) map[string]string {
	t.Helper()
	repo := repoRoot(t)
	fixtures, err := ReadFixtures(repo)
	if err != nil {
		t.Fatal(err)
	}
	cfg := configv1alpha1.Default()
	opts := route.OptionsFromConfig(cfg)
	opts.ClusterState = emptyState{}
	opts.Now = func() time.Time { return recordedAt }
	all := func(string) bool { return true }
	asWritten := func(obj map[string]any, _ int) (map[string]any, error) { return deepCopy(obj) }
	out := map[string]string{}
	for _, variant := range []struct {
		name  string
		dress func(map[string]any, int) (map[string]any, error)
	}{{"written", asWritten}, {"sent", Dress}} {
		corpus, err := build(fixtures, route.Registry(), opts, variant.dress)
		if err != nil {
			t.Fatal(err)
		}
		for _, labels := range []namespaceLabels{
			{},
			{cfg.Harness.FailClosedNamespaceLabel: "", opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value},
		} {
			o := opts
			o.Namespaces = labels
			hooks := webhooks.Build(o, all)
			byPath := map[string]http.Handler{}
			for _, w := range hooks {
				byPath[w.Path] = w.Admission
			}
			for _, c := range webhooks.BuildCombined(hooks, o) {
				byPath[c.Path] = c.Admission
			}
			for _, r := range corpus.Reviews {
				for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
					body := r.Body
					if op == admissionv1.Update {
						body = asUpdateOfItself(t, body)
					}
					paths := []string{r.Path}
					for _, c := range route.Groups() {
						// A combined endpoint trusts its entry's
						// namespaceSelector: it is sent what the API
						// server would send it.
						if c.Type == r.Type && c.Rendered(o) && c.SelectsNamespace(labels, o) {
							paths = append(paths, c.Path)
						}
					}
					if len(labels) > 0 {
						paths = paths[1:] // the per-webhook endpoints read no namespace
					}
					for _, p := range paths {
						key := fmt.Sprintf("%s %s %s labels=%d %s", variant.name, op, p, len(labels), r.UID)
						out[key] = serve(t, byPath[p], p, body)
					}
				}
			}
		}
	}
	for _, file := range append(fixtureFiles(fixtures), "deploy/examples") {
		out["check "+file] = runCheck(repo, file)
	}
	return out
}

func fixtureFiles(fixtures []Fixture) []string {
	out := make([]string, len(fixtures))
	for i, fx := range fixtures {
		out[i] = fx.File
	}
	return out
}

// recordedAt is the time the answers are given at: the exception fixtures
// expire on dates, and the record must not expire with them.
var recordedAt = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// runCheck is `gatehouse check -f <file> -o json --now <recordedAt>`: its exit status and
// output, with the repository's place shown as <repo> so the record does not
// depend on where the clone is.
func runCheck(repo, file string) string {
	var stdout, stderr bytes.Buffer
	code := app.Main([]string{"check", "-f", filepath.Join(repo, filepath.FromSlash(file)), "-o", "json", "--now", recordedAt.Format(time.RFC3339)},
		strings.NewReader(""), &stdout, &stderr)
	return strings.ReplaceAll(fmt.Sprintf("exit %d\n%s%s", code, stdout.String(), stderr.String()), repo, "<repo>")
}

func serve(t *testing.T, h http.Handler, path string, body []byte) string {
	t.Helper()
	if h == nil {
		t.Fatalf("no endpoint at %s", path)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	return fmt.Sprintf("%d %s", rec.Code, strings.TrimSpace(rec.Body.String()))
}

// asUpdateOfItself turns a CREATE review into an UPDATE whose old object is
// the object: every content denial then ratchets.
func asUpdateOfItself(t *testing.T, body []byte) []byte {
	t.Helper()
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	review.Request.Operation = admissionv1.Update
	review.Request.OldObject = review.Request.Object
	out, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeRecord(t *testing.T, answers map[string]string) {
	t.Helper()
	data, err := json.MarshalIndent(answers, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chainRecord, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readRecord(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(chainRecord)
	if err != nil {
		t.Fatalf("%v (GATEHOUSE_UPDATE_CHAIN=1 records it)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
