package app

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditUsage: bad flags and a cluster that cannot be found or reached
// exit 2, before anything is listed. (The audit of a live cluster is tested
// on the local control plane: e2e/audit_test.go.)
func TestAuditUsage(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(broken, []byte("not: [a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "-o", "yaml", "--kubeconfig", broken}, `-o: Unsupported value: "yaml": supported values: "text", "json", "junit", "sarif"`},
		{[]string{"audit", "--qps", "0", "--kubeconfig", broken}, "--qps, --burst and --page-size must be positive"},
		{[]string{"audit", "--page-size", "-1", "--kubeconfig", broken}, "--qps, --burst and --page-size must be positive"},
		{[]string{"audit", "--kubeconfig", broken}, "--kubeconfig " + broken + ": "},
		{[]string{"audit", "--kubeconfig", missing}, "--kubeconfig " + missing + ": "},
		{[]string{"audit", "--kubeconfig", broken, "--context", "staging"}, "--kubeconfig " + broken + " --context staging: "},
	} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), tt.args, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), exitUsage, tt.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%v wrote %q to stdout", tt.args, stdout.String())
		}
	}
}

// TestAuditProgressOnlyOnATerminal: the progress line is drawn only when
// stderr is a terminal, never into a buffer, a file or a pipe.
func TestAuditProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": f, "pipe": w} {
		if terminal(out) {
			t.Errorf("a %s is taken for a terminal", name)
		}
	}
}
