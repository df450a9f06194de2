package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// contracts maps each landed contract's policy package to the webhook that
// enforces it; its golden fixtures are replayed through the API server.
var contracts = []struct {
	policy, webhook string
	// optIn: the webhooks see only namespaces with the security-defaults label.
	optIn bool
	// namespace, when set, is the one namespace the contract's objects live
	// in (the operator namespace of OVR); each fixture is deleted after its case.
	namespace string
	// state is cluster state the contract resolves against, applied to the
	// cluster and given to `gatehouse check --state`.
	state string
}{
	{policy: "scope", webhook: "secret-scope"},
	{policy: "serviceaccount", webhook: "service-account"},
	{policy: "podsecurity", webhook: "pod-security", optIn: true},
	{policy: "overrides", webhook: "component-overrides", namespace: "unbounded-system", state: "../deploy/examples/00-operator-workloads.yaml"},
}

// optInLabel is the default security-defaults namespace label.
var optInLabel = map[string]string{"gatehouse.dev/security-defaults": "enabled"}

type expectation struct {
	severity, code, field string
}

type fixture struct {
	name      string // <policy>/<pass|fail>/<file>
	outcome   string
	webhook   string
	optIn     bool
	namespace string
	state     string
	file      string
	object    *unstructured.Unstructured
	expected  []expectation
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	var out []fixture
	for _, c := range contracts {
		for _, outcome := range []string{"pass", "fail"} {
			files, err := filepath.Glob(filepath.Join(repo, "policies", c.policy, "testdata", outcome, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if len(files) == 0 {
				t.Fatalf("no %s fixtures for %s", outcome, c.policy)
			}
			for _, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				obj := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out = append(out, fixture{
					name:      filepath.Join(c.policy, outcome, strings.TrimSuffix(filepath.Base(f), ".yaml")),
					outcome:   outcome,
					webhook:   c.webhook,
					optIn:     c.optIn,
					namespace: c.namespace,
					state:     c.state,
					file:      f,
					object:    obj,
					expected:  readFindings(t, strings.TrimSuffix(f, ".yaml")+".findings"),
				})
			}
		}
	}
	return out
}

// readFindings parses a golden .findings file: "<deny|warn> <Code> <field>: <message>".
func readFindings(t *testing.T, path string) []expectation {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []expectation
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 3)
		if len(parts) != 3 {
			t.Fatalf("%s: malformed line %q", path, sc.Text())
		}
		field, _, _ := strings.Cut(parts[2], ": ")
		out = append(out, expectation{severity: parts[0], code: parts[1], field: field})
	}
	return out
}

// offline is what `gatehouse check` decides about an object.
type offline struct {
	// denials maps each webhook that denies to its findings, "Code@field", sorted.
	denials map[string][]string
	// mutated is the object with every mutating webhook's patch applied.
	mutated map[string]any
}

