package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the order of the house's rooms, lowest first. A package may
// import packages of a lower layer and of its own, never of a higher one;
// its tests are held to the same. Each layer names its packages: "api/..."
// is api and everything below it, "webhooks" is that one package, so a new
// subpackage of webhooks fails TestImportArrows until it is placed here.
//
//	api/...                the configuration format and the CRD types: a leaf,
//	                       it imports nothing of this module (leaf)
//	policies/...           pure evaluators: no controller-runtime or client-go
//	                       either, not even through a dependency, and no
//	                       logger (forbiddenInPolicies)
//	certs                  serving certificates: below the server that may
//	                       take them, above the policies that must not
//	webhooks/apidefaults   the API server's defaults, applied before a review
//	webhooks/clusterstate  the informer-backed views; they satisfy route's
//	                       reader interfaces without importing it
//	webhooks/admissionpolicy  admission policies evaluated offline by the
//	                       API server's plugin, for tests: a leaf
//	webhooks/route         who takes a request and why: the registry, the
//	                       endpoints and entries, exemptions, selections,
//	                       narrowing, the options they read
//	webhooks/adapters      each contract behind the chain's Evaluator
//	webhooks/render        the webhook configurations and admission policies
//	                       rendered from route's entries
//	webhooks               the review chain, its endpoints and HTTPS server
//	webhooks/audit         the scan of stored objects through the review
//	                       chain, shared by `gatehouse audit` and the server
//	webhooks/controllers   the leader-elected reconcilers beside the webhooks
//	cmd/...                the command tree that wires everything
//
// The order of the webhooks rooms is the data flow: the views and the
// defaults feed the adapters, and controllers may reuse what the webhooks
// know, never the other way round.
var layers = []struct {
	pkgs string
	leaf bool // imports nothing of this module, not even its own layer
}{
	{pkgs: "api/...", leaf: true},
	{pkgs: "policies/..."},
	{pkgs: "certs"},
	{pkgs: "webhooks/apidefaults"},
	{pkgs: "webhooks/clusterstate"},
	{pkgs: "webhooks/admissionpolicy", leaf: true},
	{pkgs: "webhooks/route"},
	{pkgs: "webhooks/adapters"},
	{pkgs: "webhooks/render"},
	{pkgs: "webhooks"},
	{pkgs: "webhooks/audit"},
	{pkgs: "webhooks/controllers"},
	{pkgs: "cmd/..."},
}

// forbiddenInPolicies are the import path prefixes no policy may import:
// the policies get cluster state through small interfaces and log nothing.
// A client must not arrive through a dependency either (indirect); a logger
// may, since k8s.io/apimachinery brings klog and with it go-logr.
var forbiddenInPolicies = []struct {
	prefix   string
	indirect bool
}{
	{prefix: "sigs.k8s.io/controller-runtime", indirect: true},
	{prefix: "k8s.io/client-go", indirect: true},
	{prefix: "github.com/go-logr/"},
	{prefix: "go.uber.org/zap"},
}

// layerOf returns the index in layers of rel (a path relative to the module),
// or -1 when no layer names it.
func layerOf(rel string) int {
	for i, l := range layers {
		if tree, ok := strings.CutSuffix(l.pkgs, "/..."); ok {
			if rel == tree || strings.HasPrefix(rel, tree+"/") {
				return i
			}
		} else if rel == l.pkgs {
			return i
		}
	}
	return -1
}

type listedPackage struct {
	ImportPath   string
	Dir          string
	Deps         []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       *struct{ Path, Dir string }
}

// modulePackages lists the packages of the module this test belongs to, with
// `go list -deps -json ./...` from its root.
func modulePackages(t *testing.T) (module string, pkgs []listedPackage) {
	t.Helper()
	goMod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(goMod)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	root := filepath.Clean(cmd.Dir)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module != nil && filepath.Clean(p.Module.Dir) == root {
			module = p.Module.Path
			pkgs = append(pkgs, p)
		}
	}
	if module == "" {
		t.Fatal("go list found no package of this module")
	}
	return module, pkgs
}

// rel is p's directory relative to the module root, as module paths name
// it ("policies/scope"; "" for the root).
func (p listedPackage) rel(module string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
}

// sourceFiles are the paths of p's Go files other than tests, whatever
// their build constraints.
func (p listedPackage) sourceFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(p.Dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(paths, func(path string) bool { return strings.HasSuffix(path, "_test.go") })
}

