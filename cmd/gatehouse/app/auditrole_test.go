package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAuditRoleUsage: the audit role serves no webhook, so the webhook
// role's flags are refused with it rather than silently ignored; it needs a
// cluster and an audit interval; an unknown role is refused.
func TestServeAuditRoleUsage(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	off := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(off, []byte("apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\naudit:\n  interval: \"0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--role", "auditor"}, `--role must be webhook or audit, not "auditor"`},
		{[]string{"serve", "--role", "audit", "--dev"}, "--dev is a flag of the webhook role"},
		{[]string{"serve", "--role", "audit", "--cert-dir", "/tls"}, "--cert-dir is a flag of the webhook role"},
		{[]string{"serve", "--role", "audit", "--reconcile-dependencygroups"}, "--reconcile-dependencygroups is a flag of the webhook role"},
		{[]string{"serve", "--role", "audit"}, "--role=audit needs cluster access"},
		{[]string{"serve", "--role", "audit", "--config", off}, `--role=audit with audit.interval "0"`},
	} {
		code, _, stderr := run(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
