package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// CheckUser is the user `gatehouse check` admits objects as.
const CheckUser = "gatehouse-check"

type checkFlags struct {
	files           []string
	state           []string
	namespaceLabels []string
	cluster         bool
	kube            kubeFlags
	output          string
	config          string
	layout          string
	now             string
	modes           modeFlags
}

func newCheck() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [-f] PATH... [--state PATH...] [--namespace-labels NS=KEY=VALUE,...] [--cluster] [-o text|json|junit|sarif]",
		Short: "Admit manifests offline through the same webhooks the server runs",
		Long: `check admits every object in PATH (a file of YAML or JSON documents, a directory walked
recursively, or - for stdin; List kinds are unwrapped) as a CREATE through every enabled webhook
that intercepts it, mutating webhooks first, exactly as the server would decide it. PATHs are
given with -f (repeated, or comma-separated) or as arguments.

check decides against the cluster state it is given: --state supplies existing cluster objects,
--namespace-labels namespaces and their labels, and --cluster reads them from a cluster (with
--kubeconfig and --context); objects given with -f are admitted in order, each against that
state plus the objects admitted before it. What a webhook needs and check was not given (the
Namespace of an object, without which the opt-in and namespace-selected webhooks cannot tell
whether they apply; a role a harness binds; the DependencyGroup a source requires) leaves that
webhook's result undecided, naming what is missing: check never reports it as allowed.

--layout in-process decides as an API server with that layout does: a webhook the layout narrows
away from an object, because CEL proves it allows the object, answers allowed without being asked.
The layouts decide alike.

Exit status: 0 when every object is allowed, 1 when any is denied, 3 when none is denied and a
webhook could not decide for some (undecided), 2 for unreadable input or bad usage.`,
		Example: `  # the examples, with the namespaces they are created in
  gatehouse check -f deploy/examples/

  # one pod, in a namespace that opts in to the pod security defaults
  gatehouse check pod.yaml --namespace-labels team-a=gatehouse.dev/security-defaults=enabled

  # against the namespaces, harnesses and groups of the cluster of a kubeconfig context
  gatehouse check -f manifests/ --cluster --context staging

  # what the cluster's exceptions stop excusing by the new year
  gatehouse check -f manifests/ --cluster --now 2027-01-01T00:00:00Z

  # for CI: JUnit XML, one testcase per object
  gatehouse check -f a.yaml,b.yaml -o junit > gatehouse.xml`,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&f.files, "filename", "f", nil, "file, directory or - for stdin (repeatable, or comma-separated); PATH arguments add to it")
	fl.StringSliceVar(&f.state, "state", nil, "existing cluster objects: file, directory or - (repeatable, or comma-separated)")
	fl.StringArrayVar(&f.namespaceLabels, "namespace-labels", nil, "NAMESPACE=KEY=VALUE,...: a namespace of the cluster and its labels; NAMESPACE alone for one without labels (repeatable)")
	fl.BoolVar(&f.cluster, "cluster", false, "read the cluster state (namespaces, harnesses, dependency groups, roles, workloads) from the cluster --kubeconfig and --context name, read-only; either of them implies --cluster")
	f.kube.register(cmd, "the cluster --cluster reads")
	fl.StringVarP(&f.output, "output", "o", FormatText, "text, json, junit (JUnit XML) or sarif (SARIF 2.1.0)")
	fl.StringVar(&f.config, "config", "", "server configuration file, as for serve")
	fl.StringVar(&f.layout, "layout", route.DefaultLayout, "webhook layout to decide as: separate, combined or in-process (CEL-proven allows, docs/in-process.md)")
	fl.StringVar(&f.now, "now", "", "RFC 3339 time to judge exceptions' expiry at, instead of the current time: what will an expiry deny")
	f.modes.register(cmd)
	return cmd
}

// layouts are the values --layout takes.
var layouts = []string{route.LayoutSeparate, route.LayoutCombined, route.LayoutInProcess}

