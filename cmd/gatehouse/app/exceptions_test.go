package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scopeException is a ClusterException excusing ScopeEntryEmpty of
// secret-scope on the Pod web of team-a, expiring at expires.
func scopeException(expires time.Time) string {
	return `apiVersion: gatehouse.dev/v1alpha1
kind: ClusterException
metadata: {name: scope-migration}
spec:
  match: [{namespaces: [team-a], kinds: [{kind: Pod}], names: [web]}]
  webhooks: [secret-scope]
  codes: [ScopeEntryEmpty]
  reason: moving to per-service scopes, PLAT-1234
  expires: "` + expires.UTC().Format(time.RFC3339) + `"
`
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckHonoursExceptions: an exception given with --state excuses the
// finding as the server does (webhooks' TestExcuseCombinedEqualsOwn): the
// object is admitted, with the warning naming the exception, and the
// result lists the excuse; an expired one excuses nothing and is named.
func TestCheckHonoursExceptions(t *testing.T) {
	expires := time.Now().Add(time.Hour)
	state := writeFile(t, "exception.yaml", scopeException(expires))
	code, stdout, stderr := run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", state)
	until := expires.UTC().Format(time.RFC3339)
	if code != exitOK || !strings.Contains(stdout, "  secret-scope: excused\n") ||
		!strings.Contains(stdout, "! warning: gatehouse secret-scope: ScopeEntryEmpty at spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope] excused by exception scope-migration until "+until) {
		t.Fatalf("exit %d, want 0 and the excuse:\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", state, "-o", "json")
	var out struct {
		Results []CheckResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	found := false
	for _, r := range out.Results {
		if r.Webhook == "secret-scope" {
			found = true
			if !r.Allowed || len(r.Findings) != 0 || len(r.Excused) != 1 || r.Excused[0].Exception != "scope-migration" || r.Excused[0].Expires != until {
				t.Errorf("secret-scope result %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("no secret-scope result:\n%s", stdout)
	}

	// Expired: denied as without it, and the warning says which expired.
	expired := writeFile(t, "expired.yaml", scopeException(time.Now().Add(-time.Minute)))
	code, stdout, _ = run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", expired)
	if code != exitDenied || !strings.Contains(stdout, "secret-scope: denied") || !strings.Contains(stdout, "exception scope-migration expired at") {
		t.Errorf("expired: exit %d, want 1 naming the expired exception:\n%s", code, stdout)
	}

	// An exception checked before the object, in the same input, excuses
	// it too: it was admitted first, as the API server would store it.
	code, stdout, _ = run(t, scopeException(expires)+"---\n"+badScopePod, "check", "-f", "-", "--namespace-labels", "team-a")
	if code != exitOK || !strings.Contains(stdout, "  secret-scope: excused\n") {
		t.Errorf("in the input: exit %d, want the pod excused:\n%s", code, stdout)
	}
}

// TestCheckNowJudgesExpiry: --now judges the exceptions' expiry at the time
// given, so an exception in force today shows what its expiry will deny,
// and one expired today excused what it excused before then.
func TestCheckNowJudgesExpiry(t *testing.T) {
	expires := time.Now().Add(time.Hour)
	state := writeFile(t, "exception.yaml", scopeException(expires))
	after := expires.Add(time.Minute).UTC().Format(time.RFC3339)
	code, stdout, _ := run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", state, "--now", after)
	if code != exitDenied || !strings.Contains(stdout, "exception scope-migration expired at") {
		t.Errorf("--now after the expiry: exit %d, want 1 naming the expired exception:\n%s", code, stdout)
	}
	expired := writeFile(t, "expired.yaml", scopeException(time.Now().Add(-time.Hour)))
	before := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	code, stdout, _ = run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", expired, "--now", before)
	if code != exitOK || !strings.Contains(stdout, "  secret-scope: excused\n") {
		t.Errorf("--now before the expiry: exit %d, want the pod excused:\n%s", code, stdout)
	}
	code, _, stderr := run(t, badScopePod, "check", "-f", "-", "--now", "tomorrow")
	if code != exitUsage || !strings.Contains(stderr, `--now: "tomorrow" is not an RFC 3339 time`) {
		t.Errorf("--now tomorrow: exit %d, want 2 naming the flag:\n%s", code, stderr)
	}
}

// TestCheckInProcessLayoutHonoursExceptions: in every layout an exception
// excuses what it names. The in-process layout once denied SCOPE's finding
// in an admission policy, which no exception reaches; it now proves only
// allows in the API server, and a finding reaches the webhook, which
// applies the exceptions (docs/in-process.md).
func TestCheckInProcessLayoutHonoursExceptions(t *testing.T) {
	state := writeFile(t, "exception.yaml", scopeException(time.Now().Add(time.Hour)))
	for _, layout := range []string{"separate", "combined", "in-process"} {
		code, stdout, _ := run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--state", state, "--layout", layout)
		if code != exitOK || !strings.Contains(stdout, "  secret-scope: excused\n") {
			t.Errorf("--layout %s: exit %d, want the pod excused:\n%s", layout, code, stdout)
		}
		code, stdout, _ = run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a", "--layout", layout)
		if code != exitDenied || !strings.Contains(stdout, "  secret-scope: denied\n") {
			t.Errorf("--layout %s without the exception: exit %d, want the pod denied:\n%s", layout, code, stdout)
		}
	}
}
