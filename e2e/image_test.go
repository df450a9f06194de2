package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerBuildLeavesOutThePolicyPlugin: the image's build of gatehouse
// (the Dockerfile's -tags gatehouse_server) links none of the API server's
// admission-policy code, nor the grpc and OpenTelemetry it pulls in, which
// only `check --layout in-process` runs; and it builds and starts.
func TestServerBuildLeavesOutThePolicyPlugin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "-tags gatehouse_server") {
		t.Fatal("the Dockerfile does not build with -tags gatehouse_server")
	}
	deps := func(tags ...string) []string {
		args := append([]string{"list", "-deps"}, tags...)
		cmd := exec.Command("go", append(args, "./cmd/gatehouse")...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	heavy := func(pkg string) bool {
		return strings.HasPrefix(pkg, "k8s.io/apiserver/") || strings.HasPrefix(pkg, "google.golang.org/grpc") ||
			strings.HasPrefix(pkg, "go.opentelemetry.io/")
	}
	var full int
	for _, pkg := range deps() {
		if heavy(pkg) {
			full++
		}
	}
	if full == 0 {
		t.Fatal("the full build links no admission-policy code either; the test proves nothing")
	}
	for _, pkg := range deps("-tags", "gatehouse_server") {
		if heavy(pkg) {
			t.Errorf("the server build links %s", pkg)
		}
	}
	// go list reads no types: build the image's binary and start it, or a
	// file only that build compiles could break unseen.
	bin := filepath.Join(t.TempDir(), "gatehouse")
	build := exec.Command("go", "build", "-tags", "gatehouse_server", "-o", bin, "./cmd/gatehouse")
	build.Dir = repo
	build.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the server build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "gatehouse ") {
		t.Errorf("the server build's version: %q, %v", out, err)
	}
}