func runCheck(cmd *cobra.Command, f checkFlags, args []string) error {
	files := append(slices.Clone(f.files), args...)
	if len(files) == 0 {
		return usageError("check needs at least one PATH (-f PATH, or PATH as an argument)")
	}
	if !validOutputFormat(f.output) {
		return usageError("%v", configv1alpha1.OneOf("-o", f.output, outputFormats...))
	}
	if !slices.Contains(layouts, f.layout) {
		return usageError("%v", configv1alpha1.OneOf("--layout", f.layout, layouts...))
	}
	namespaces, err := parseNamespaceLabels(f.namespaceLabels)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	if err := f.modes.apply(cmd, &cfg); err != nil {
		return err
	}
	docs, err := readInputs(files, cmd.InOrStdin())
	if err != nil {
		return usageError("%v", err)
	}
	opts := route.OptionsFromConfig(cfg)
	if f.now != "" {
		at, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return usageError("--now: %q is not an RFC 3339 time, such as 2026-12-31T00:00:00Z", f.now)
		}
		opts.Now = func() time.Time { return at }
	}
	// The state is read object by object and kept trimmed, so a large
	// cluster's worth of it does not sit in memory twice.
	state := newClusterState(nil)
	state.harnessedLabel = opts.HarnessedNamespaceLabel
	state.exceptionOpts = route.ExceptionIndexOptions(opts.ExceptionRules)
	if err := visitInputs(f.state, cmd.InOrStdin(), func(d Document) error {
		state.add(d.Object)
		return nil
	}); err != nil {
		return usageError("--state: %v", err)
	}
	for _, ns := range namespaces {
		state.addNamespace(ns.name, ns.labels)
	}
	if f.cluster || f.kube.given(cmd) {
		ctx, cancel := context.WithCancel(cmd.Context())
		defer cancel()
		if state.cluster, err = checkClusterView(ctx, f.kube, cfg); err != nil {
			return err
		}
	}
	opts.Workloads = state
	opts.ClusterState = state
	opts.Namespaces = state
	opts.StateGaps = state
	opts.Exceptions = state
	chain := webhooks.NewOffline(webhooks.Build(opts, cfg.Enabled), opts)
	var inProcess *inProcessNarrowing
	if f.layout == route.LayoutInProcess {
		inProcess = newInProcessNarrowing(opts)
	}
	objects, results, err := admitAll(cmd.Context(), chain, inProcess, state, docs)
	if err != nil {
		return err
	}
	if err := writeResults(cmd.OutOrStdout(), f.output, docs, objects, results); err != nil {
		return err
	}
	return exitFor(summarize(docs, results))
}

// exitFor is check's exit status for a summary: denied wins over undecided.
func exitFor(s Summary) error {
	switch {
	case s.Denied > 0:
		return &exitError{code: exitDenied}
	case s.Undecided > 0:
		return &exitError{code: exitUndecided}
	}
	return nil
}

// namespaceLabels is one --namespace-labels value.
type namespaceLabels struct {
	name   string
	labels map[string]string
}

// parseNamespaceLabels reads --namespace-labels values:
// NAMESPACE=KEY=VALUE,KEY=VALUE..., or NAMESPACE for one without labels.
func parseNamespaceLabels(values []string) ([]namespaceLabels, error) {
	var out []namespaceLabels
	for _, v := range values {
		name, list, _ := strings.Cut(v, "=")
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, usageError("--namespace-labels %q: %q is not a namespace name; write NAMESPACE=KEY=VALUE,...", v, name)
		}
		ns := namespaceLabels{name: name, labels: map[string]string{}}
		for _, kv := range strings.Split(list, ",") {
			if kv == "" {
				continue
			}
			key, value, ok := strings.Cut(kv, "=")
			switch {
			case !ok:
				return nil, usageError("--namespace-labels %q: %q is not KEY=VALUE", v, kv)
			case len(validation.IsQualifiedName(key)) > 0:
				return nil, usageError("--namespace-labels %q: %q is not a label key", v, key)
			case len(validation.IsValidLabelValue(value)) > 0:
				return nil, usageError("--namespace-labels %q: %q is not a label value", v, value)
			}
			ns.labels[key] = value
		}
		out = append(out, ns)
	}
	return out, nil
}

// checkClusterView starts the caches `gatehouse audit` reads, for the
// cluster kube names, and waits until they have synced.
func checkClusterView(ctx context.Context, kube kubeFlags, cfg configv1alpha1.ServerConfig) (*clusterView, error) {
	rc, err := kube.restConfig()
	if err != nil {
		return nil, err
	}
	rc.UserAgent = "gatehouse-check"
	overrides := ""
	if cfg.Enabled("component-overrides") {
		overrides = cfg.Overrides.Namespace
	}
	state, workloads, err := startClusterState(ctx, rc, true, overrides, clusterSyncTimeout)
	if err != nil {
		return nil, err
	}
	view := &clusterView{state: state}
	if workloads != nil {
		view.workloads = workloads
	}
	if view.exceptions, err = startExceptions(ctx, rc, cfg, clusterSyncTimeout); err != nil {
		return nil, err
	}
	return view, nil
}

