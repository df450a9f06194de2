package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAndCheckRejectTheSameConfigs: a configuration the policies refuse
// (their rules live beside them, not in api/config) stops serve and check
// alike, before anything listens or is checked: one line per error, each
// naming the file and the field.
func TestServeAndCheckRejectTheSameConfigs(t *testing.T) {
	const header = "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"
	for _, tc := range []struct {
		name, body string
		want       []string // each line after "gatehouse: invalid configuration <file>: "
	}{
		{
			name: "pod security defaults",
			body: "podSecurity:\n  defaults:\n    runAsUser: 0\n",
			want: []string{"podSecurity.defaults.runAsUser: Invalid value: 0 together with " +
				"runAsNonRoot: true would make every pod that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false"},
		},
		{
			name: "proxy port",
			body: "harness:\n  proxy:\n    port: 70000\n",
			want: []string{"harness.proxy.port: Invalid value: 70000 is outside 1..65535"},
		},
		{
			name: "proxy CA ConfigMap",
			body: "harness:\n  proxy:\n    caConfigMap: CA/crt\n",
			want: []string{`harness.proxy.caConfigMap: Invalid value: "CA/crt": must be a ConfigMap name`},
		},
		{
			name: "several",
			body: "webhooks:\n  secret-scope:\n    mode: Dryrun\naudit:\n  interval: 10s\n",
			want: []string{
				`webhooks[secret-scope].mode: Unsupported value: "Dryrun": supported values: "Enforce", "Warn", "Audit"`,
				`audit.interval: Invalid value: "10s": must be at least 1m0s, or "0" for off`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(header+tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var want string
			for _, line := range tc.want {
				want += "gatehouse: invalid configuration " + path + ": " + line + "\n"
			}
			for _, args := range [][]string{
				{"serve", "--config", path},
				{"check", "--config", path, "-f", "../../../deploy/examples/pod-denied.yaml"},
				{"manifests", "--config", path},
			} {
				code, stdout, stderr := run(t, "", args...)
				if code != exitUsage || stdout != "" || stderr != want {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", args[0], code, stdout, stderr, exitUsage, want)
				}
			}
		})
	}
}

// TestConfigErrorsSayFlagsWereLaidOver: a configuration that validates
// alone but not with the flags laid over it says so.
func TestConfigErrorsSayFlagsWereLaidOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "gatehouse: invalid configuration " + path + " with flags: serving.port: Invalid value: 0: must be between 1 and 65535\n"
	if code, _, stderr := run(t, "", "serve", "--config", path, "--port", "0"); code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
	}
}

// TestConfigFileErrorsNameTheFile: an error of the file itself (a key
// set twice, an unknown field) is one line per error, each naming the file.
func TestConfigFileErrorsNameTheFile(t *testing.T) {
	const header = "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"
	for body, want := range map[string][]string{
		"serving:\n  port: 1\n  port: 2\n":        {`yaml: line 5: key "port" already set in map`},
		"servng: {}\nproducts:\n  groups: [.a]\n": {`unknown field "products.groups"`, `unknown field "servng"`},
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(header+body), 0o600); err != nil {
			t.Fatal(err)
		}
		var wantErr string
		for _, line := range want {
			wantErr += "gatehouse: " + path + ": " + line + "\n"
		}
		if code, _, stderr := run(t, "", "check", "--config", path, "-f", "../../../deploy/examples/pod-denied.yaml"); code != exitUsage || stderr != wantErr {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", body, code, stderr, exitUsage, wantErr)
		}
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
