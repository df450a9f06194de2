package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerBuildLeavesOutThePolicyPlugin: gatehouse's build (the image's,
// as the Dockerfile runs it) links none of the API server's admission-policy
// code, nor the grpc and OpenTelemetry it pulls in: no part of gatehouse
// runs it (the in-process layout proves allows in matchConditions, with
// cel-go alone), and image scanners would flag it. The tests' own helper
// that runs admission policies (webhooks/admissionpolicy) links it, which
// shows the test can see it. The binary builds and starts.
func TestServerBuildLeavesOutThePolicyPlugin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "go build") || !strings.Contains(string(raw), "./cmd/gatehouse") {
		t.Fatal("the Dockerfile does not build ./cmd/gatehouse")
	}
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	heavy := func(pkg string) bool {
		return strings.HasPrefix(pkg, "k8s.io/apiserver/") || strings.HasPrefix(pkg, "google.golang.org/grpc") ||
			strings.HasPrefix(pkg, "go.opentelemetry.io/")
	}
	var helper int
	for _, pkg := range deps("./webhooks/admissionpolicy") {
		if heavy(pkg) {
			helper++
		}
	}
	if helper == 0 {
		t.Fatal("the admission-policy helper links no admission-policy code either; the test proves nothing")
	}
	for _, pkg := range deps("./cmd/gatehouse") {
		if heavy(pkg) {
			t.Errorf("gatehouse links %s", pkg)
		}
	}
	bin := filepath.Join(t.TempDir(), "gatehouse")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gatehouse")
	build.Dir = repo
	build.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "gatehouse ") {
		t.Errorf("the build's version: %q, %v", out, err)
	}
}
