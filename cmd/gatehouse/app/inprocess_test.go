package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// checkVerdicts runs check -o json with a layout and returns, per object,
// whether it is allowed and each denying webhook's codes and fields.
func checkVerdicts(t *testing.T, layout string, paths ...string) map[string]string {
	t.Helper()
	args := []string{"check", "-o", "json", "--layout", layout}
	for _, p := range paths {
		args = append(args, "-f", p)
	}
	code, stdout, stderr := run(t, "", args...)
	if code != exitOK && code != exitDenied && code != exitUndecided {
		t.Fatalf("check --layout %s: exit %d: %s", layout, code, stderr)
	}
	var out struct {
		Results []CheckResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string][]string{}
	for _, r := range out.Results {
		key := fmt.Sprintf("%s %s/%s", r.Object.Kind, r.Object.Namespace, r.Object.Name)
		if r.Outcome != OutcomeDenied {
			verdicts[key] = append(verdicts[key], r.Webhook+" "+r.Outcome+" "+strings.Join(r.Missing, ","))
			continue
		}
		var fs []string
		for _, f := range r.Findings {
			fs = append(fs, f.Code+"@"+f.Field)
		}
		sort.Strings(fs)
		verdicts[key] = append(verdicts[key], r.Webhook+" denied "+strings.Join(fs, " ")+r.Error)
	}
	flat := map[string]string{}
	for k, v := range verdicts {
		slices.Sort(v)
		flat[k] = strings.Join(v, "; ")
	}
	return flat
}

// TestCheckInProcessLayoutDecidesAlike: `check --layout in-process` answers
// allowed for the members the layout narrows away (CEL proves they allow),
// and every example, SCOPE fixture and SA fixture of an owned workload gets
// the verdict of the combined layout, from the same webhooks with the same
// codes and fields.
func TestCheckInProcessLayoutDecidesAlike(t *testing.T) {
	files, err := filepath.Glob("../../../policies/scope/testdata/*/*.yaml")
	if err != nil || len(files) < 40 {
		t.Fatalf("SCOPE fixtures: %d (%v)", len(files), err)
	}
	owned, err := filepath.Glob("../../../policies/serviceaccount/testdata/*/*-owned-*.yaml")
	if err != nil || len(owned) < 5 {
		t.Fatalf("SA fixtures of owned workloads: %d (%v)", len(owned), err)
	}
	files = append(files, owned...)
	examples, _ := filepath.Glob("../../../deploy/examples/*.yaml")
	checked := 0
	for _, file := range append(files, examples...) {
		combined := checkVerdicts(t, "combined", file)
		inProcess := checkVerdicts(t, "in-process", file)
		for obj, want := range combined {
			checked++
			if got := inProcess[obj]; got != want {
				t.Errorf("%s, %s:\n  combined   %s\n  in-process %s", file, obj, want, got)
			}
		}
		if len(inProcess) != len(combined) {
			t.Errorf("%s: %d objects in-process, %d combined", file, len(inProcess), len(combined))
		}
	}
	t.Logf("%d objects decided alike", checked)
}

// TestCheckRefusesAnUnknownLayout: a layout check does not know is a usage
// error, not a silent combined.
func TestCheckRefusesAnUnknownLayout(t *testing.T) {
	code, _, stderr := run(t, "", "check", "--layout", "inline", "-f", "../../../deploy/examples")
	if code != exitUsage || !strings.Contains(stderr, "--layout") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