// clusterSyncTimeout bounds how long check waits for the cluster's caches.
const clusterSyncTimeout = 2 * time.Minute

// ObjectRef names an admitted object in the output.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// FindingOut is one denying finding in the output.
type FindingOut struct {
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// CheckResult is the decision of one webhook on one object.
type CheckResult struct {
	Object    ObjectRef `json:"object"`
	Webhook   string    `json:"webhook"`
	Operation string    `json:"operation"`
	// Outcome is OutcomeAllowed, OutcomeDenied or OutcomeUndecided.
	// Allowed is the answer a webhook gave: true for the first, false for
	// the second; an undecided webhook gave none, so JSON leaves "allowed"
	// out of its result (MarshalJSON) rather than claim either.
	Outcome  string                                  `json:"outcome"`
	Allowed  bool                                    `json:"allowed"`
	Findings []FindingOut                            `json:"findings"`
	Warnings []string                                `json:"warnings"`
	Patch    []gomodulesjsonpatch.JsonPatchOperation `json:"patch"`
	// Error is set when the webhook could not decide (the server would
	// answer with this error and the API server would deny).
	Error string `json:"error,omitempty"`
	// Mode is the webhook's mode (Enforce, Warn or Audit). In Warn and
	// Audit, Allowed is true and Findings are what Enforce would deny.
	Mode string `json:"mode"`
	// Exempt: the request is exempt (docs/rollout.md); no webhook judged it.
	Exempt bool `json:"exempt,omitempty"`
	// Withheld lists the operations of the patch a mutating webhook in
	// Audit would have made.
	Withheld []string `json:"withheld,omitempty"`
	// Missing names what the webhook needed and check was not given
	// ("Namespace team-a"): why the result is undecided, or, beside a
	// denial that stands on its findings, what else was missing.
	Missing []string `json:"missing,omitempty"`
	// Excused are the denying findings exceptions excused (not in
	// Findings): with nothing else denying, the webhook allowed.
	Excused []ExcusedOut `json:"excused,omitempty"`

	doc int
}

// ExcusedOut is one finding an exception excused.
type ExcusedOut struct {
	Code      string `json:"code"`
	Field     string `json:"field"`
	Exception string `json:"exception"`
	Expires   string `json:"expires"`
}

// MarshalJSON writes r, without "allowed" when r is undecided: a reader
// that acts on "allowed" (true: admitted, false: refused) must not be told
// either for a webhook that could not decide; "outcome" says why.
func (r CheckResult) MarshalJSON() ([]byte, error) {
	var allowed *bool
	if r.Outcome != OutcomeUndecided {
		allowed = &r.Allowed
	}
	// CheckResult's fields in its order, Allowed optional.
	return json.Marshal(struct {
		Object    ObjectRef                               `json:"object"`
		Webhook   string                                  `json:"webhook"`
		Operation string                                  `json:"operation"`
		Outcome   string                                  `json:"outcome"`
		Allowed   *bool                                   `json:"allowed,omitempty"`
		Findings  []FindingOut                            `json:"findings"`
		Warnings  []string                                `json:"warnings"`
		Patch     []gomodulesjsonpatch.JsonPatchOperation `json:"patch"`
		Error     string                                  `json:"error,omitempty"`
		Mode      string                                  `json:"mode"`
		Exempt    bool                                    `json:"exempt,omitempty"`
		Withheld  []string                                `json:"withheld,omitempty"`
		Missing   []string                                `json:"missing,omitempty"`
		Excused   []ExcusedOut                            `json:"excused,omitempty"`
	}{r.Object, r.Webhook, r.Operation, r.Outcome, allowed, r.Findings, r.Warnings, r.Patch, r.Error, r.Mode, r.Exempt, r.Withheld, r.Missing, r.Excused})
}

// The outcomes of a result. An undecided result is one whose webhook could
// not decide for want of state check was not given (Missing).
const (
	OutcomeAllowed   = "allowed"
	OutcomeDenied    = "denied"
	OutcomeUndecided = "undecided"
)

// APIServerStage is the webhook name of a result that the API server
// itself decides before any webhook: an object of a built-in kind that does
// not decode into its type.
const APIServerStage = "api-server"

// ObjectOut is one admitted object in the JSON output: where it came from,
// and what the API server does to it before admission.
type ObjectOut struct {
	Object ObjectRef `json:"object"`
	Source string    `json:"source"`
	// Defaulted lists the operations ("add /spec/dnsPolicy") that turn the
	// object as written into the object the webhooks are sent: the API
	// server's defaults and conversion. The patches of the object's results
	// apply to that object. Values are left out: some come from the object.
	Defaulted []string `json:"defaulted"`
	// Verdict is the object's, as the summary counts it (Summary).
	Verdict string `json:"verdict"`
}

// admitAll admits each document as a CREATE through the webhooks that
// intercept it, as the API server would: first its own decoding and
// defaulting, then the review chain the server runs (mutating webhooks,
// each seeing the previous one's output, then validating webhooks on the
// final object), each webhook deciding on its own.
func admitAll(ctx context.Context, chain *webhooks.Offline, inProcess *inProcessNarrowing, state *clusterState, docs []Document) ([]ObjectOut, []CheckResult, error) {
	results := []CheckResult{}
	objects := []ObjectOut{}
	for i, d := range docs {
		ref := objectRef(d.Object)
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		// What the API server does before any webhook: decode a built-in
		// kind into its type, default it and convert it (docs/design.md,
		// "What check does before admission"). The webhooks see, and
		// patch, that object. One that does not decode is rejected there,
		// as the server would reject it, and no webhook sees it.
		admissible, err := apidefaults.PreAdmission(d.Object)
		if err != nil {
			objects = append(objects, ObjectOut{Object: ref, Source: d.Where(), Defaulted: []string{}})
			results = append(results, CheckResult{
				Object: ref, Webhook: APIServerStage, Operation: string(admissionv1.Create), Outcome: OutcomeDenied,
				Findings: []FindingOut{}, Warnings: []string{}, Patch: []gomodulesjsonpatch.JsonPatchOperation{},
				Error: fmt.Sprintf("%s: %v", webhooks.ReasonUndecodableObject, err), doc: i,
			})
			continue
		}
		raw, err := json.Marshal(admissible)
		if err != nil {
			return nil, nil, &exitError{code: exitUsage, err: d.errorf(d.Line, "%v", err)}
		}
		defaulted, err := defaultedFields(d.Object, raw)
		if err != nil {
			return nil, nil, &exitError{code: exitUsage, err: d.errorf(d.Line, "%v", err)}
		}
		objects = append(objects, ObjectOut{Object: ref, Source: d.Where(), Defaulted: defaulted})
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID:             types.UID(fmt.Sprintf("check-%d", i)),
			Kind:            metav1.GroupVersionKind(gvk),
			Resource:        metav1.GroupVersionResource(gvr),
			RequestKind:     ptr(metav1.GroupVersionKind(gvk)),
			RequestResource: ptr(metav1.GroupVersionResource(gvr)),
			Name:            ref.Name,
			Namespace:       ref.Namespace,
			Operation:       admissionv1.Create,
			UserInfo:        authenticationv1.UserInfo{Username: CheckUser},
			Object:          runtime.RawExtension{Raw: raw},
		}}
		decisions, admitted := chain.Review(ctx, req)
		if inProcess != nil {
			final := admitted
			if final == nil {
				if err := json.Unmarshal(raw, &final); err != nil {
					return nil, nil, &exitError{code: exitUsage, err: d.errorf(d.Line, "%v", err)}
				}
			}
			if decisions, err = inProcess.review(ctx, req, final, decisions); err != nil {
				return nil, nil, d.errorf(d.Line, "%v", err)
			}
		}
		// An undecided object joins the state too: the API server stores
		// it unless what check was not given denies it.
		admits := true
		for _, dec := range decisions {
			res := resultOf(ref, dec, i)
			admits = admits && res.Outcome != OutcomeDenied
			results = append(results, res)
		}
		if admits {
			if admitted == nil {
				// No webhook took it: admitted as the API server defaulted it.
				if err := json.Unmarshal(raw, &admitted); err != nil {
					return nil, nil, &exitError{code: exitUsage, err: d.errorf(d.Line, "%v", err)}
				}
			}
			state.add(admitted)
		}
	}
	return objects, results, nil
}