// violations returns what breaks the arrows among pkgs of module.
func violations(module string, pkgs []listedPackage) []string {
	rel := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	var out []string
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		fromLayer := layerOf(from)
		if fromLayer < 0 {
			out = append(out, from+": in no layer; place it in the layer order (layers in cmd/gatehouse/arrows_test.go)")
			continue
		}
		imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
		slices.Sort(imports)
		imports = slices.Compact(imports)
		for _, imp := range imports {
			to, ours := rel(imp)
			if !ours || imp == p.ImportPath {
				continue
			}
			toLayer := layerOf(to)
			switch {
			case layers[fromLayer].leaf:
				out = append(out, from+" imports "+to+": "+layers[fromLayer].pkgs+" imports nothing of this module")
			case toLayer > fromLayer:
				out = append(out, from+" imports "+to+": "+layers[fromLayer].pkgs+" is below "+layers[toLayer].pkgs)
			}
		}
		if layers[fromLayer].pkgs != "policies/..." {
			continue
		}
		for _, bad := range forbiddenInPolicies {
			deps := imports
			if bad.indirect {
				deps = slices.Concat(p.Deps, imports)
			}
			// One line per prefix: the first package of it is enough to
			// name the culprit.
			if i := slices.IndexFunc(deps, func(d string) bool { return strings.HasPrefix(d, bad.prefix) }); i >= 0 {
				out = append(out, from+" depends on "+deps[i]+": policies stay pure (no "+bad.prefix+")")
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestImportArrows: every package of the module sits in a layer, and every
// import points down the layer order (layers), so a reader finds each room
// where the order says and no change quietly turns an arrow round.
func TestImportArrows(t *testing.T) {
	module, pkgs := modulePackages(t)
	for _, v := range violations(module, pkgs) {
		t.Error(v)
	}
}

// TestImportArrowsCatch: the rules fail on each kind of wrong arrow, so a
// passing TestImportArrows means something.
func TestImportArrowsCatch(t *testing.T) {
	const m = "example.com/house"
	pkg := func(rel string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: m + "/" + rel}
		for _, imp := range imports {
			if !strings.Contains(imp, ".") {
				imp = m + "/" + imp
			}
			p.Imports = append(p.Imports, imp)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pkg  listedPackage
	}{
		{"api imports a policy", pkg("api/config/v1alpha1", "policies/proxy")},
		{"api imports api", pkg("api/config/v1alpha1", "api/harness/v1")},
		{"a policy imports webhooks", pkg("policies/harness", "webhooks")},
		{"a policy imports controller-runtime", listedPackage{ImportPath: m + "/policies/harness", Deps: []string{"sigs.k8s.io/controller-runtime/pkg/client"}}},
		{"a policy's test imports a logger", listedPackage{ImportPath: m + "/policies/scope", TestImports: []string{"github.com/go-logr/logr"}}},
		{"a policy imports zap", pkg("policies/scope", "go.uber.org/zap")},
		{"clusterstate imports webhooks", pkg("webhooks/clusterstate", "webhooks")},
		{"webhooks imports controllers", pkg("webhooks", "webhooks/controllers")},
		{"webhooks' test imports cmd", listedPackage{ImportPath: m + "/webhooks", XTestImports: []string{m + "/cmd/gatehouse/app"}}},
		{"a subpackage in no layer", pkg("webhooks/newroom")},
	} {
		if v := violations(m, []listedPackage{tc.pkg}); len(v) == 0 {
			t.Errorf("%s: no violation reported", tc.name)
		}
	}
	for _, ok := range []listedPackage{
		pkg("policies/proxy", "policies/harness", "policies/internal/fields", "k8s.io/apimachinery/pkg/util/validation/field"),
		{ImportPath: m + "/policies/scope", Deps: []string{"k8s.io/klog/v2", "github.com/go-logr/logr"}},
		pkg("webhooks", "webhooks/apidefaults", "webhooks/clusterstate", "policies/scope", "api/config/v1alpha1", "sigs.k8s.io/controller-runtime/pkg/webhook"),
		pkg("webhooks/controllers", "webhooks", "policies/dependencygroup"),
		pkg("cmd/gatehouse/app", "webhooks/controllers", "certs"),
	} {
		if v := violations(m, []listedPackage{ok}); len(v) > 0 {
			t.Errorf("%s: %v, want none", ok.ImportPath, v)
		}
	}
}