// offlineCheck runs `gatehouse check -o json` on an object, in its namespace
// as the server test created it (carrying the opt-in label when optIn is
// set), with the cluster state in the file state (if any). check is given
// everything the server reads, so no result may be undecided.
func offlineCheck(t *testing.T, obj *unstructured.Unstructured, optIn bool, state string) offline {
	t.Helper()
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, mustJSON(t, obj.Object), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"check", "-o", "json", "-f", file}
	if state != "" {
		args = append(args, "--state", state)
	}
	if ns := obj.GetNamespace(); ns != "" {
		if optIn {
			ns += "=gatehouse.dev/security-defaults=enabled"
		}
		args = append(args, "--namespace-labels", ns)
	}
	code := app.Main(args, strings.NewReader(""), &stdout, &stderr)
	if code == 2 {
		t.Fatalf("check: %s", stderr.String())
	}
	var out struct {
		Results []struct {
			Webhook  string   `json:"webhook"`
			Outcome  string   `json:"outcome"`
			Missing  []string `json:"missing"`
			Allowed  bool     `json:"allowed"`
			Findings []struct{ Code, Field string }
			Patch    []json.RawMessage `json:"patch"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	result := offline{denials: map[string][]string{}}
	// The patches apply to the object as the API server hands it to
	// admission, which check admits (webhooks/apidefaults).
	admissible, err := apidefaults.PreAdmission(obj.DeepCopy().Object)
	if err != nil {
		t.Fatalf("check refuses the object before admission: %v", err)
	}
	mutated := mustJSON(t, admissible)
	for _, r := range out.Results {
		if r.Outcome == "undecided" || code == 3 {
			t.Fatalf("check could not decide %s (exit %d), missing %v: the comparison with the server would prove nothing", r.Webhook, code, r.Missing)
		}
		if len(r.Patch) > 0 {
			patch, err := jsonpatch.DecodePatch(mustJSON(t, r.Patch))
			if err != nil {
				t.Fatal(err)
			}
			if mutated, err = patch.Apply(mutated); err != nil {
				t.Fatal(err)
			}
		}
		if r.Allowed {
			continue
		}
		var fs []string
		for _, f := range r.Findings {
			fs = append(fs, f.Code+"@"+f.Field)
		}
		sort.Strings(fs)
		result.denials[r.Webhook] = fs
	}
	if err := json.Unmarshal(mutated, &result.mutated); err != nil {
		t.Fatal(err)
	}
	return result
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// warningRecorder collects the warnings the API server relays.
type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// reset forgets the warnings recorded so far.
func (w *warningRecorder) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = nil
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

func clientWithWarnings(t *testing.T, e *env) (client.Client, *warningRecorder) {
	t.Helper()
	rec := &warningRecorder{}
	cfg := rest.CopyConfig(e.config)
	cfg.WarningHandler = rec
	// No client-side rate limit: the fixture walks send hundreds of dry
	// runs one after the other, which client-go's default of 5 per second
	// would stretch to minutes.
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// testNamespace creates a fresh namespace for one case, with the
// ServiceAccounts the object's pods name (the ServiceAccount admission plugin
// rejects pods whose ServiceAccount does not exist).
func testNamespace(t *testing.T, e *env, seed string, obj *unstructured.Unstructured, labels map[string]string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(seed))
	ns := "e2e-" + hex.EncodeToString(sum[:6])
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	accounts := map[string]bool{"default": true}
	if obj != nil && obj.GetKind() == "Pod" {
		for _, f := range []string{"serviceAccountName", "serviceAccount"} {
			if name, ok, _ := unstructured.NestedString(obj.Object, "spec", f); ok && name != "" {
				accounts[name] = true
			}
		}
	}
	for name := range accounts {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := e.client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return ns
}

// liveCauses returns the webhook that answered a denial and its causes as
// "Code@field", sorted, checking that every cause names that webhook.
func liveCauses(t *testing.T, err error) (string, []string) {
	t.Helper()
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		t.Fatalf("want an API status error, got %v", err)
	}
	s := status.Status()
	if s.Reason != metav1.StatusReasonInvalid || s.Code != 422 || s.Details == nil || len(s.Details.Causes) == 0 {
		t.Fatalf("want 422 Invalid with causes, got %d %s: %s", s.Code, s.Reason, s.Message)
	}
	webhook := ""
	var causes []string
	for _, c := range s.Details.Causes {
		i := strings.LastIndex(c.Message, "(gatehouse ")
		if i < 0 || !strings.HasSuffix(c.Message, ")") || !strings.HasPrefix(c.Message, string(c.Type)+": ") {
			t.Fatalf("cause is not attributed to a gatehouse webhook with its code: %+v", c)
		}
		name := strings.TrimSuffix(c.Message[i+len("(gatehouse "):], ")")
		if webhook != "" && webhook != name {
			t.Fatalf("causes from two webhooks in one denial: %s and %s", webhook, name)
		}
		webhook = name
		causes = append(causes, string(c.Type)+"@"+c.Field)
	}
	sort.Strings(causes)
	// The entry that answered: the webhook's own (separate layout) or the
	// combined group it is a member of (the default layout), or their
	// entry of Namespaces' own requests.
	entries := []string{webhook, webhook + "-unlabelled", webhook + "-namespaces"}
	for _, g := range route.Groups() {
		entries = append(entries, g.Name, g.Name+"-namespaces")
	}
	if !slices.ContainsFunc(entries, func(e string) bool {
		return strings.Contains(s.Message, fmt.Sprintf("admission webhook %q denied the request", e+".gatehouse.dev"))
	}) {
		t.Errorf("the API server's message does not name the webhook or its group: %s", s.Message)
	}
	return webhook, causes
}

// codesOf returns the codes of "Code@field" entries, sorted.
func codesOf(entries []string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i], _, _ = strings.Cut(e, "@")
	}
	sort.Strings(out)
	return out
}

// movedByConversion reports whether the API server's conversion moves a
// value of obj to another field before admission: a pod spec (of a Pod or a
// template) stating the deprecated serviceAccount is judged as
// serviceAccountName.
func movedByConversion(obj map[string]any) bool {
	for _, path := range [][]string{{"spec"}, {"spec", "template", "spec"}, {"template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
		if _, ok, _ := unstructured.NestedFieldNoCopy(obj, append(path, "serviceAccount")...); ok {
			return true
		}
	}
	return false
}

func expectedDenials(f fixture) []string {
	var out []string
	for _, e := range f.expected {
		if e.severity == "deny" {
			out = append(out, e.code+"@"+e.field)
		}
	}
	sort.Strings(out)
	return out
}

// TestFixturesThroughTheAPIServer replays every golden fixture of every
// landed contract through the real API server: pass fixtures are admitted
// (also as a dry run, which stores nothing) with the expected warnings and,
// where a mutating webhook applies, stored exactly as gatehouse check says;
// fail fixtures are rejected, dry run or not, with exactly the expected codes
// and field paths as Status causes.
func TestFixturesThroughTheAPIServer(t *testing.T) {
	e := requireCluster(t)
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			c, warnings := clientWithWarnings(t, e)
			var labels map[string]string
			if f.optIn {
				labels = optInLabel
			}
			obj := f.object.DeepCopy()
			if f.namespace != "" {
				applyState(t, e, f.state)
				obj.SetNamespace(f.namespace)
				t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
			} else {
				obj.SetNamespace(testNamespace(t, e, f.name, obj, labels))
			}
			// Ephemeral containers cannot be created with a pod; they are
			// added afterwards through their subresource, as kubectl debug does.
			ephemeral, hasEphemeral, _ := unstructured.NestedSlice(obj.Object, "spec", "ephemeralContainers")
			unstructured.RemoveNestedField(obj.Object, "spec", "ephemeralContainers")

			dry := obj.DeepCopy()
			dryErr := c.Create(ctx, dry, client.DryRunAll)
			err := c.Create(ctx, obj)
			if err == nil && hasEphemeral {
				if err = unstructured.SetNestedSlice(obj.Object, ephemeral, "spec", "ephemeralContainers"); err != nil {
					t.Fatal(err)
				}
				err = c.SubResource("ephemeralcontainers").Update(ctx, obj)
			}

			// check is given the fixture as written: it applies the API
			// server's decoding and defaulting itself.
			sent := f.object.DeepCopy()
			sent.SetNamespace(obj.GetNamespace())
			want := offlineCheck(t, sent, f.optIn, f.state)

			if f.outcome == "pass" {
				if dryErr != nil || err != nil {
					t.Fatalf("a pass fixture was rejected: dry run: %v; create: %v", dryErr, err)
				}
				for _, exp := range f.expected {
					if exp.severity != "warn" {
						continue
					}
					prefix := fmt.Sprintf("gatehouse %s: %s at %s: ", f.webhook, exp.code, exp.field)
					found := false
					for _, w := range warnings.all() {
						found = found || strings.HasPrefix(w, prefix)
					}
					if !found {
						t.Errorf("warning %q not relayed; got %q", prefix, warnings.all())
					}
				}
				if f.optIn {
					compareSecurityContexts(t, e, obj, want.mutated)
				}
				return
			}

			if err == nil || dryErr == nil {
				t.Fatalf("a fail fixture was admitted (dry run error: %v, create error: %v)", dryErr, err)
			}
			for _, got := range []error{dryErr, err} {
				webhook, causes := liveCauses(t, got)
				offlineCauses, ok := want.denials[webhook]
				if !ok {
					t.Fatalf("denied by %s, which allows the fixture offline (offline denials: %v)", webhook, want.denials)
				}
				if strings.Join(causes, " ") != strings.Join(offlineCauses, " ") {
					t.Errorf("%s causes %v, offline %v", webhook, causes, offlineCauses)
				}
				if len(want.denials) == 1 && webhook != f.webhook {
					t.Errorf("denied by %s, want %s", webhook, f.webhook)
				}
			}
			// The golden file is the evaluator's verdict on the fixture as
			// written; check (like the server) judges it after the API
			// server's conversion, which can move a finding (a deprecated
			// serviceAccount is judged as serviceAccountName). The codes
			// must agree, and the fields too wherever the server's object
			// states the field the golden file names.
			offlineCodes, goldenCodes := codesOf(want.denials[f.webhook]), codesOf(expectedDenials(f))
			if strings.Join(offlineCodes, " ") != strings.Join(goldenCodes, " ") {
				t.Errorf("offline codes of %s %v differ from the golden file's %v", f.webhook, offlineCodes, goldenCodes)
			}
			if moved := movedByConversion(f.object.Object); !moved && strings.Join(want.denials[f.webhook], " ") != strings.Join(expectedDenials(f), " ") {
				t.Errorf("offline findings of %s %v differ from the golden file %v", f.webhook, want.denials[f.webhook], expectedDenials(f))
			}
		})
	}
}

// compareSecurityContexts checks that the pod the API server stored carries
// exactly the security contexts gatehouse check computed.
func compareSecurityContexts(t *testing.T, e *env, obj *unstructured.Unstructured, want map[string]any) {
	t.Helper()
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(obj.GroupVersionKind())
	if err := e.client.Get(context.Background(), client.ObjectKeyFromObject(obj), stored); err != nil {
		t.Fatal(err)
	}
	paths := [][]string{{"spec", "securityContext"}}
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		items, _, _ := unstructured.NestedSlice(want, "spec", list)
		for i := range items {
			paths = append(paths, []string{"spec", list, fmt.Sprint(i), "securityContext"})
		}
	}
	for _, p := range paths {
		got, wantSC := localcluster.Lookup(stored.Object, p), localcluster.Lookup(want, p)
		if !reflect.DeepEqual(normalizeNumbers(got), normalizeNumbers(wantSC)) {
			t.Errorf("%s: stored %v, gatehouse check says %v", strings.Join(p, "."), got, wantSC)
		}
	}
}

// normalizeNumbers makes int64 and float64 JSON numbers comparable.
func normalizeNumbers(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

var stateApplied sync.Map

// applyState creates the objects of a state file once per run, and waits
// until gatehouse's informer cache reads the last of them, so resolution
// sees all.
func applyState(t *testing.T, e *env, file string) {
	t.Helper()
	if file == "" {
		return
	}
	if _, done := stateApplied.Load(file); done {
		return
	}
	objs, err := localcluster.ReadManifests(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" {
			if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		if err := e.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("state %s: %v", obj.GetName(), err)
		}
	}
	// gatehouse reads them from an informer cache: probe until an override
	// that needs the storage DaemonSet resolves without the skip warning.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "unbounded-system", Name: "unbounded-component-overrides"},
		Data: map[string]string{"probe.yaml": "apiVersion: overrides.unbounded-cloud.io/v1alpha1\noverrides:\n- component: storage\n  kind: DaemonSet\n  extraArgs: {run: [--v=1]}\n"}}
	c, warnings := clientWithWarnings(t, e)
	deadline := time.Now().Add(time.Minute)
	for {
		warnings.reset()
		err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		skipped := false
		for _, w := range warnings.all() {
			skipped = skipped || strings.Contains(w, "OverrideResolutionSkipped")
		}
		if err == nil && !skipped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gatehouse never resolved against the live workloads (last error %v, warnings %q)", err, warnings.all())
		}
		time.Sleep(200 * time.Millisecond)
	}
	stateApplied.Store(file, true)
}