// resultOf is one webhook's decision on the CREATE of one object, as check
// and audit print it; doc indexes the object in the output.
func resultOf(ref ObjectRef, dec webhooks.Decision, doc int) CheckResult {
	resp := dec.Response
	res := CheckResult{
		Object: ref, Webhook: dec.Webhook, Operation: string(admissionv1.Create), Outcome: OutcomeAllowed, Allowed: resp.Allowed,
		Findings: []FindingOut{}, Warnings: append([]string{}, resp.Warnings...),
		Patch: append([]gomodulesjsonpatch.JsonPatchOperation{}, resp.Patches...), doc: doc,
		Mode: dec.ModeName(), Exempt: dec.Outcome == webhooks.DecisionExempt, Withheld: dec.Withheld, Missing: dec.Missing,
	}
	excused := map[[2]string]bool{}
	for _, e := range dec.Excused {
		excused[[2]string{string(e.Finding.Code), e.Finding.Field}] = true
		res.Excused = append(res.Excused, ExcusedOut{Code: string(e.Finding.Code), Field: e.Finding.Field, Exception: e.Exception,
			Expires: e.Expires.UTC().Format(time.RFC3339)})
	}
	for _, f := range dec.Findings {
		if f.Severity == policies.Deny && !excused[[2]string{string(f.Code), f.Field}] {
			res.Findings = append(res.Findings, FindingOut{Code: string(f.Code), Field: f.Field, Message: f.Message})
		}
	}
	switch {
	case dec.Outcome == webhooks.DecisionUndecided:
		res.Outcome, res.Allowed = OutcomeUndecided, false
		res.Patch, res.Warnings = []gomodulesjsonpatch.JsonPatchOperation{}, []string{}
		return res
	case !resp.Allowed:
		res.Outcome = OutcomeDenied
	}
	// In Warn or Audit a denial is not answered: WouldDeny keeps it.
	denial := resp.Result
	if resp.Allowed {
		denial = dec.WouldDeny
	}
	if (!resp.Allowed || dec.Outcome == webhooks.DecisionErrored) && len(res.Findings) == 0 && denial != nil {
		res.Error = denial.Message
	}
	return res
}

