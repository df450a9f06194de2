package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
)

// writeKubeconfig writes a kubeconfig with one cluster per context, named
// after it, whose server is https://<context>.example; current is its
// current context.
func writeKubeconfig(t *testing.T, path, current string, contexts ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\ncurrent-context: %s\nclusters:\n", current)
	for _, c := range contexts {
		fmt.Fprintf(&b, "- name: %[1]s\n  cluster: {server: https://%[1]s.example}\n", c)
	}
	b.WriteString("users:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- name: %[1]s\n  context: {cluster: %[1]s, user: u}\n", c)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKubeconfigLookupOrder: the cluster is found as --kubeconfig's help
// says, which is controller-runtime's config.GetConfig order: --kubeconfig,
// else $KUBECONFIG, else (in-cluster, absent here) ~/.kube/config; --context
// picks a context of whichever kubeconfig that is.
func TestKubeconfigLookupOrder(t *testing.T) {
	dir := t.TempDir()
	home, flagFile, envFile := filepath.Join(dir, "home"), filepath.Join(dir, "flag"), filepath.Join(dir, "env")
	writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "home", "home", "home-other")
	writeKubeconfig(t, flagFile, "flag", "flag", "flag-other")
	writeKubeconfig(t, envFile, "env", "env", "env-other")
	// clientcmd resolves ~/.kube/config once, when it is loaded.
	saved := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(home, ".kube", "config")
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = saved })
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, tc := range []struct {
		name       string
		env        string
		flags      kubeFlags
		wantServer string
	}{
		{"~/.kube/config without anything else", "", kubeFlags{}, "https://home.example"},
		{"$KUBECONFIG before ~/.kube/config", envFile, kubeFlags{}, "https://env.example"},
		{"--kubeconfig before $KUBECONFIG", envFile, kubeFlags{kubeconfig: flagFile}, "https://flag.example"},
		{"--context of --kubeconfig", envFile, kubeFlags{kubeconfig: flagFile, context: "flag-other"}, "https://flag-other.example"},
		{"--context of $KUBECONFIG", envFile, kubeFlags{context: "env-other"}, "https://env-other.example"},
		{"--context of ~/.kube/config", "", kubeFlags{context: "home-other"}, "https://home-other.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			rc, err := tc.flags.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			if rc.Host != tc.wantServer {
				t.Errorf("server %s, want %s", rc.Host, tc.wantServer)
			}
		})
	}
	t.Setenv("KUBECONFIG", "")
	_, err := kubeFlags{kubeconfig: flagFile, context: "nope"}.restConfig()
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig "+flagFile+" --context nope: ") || !strings.Contains(err.Error(), `context "nope" does not exist`) {
		t.Errorf("an unknown context: %v", err)
	}
}

// TestEveryCommandHasAnExample: every command's help shows how it is run,
// and every command that reads a cluster takes --kubeconfig and --context,
// with --kubeconfig's help stating the lookup order.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRoot(nil, nil, nil)
	commands := append([]*cobra.Command{root}, root.Commands()...)
	for _, cmd := range commands {
		if cmd.Name() == "help" || cmd.Name() == "completion" {
			continue // cobra's own
		}
		if !strings.Contains(cmd.Example, "gatehouse ") {
			t.Errorf("%s: no example in its help", cmd.Name())
		}
		kubeconfig := cmd.Flags().Lookup("kubeconfig")
		if kubeconfig == nil {
			continue
		}
		if cmd.Flags().Lookup("context") == nil {
			t.Errorf("%s takes --kubeconfig but not --context", cmd.Name())
		}
		if !strings.HasSuffix(kubeconfig.Usage, kubeconfigUsage) {
			t.Errorf("%s --kubeconfig: %q does not state the lookup order", cmd.Name(), kubeconfig.Usage)
		}
	}
	for _, name := range []string{"check", "audit", "serve"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Flags().Lookup("context") == nil {
			t.Errorf("%s has no --context (%v)", name, err)
		}
	}
}
