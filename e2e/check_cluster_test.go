package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
)

// checkClusterManifests are checked against the bare cluster: a Pod that
// runs as root in a namespace the cluster opts in to the pod security
// defaults (created by the test), a DependencyGroup listing a CRD that the
// stored group mariadb lists, and a CRD source requiring that group.
const checkClusterManifests = `apiVersion: v1
kind: Pod
metadata: {name: legacy-root, namespace: check-opted-in}
spec:
  securityContext: {runAsUser: 0}
  containers: [{name: legacy, image: registry.example/legacy:1}]
---
apiVersion: helmetica.io/v1
kind: DependencyGroup
metadata: {name: mariadb-copy}
spec: {crds: [{name: mariadbs.k8s.mariadb.com}]}
---
apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata: {name: mariadb-crds, namespace: team-a}
spec:
  reference: {kind: OCIRepository, name: mariadb-crds}
  requires: [{dependencyGroup: {name: mariadb}}]
`

// checkOutcomes runs `gatehouse check -o json` and returns its exit status
// and, per object and webhook, the outcome with its codes or what it missed.
func checkOutcomes(t *testing.T, ctx context.Context, file string, args ...string) (int, map[string]string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := app.Run(ctx, append([]string{"check", "-o", "json", "-f", file}, args...), nil, &stdout, &stderr)
	out := map[string]string{}
	if code == 2 {
		return code, out, stderr.String()
	}
	var parsed struct {
		Results []app.CheckResult `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &parsed); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for _, r := range parsed.Results {
		v := r.Outcome
		for _, f := range r.Findings {
			v += " " + f.Code
		}
		for _, w := range r.Warnings {
			if strings.Contains(w, "DependencyGroupMissing") {
				v += " (warns the group is missing)"
			}
		}
		if len(r.Missing) > 0 {
			v += " missing " + strings.Join(r.Missing, ", ")
		}
		out[r.Object.Kind+" "+r.Object.Name+" "+r.Webhook] = v
	}
	return code, out, stderr.String()
}

// TestCheckReadsTheCluster: `gatehouse check --cluster` decides against a
// real cluster's state, read as a user who may only get, list and watch:
// the namespace's opt-in label, which without the cluster leaves the pod
// security webhooks undecided (exit 3); a stored DependencyGroup that
// clashes; a required group that exists. --context picks the kubeconfig's
// context, and one it lacks is a usage error naming it.
func TestCheckReadsTheCluster(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "check-opted-in", Labels: map[string]string{"gatehouse.dev/security-defaults": "enabled"}}}
	if err := b.admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.admin.Delete(context.Background(), ns) })
	file := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(file, []byte(checkClusterManifests), 0o644); err != nil {
		t.Fatal(err)
	}

	code, offline, stderr := checkOutcomes(t, ctx, file)
	if code != 3 {
		t.Fatalf("without the cluster: exit %d, want 3 (undecided): %v %s", code, offline, stderr)
	}
	for key, want := range map[string]string{
		"Pod legacy-root pod-security":                           "undecided missing Namespace check-opted-in",
		"Pod legacy-root pod-security-defaults":                  "undecided missing Namespace check-opted-in",
		"DependencyGroup mariadb-copy dependency-group":          "allowed",
		"CustomResourceDefinitionSource mariadb-crds crd-source": "undecided missing DependencyGroup mariadb",
	} {
		if offline[key] != want {
			t.Errorf("without the cluster, %s: %q, want %q", key, offline[key], want)
		}
	}

	raw, err := os.ReadFile(b.readerKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--cluster", "--kubeconfig", b.readerKubeconfig},
		{"--kubeconfig", b.readerKubeconfig, "--context", kc.CurrentContext},
	} {
		code, online, stderr := checkOutcomes(t, ctx, file, args...)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1 (denied): %v %s", args, code, online, stderr)
		}
		for key, want := range map[string]string{
			"Pod legacy-root pod-security":                           "denied RunAsRootConflict",
			"Pod legacy-root pod-security-defaults":                  "allowed",
			"DependencyGroup mariadb-copy dependency-group":          "denied DependencyGroupCRDClaimed",
			"CustomResourceDefinitionSource mariadb-crds crd-source": "allowed",
		} {
			if online[key] != want {
				t.Errorf("%v, %s: %q, want %q", args, key, online[key], want)
			}
		}
		for key, v := range online {
			if strings.HasPrefix(v, "undecided") {
				t.Errorf("%v: %s undecided against the cluster: %s", args, key, v)
			}
		}
	}

	code, _, stderr = checkOutcomes(t, ctx, file, "--kubeconfig", b.readerKubeconfig, "--context", "no-such-context")
	if code != 2 || !strings.Contains(stderr, "--context no-such-context") || !strings.Contains(stderr, `context "no-such-context" does not exist`) {
		t.Errorf("an unknown context: exit %d, stderr %q", code, stderr)
	}
}