// defaultedFields names the operations of the JSON patch from the object as
// written to raw, the object as the API server hands it to admission, sorted.
func defaultedFields(written map[string]any, raw []byte) ([]string, error) {
	original, err := json.Marshal(written)
	if err != nil {
		return nil, err
	}
	ops, err := gomodulesjsonpatch.CreatePatch(original, raw)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.Operation + " " + op.Path
	}
	sort.Strings(out)
	return out, nil
}

func objectRef(obj map[string]any) ObjectRef {
	ref := ObjectRef{}
	ref.APIVersion, _ = obj["apiVersion"].(string)
	ref.Kind, _ = obj["kind"].(string)
	if m, ok := obj["metadata"].(map[string]any); ok {
		ref.Namespace, _ = m["namespace"].(string)
		ref.Name, _ = m["name"].(string)
	}
	return ref
}

func ptr[T any](v T) *T { return &v }

// softened reports a result whose findings or error did not deny because
// of its webhook's mode.
func softened(r CheckResult) bool {
	return r.Allowed && r.Mode != string(configv1alpha1.ModeEnforce) && (len(r.Findings) > 0 || r.Error != "")
}

func writeJSON(w io.Writer, docs []Document, objects []ObjectOut, results []CheckResult) error {
	verdicts := objectVerdicts(docs, results)
	out := make([]ObjectOut, len(objects))
	for i, o := range objects {
		out[i] = o
		if i < len(verdicts) {
			out[i].Verdict = verdicts[i]
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Summary Summary       `json:"summary"`
		Results []CheckResult `json:"results"`
		Objects []ObjectOut   `json:"objects"`
	}{summarize(docs, results), results, out})
}

