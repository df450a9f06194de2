package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// CheckUser is the user `gatehouse check` admits objects as.
const CheckUser = "gatehouse-check"

type checkFlags struct {
	files  []string
	state  []string
	output string
	config string
	layout string
	modes  modeFlags
}

func newCheck() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check -f PATH... [--state PATH...] [-o text|json|junit|sarif]",
		Short: "Admit manifests offline through the same webhooks the server runs",
		Long: `check admits every object in PATH (a file of YAML or JSON documents, a directory walked
recursively, or - for stdin; List kinds are unwrapped) as a CREATE through every enabled webhook
that intercepts it, mutating webhooks first, exactly as the server would decide it.

--layout in-process decides as an API server with that layout does: the admission policies it
renders are evaluated by the API server's own admission-policy code, and the webhooks it narrows
are not asked what the policies decide. The separate and combined layouts decide alike.

--state supplies existing cluster objects for webhooks that consult cluster state; objects given
with -f are admitted in order, each against the state plus the objects admitted before it.

Exit status: 0 when every object is allowed, 1 when any is denied, 2 for unreadable input or bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.files) == 0 {
				return usageError("check needs at least one -f PATH")
			}
			if !validOutputFormat(f.output) {
				return usageError("-o must be one of %s, not %q", strings.Join(outputFormats, ", "), f.output)
			}
			switch f.layout {
			case webhooks.LayoutSeparate, webhooks.LayoutCombined, webhooks.LayoutInProcess:
			default:
				return usageError("--layout must be %s, %s or %s, not %q", webhooks.LayoutSeparate, webhooks.LayoutCombined, webhooks.LayoutInProcess, f.layout)
			}
			cfg, err := loadConfig(f.config)
			if err != nil {
				return err
			}
			if err := f.modes.apply(cmd, &cfg); err != nil {
				return err
			}
			docs, err := readInputs(f.files, cmd.InOrStdin())
			if err != nil {
				return usageError("%v", err)
			}
			// The state is read object by object and kept trimmed, so a
			// large cluster's worth of it does not sit in memory twice.
			state := newClusterState(nil)
			if err := visitInputs(f.state, cmd.InOrStdin(), func(d Document) error {
				state.add(d.Object)
				return nil
			}); err != nil {
				return usageError("--state: %v", err)
			}
			opts := webhooks.OptionsFromConfig(cfg)
			opts.Workloads = state
			opts.ClusterState = state
			opts.Namespaces = state
			chain := webhooks.NewOffline(webhooks.Build(opts, cfg.Enabled), opts)
			var policies *inProcessPolicies
			if f.layout == webhooks.LayoutInProcess {
				if policies, err = newInProcessPolicies(opts, cfg.Enabled, state); err != nil {
					return err
				}
				defer policies.close()
			}
			objects, results, err := admitAll(cmd.Context(), chain, policies, state, docs)
			if err != nil {
				return err
			}
			if err := writeResults(cmd.OutOrStdout(), f.output, docs, objects, results); err != nil {
				return err
			}
			for _, r := range results {
				if !r.Allowed {
					return &exitError{code: exitDenied}
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "file, directory or - (repeatable)")
	fl.StringArrayVar(&f.state, "state", nil, "existing cluster objects: file, directory or - (repeatable)")
	fl.StringVarP(&f.output, "output", "o", FormatText, "text, json, junit (JUnit XML) or sarif (SARIF 2.1.0)")
	fl.StringVar(&f.config, "config", "", "server configuration file, as for serve")
	fl.StringVar(&f.layout, "layout", webhooks.DefaultLayout, "webhook layout to decide as: separate, combined or in-process (admission policies, docs/in-process.md)")
	f.modes.register(cmd)
	return cmd
}

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
	Object    ObjectRef                               `json:"object"`
	Webhook   string                                  `json:"webhook"`
	Operation string                                  `json:"operation"`
	Allowed   bool                                    `json:"allowed"`
	Findings  []FindingOut                            `json:"findings"`
	Warnings  []string                                `json:"warnings"`
	Patch     []gomodulesjsonpatch.JsonPatchOperation `json:"patch"`
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

	doc int
}

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
}

// admitAll admits each document as a CREATE through the webhooks that
// intercept it, as the API server would: first its own decoding and
// defaulting, then the review chain the server runs (mutating webhooks,
// each seeing the previous one's output, then validating webhooks on the
// final object), each webhook deciding on its own.
func admitAll(ctx context.Context, chain *webhooks.Offline, inProcess *inProcessPolicies, state *clusterState, docs []Document) ([]ObjectOut, []CheckResult, error) {
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
			results = append(results, CheckResult{
				Object: ref, Webhook: APIServerStage, Operation: string(admissionv1.Create),
				Findings: []FindingOut{}, Warnings: []string{}, Patch: []gomodulesjsonpatch.JsonPatchOperation{},
				Error: fmt.Sprintf("%s: %v", webhooks.ReasonUndecodableObject, err), doc: i,
			})
			continue
		}
		raw, err := json.Marshal(admissible)
		if err != nil {
			return nil, nil, usageError("%s: %v", d.Where(), err)
		}
		defaulted, err := defaultedFields(d.Object, raw)
		if err != nil {
			return nil, nil, usageError("%s: %v", d.Where(), err)
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
					return nil, nil, usageError("%s: %v", d.Where(), err)
				}
			}
			if decisions, err = inProcess.review(ctx, req, final, decisions); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", d.Where(), err)
			}
		}
		allowed := true
		for _, dec := range decisions {
			res := resultOf(ref, dec, i)
			allowed = allowed && res.Allowed
			results = append(results, res)
		}
		if allowed {
			if admitted == nil {
				// No webhook took it: admitted as the API server defaulted it.
				if err := json.Unmarshal(raw, &admitted); err != nil {
					return nil, nil, usageError("%s: %v", d.Where(), err)
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
		Object: ref, Webhook: dec.Webhook, Operation: string(admissionv1.Create), Allowed: resp.Allowed,
		Findings: []FindingOut{}, Warnings: append([]string{}, resp.Warnings...),
		Patch: append([]gomodulesjsonpatch.JsonPatchOperation{}, resp.Patches...), doc: doc,
		Mode: dec.ModeName(), Exempt: dec.Outcome == webhooks.DecisionExempt, Withheld: dec.Withheld,
	}
	for _, f := range dec.Findings {
		if f.Severity == policies.Deny {
			res.Findings = append(res.Findings, FindingOut{Code: string(f.Code), Field: f.Field, Message: f.Message})
		}
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

func writeJSON(w io.Writer, objects []ObjectOut, results []CheckResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Results []CheckResult `json:"results"`
		Objects []ObjectOut   `json:"objects"`
	}{results, objects})
}

// writeText prints one block per object: its verdict per webhook, with the
// findings, warnings and a summary of the patch.
// unchangedByMutation reports a mutating webhook that had nothing to do:
// the text output leaves it out (harness-labels sees every object), the JSON
// output keeps it.
func unchangedByMutation(r CheckResult) bool {
	def, _ := webhooks.Lookup(r.Webhook)
	return def.Type == webhooks.Mutating && r.Allowed && len(r.Patch) == 0 && len(r.Warnings) == 0 && r.Error == "" &&
		len(r.Findings) == 0 && len(r.Withheld) == 0 && !r.Exempt
}

func writeText(w io.Writer, docs []Document, results []CheckResult) {
	denied, soft := writeTextBlocks(w, docs, results)
	fmt.Fprintln(w, "\n"+summaryLine(len(docs), "checked", denied, soft))
}

// summaryLine is the last line of the text output: how many objects were
// looked at, denied, and admitted only because of a webhook's mode.
func summaryLine(objects int, verb string, denied, soft int) string {
	line := fmt.Sprintf("%d %s %s, %d denied", objects, policies.Plural(objects, "object"), verb, denied)
	if soft > 0 {
		line += fmt.Sprintf(", %d admitted only because a webhook is in Warn or Audit", soft)
	}
	return line
}

// writeTextBlocks prints writeText's blocks, without the summary line
// (audit prints its own), and returns the number of denied objects and of
// objects admitted only because of a webhook's mode.
func writeTextBlocks(w io.Writer, docs []Document, results []CheckResult) (denied, soft int) {
	byDoc := map[int][]CheckResult{}
	for _, r := range results {
		byDoc[r.doc] = append(byDoc[r.doc], r)
	}
	for i, d := range docs {
		ref := objectRef(d.Object)
		name := ref.Name
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + ref.Name
		}
		rs := byDoc[i]
		if len(rs) == 0 {
			fmt.Fprintf(w, "%-7s %s %s: no webhook intercepts it (%s)\n", "skip", ref.Kind, name, d.Where())
			continue
		}
		verdict := "allowed"
		for _, r := range rs {
			if softened(r) && verdict == "allowed" {
				verdict = "warned"
			}
			if !r.Allowed {
				verdict = "DENIED"
			}
		}
		switch verdict {
		case "DENIED":
			denied++
		case "warned":
			soft++
		}
		fmt.Fprintf(w, "%-7s %s %s (%s)\n", verdict, ref.Kind, name, d.Where())
		for _, r := range rs {
			if unchangedByMutation(r) {
				continue
			}
			state := "allowed"
			switch {
			case r.Exempt:
				state = "exempt"
			case !r.Allowed:
				state = "denied"
			case softened(r):
				state = fmt.Sprintf("would deny, admitted in %s", r.Mode)
			}
			fmt.Fprintf(w, "  %s: %s\n", r.Webhook, state)
			for _, f := range r.Findings {
				fmt.Fprintf(w, "    x %s\n      %s: %s\n", f.Field, f.Code, f.Message)
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
	}
	return denied, soft
}
