package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAndCheckRejectTheSameConfigs: a configuration the policies refuse
// (their rules live beside them, not in api/config) stops serve and check
// alike, before anything listens or is checked, with the field named.
func TestServeAndCheckRejectTheSameConfigs(t *testing.T) {
	const header = "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"
	for _, tc := range []struct {
		name, body, want string
	}{
		{
			name: "pod security defaults",
			body: "podSecurity:\n  defaults:\n    runAsUser: 0\n",
			want: "gatehouse: invalid configuration: podSecurity.defaults: pod security defaults: runAsUser: 0 together with " +
				"runAsNonRoot: true would make every pod that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false\n",
		},
		{
			name: "proxy port",
			body: "harness:\n  proxy:\n    port: 70000\n",
			want: "gatehouse: invalid configuration: harness.proxy: proxy port 70000 is outside 1..65535\n",
		},
		{
			name: "proxy CA ConfigMap",
			body: "harness:\n  proxy:\n    caConfigMap: CA/crt\n",
			want: "gatehouse: invalid configuration: harness.proxy.caConfigMap: must be a ConfigMap name\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(header+tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"serve", "--config", path},
				{"check", "--config", path, "-f", "../../../deploy/examples/pod-denied.yaml"},
			} {
				code, stdout, stderr := run(t, "", args...)
				if code != exitUsage || stdout != "" || stderr != tc.want {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", args[0], code, stdout, stderr, exitUsage, tc.want)
				}
			}
		})
	}
}

// TestVersionLine: the release and commit stamped at link time are printed
// with the Go version; unstamped, the line still names all three.
func TestVersionLine(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "", ""
	if got := versionLine(); !strings.HasPrefix(got, "gatehouse ") || !strings.Contains(got, "(commit ") || !strings.Contains(got, ", go1.") {
		t.Errorf("unstamped: %q", got)
	}
	Version, Commit = "0.1.0", "abc1234"
	if got := versionLine(); !strings.HasPrefix(got, "gatehouse 0.1.0 (commit abc1234") || !strings.HasSuffix(got, ")") {
		t.Errorf("stamped: %q", got)
	}
}