// unchangedByMutation reports a mutating webhook that had nothing to do:
// the text output names it on one line with the others (harness-labels
// sees every object), the JSON output lists it as any other result.
func unchangedByMutation(r CheckResult) bool {
	def, _ := route.Lookup(r.Webhook)
	return def.Type == route.Mutating && r.Outcome == OutcomeAllowed && len(r.Patch) == 0 && len(r.Warnings) == 0 && r.Error == "" &&
		len(r.Findings) == 0 && len(r.Withheld) == 0 && !r.Exempt
}

// writeText prints one block per object (writeTextBlocks), what to do about
// undecided results, and the summary line.
func writeText(w io.Writer, docs []Document, results []CheckResult) {
	writeTextBlocks(w, docs, results)
	s := summarize(docs, results)
	if s.Undecided > 0 {
		fmt.Fprintln(w, "\n"+undecidedHint)
	}
	fmt.Fprintln(w, "\n"+s.line())
}

// undecidedHint says how to give check what an undecided result misses.
const undecidedHint = "undecided: give what is missing with -f or --state, namespaces with --namespace-labels NAMESPACE=KEY=VALUE, or read it from a cluster with --cluster"

// writeTextBlocks prints writeText's blocks, without the summary line
// (audit prints its own): per object its verdict, then per webhook its
// result, findings, warnings and a summary of the patch.
func writeTextBlocks(w io.Writer, docs []Document, results []CheckResult) {
	byDoc := resultsByDoc(results)
	verdicts := objectVerdicts(docs, results)
	for i, d := range docs {
		ref := objectRef(d.Object)
		name := ref.Name
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + ref.Name
		}
		rs := byDoc[i]
		if len(rs) == 0 {
			fmt.Fprintf(w, "%-9s %s %s: no webhook intercepts it (%s)\n", VerdictSkipped, ref.Kind, name, d.Where())
			continue
		}
		verdict := verdicts[i]
		if verdict == VerdictDenied || verdict == VerdictUndecided {
			verdict = strings.ToUpper(verdict)
		}
		fmt.Fprintf(w, "%-9s %s %s (%s)\n", verdict, ref.Kind, name, d.Where())
		var unchanged []string
		for _, r := range rs {
			if unchangedByMutation(r) {
				unchanged = append(unchanged, r.Webhook)
				continue
			}
			state := "allowed"
			switch {
			case r.Outcome == OutcomeUndecided:
				state = "undecided: " + missingText(r.Missing)
			case r.Exempt:
				state = "exempt"
			case r.Outcome == OutcomeDenied:
				state = "denied"
			case softened(r):
				state = fmt.Sprintf("would deny, admitted in %s", r.Mode)
			case len(r.Excused) > 0:
				state = "excused"
			}
			fmt.Fprintf(w, "  %s: %s\n", r.Webhook, state)
			for _, f := range r.Findings {
				fmt.Fprintf(w, "    x %s\n      %s: %s\n", f.Field, f.Code, f.Message)
			}
			if r.Outcome == OutcomeDenied && len(r.Missing) > 0 {
				fmt.Fprintf(w, "    ? also needed, not given: %s\n", strings.Join(r.Missing, ", "))
			}
			for _, warning := range r.Warnings {
				if softened(r) && strings.Contains(warning, "(Warn, would deny)") {
					continue // the findings above, as kubectl would print them
				}
				fmt.Fprintf(w, "    ! warning: %s\n", warning)
			}
			if len(r.Withheld) > 0 {
				fmt.Fprintf(w, "    withheld patch (Audit): %d %s: %s\n", len(r.Withheld), policies.Plural(len(r.Withheld), "operation"), strings.Join(r.Withheld, ", "))
			}
			if r.Error != "" {
				fmt.Fprintf(w, "    x error: %s\n", r.Error)
			}
			if len(r.Patch) > 0 {
				paths := make([]string, len(r.Patch))
				for i, op := range r.Patch {
					paths[i] = op.Operation + " " + op.Path
				}
				fmt.Fprintf(w, "    patch: %d %s: %s\n", len(r.Patch), policies.Plural(len(r.Patch), "operation"), strings.Join(paths, ", "))
			}
		}
		if len(unchanged) > 0 {
			fmt.Fprintf(w, "  allowed, nothing to patch: %s\n", strings.Join(unchanged, ", "))
		}
	}
}

// missingText is what an undecided result missed, as one phrase.
func missingText(missing []string) string {
	return strings.Join(missing, ", ") + " " + map[bool]string{true: "was", false: "were"}[len(missing) == 1] + " not given"
}
