package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// sharedVars are the exported package-level variables the house keeps, each
// with its reason; every other exported variable is mutable state any
// importer could change under serve, check and the manifests alike, so
// tables are unexported behind a function that returns a copy
// (route.Registry, workload.Kinds, ...).
var sharedVars = map[string]string{
	"api/exceptions/v1alpha1.SchemeGroupVersion": "the scheme registration every Kubernetes API package publishes",
	"api/exceptions/v1alpha1.SchemeBuilder":      "the scheme registration every Kubernetes API package publishes",
	"api/exceptions/v1alpha1.AddToScheme":        "the scheme registration every Kubernetes API package publishes",
	"api/harness/v1.SchemeGroupVersion":          "the scheme registration every Kubernetes API package publishes",
	"api/harness/v1.SchemeBuilder":               "the scheme registration every Kubernetes API package publishes",
	"api/harness/v1.AddToScheme":                 "the scheme registration every Kubernetes API package publishes",
	"api/helmetica/v1.SchemeGroupVersion":        "the scheme registration every Kubernetes API package publishes",
	"api/helmetica/v1.SchemeBuilder":             "the scheme registration every Kubernetes API package publishes",
	"api/helmetica/v1.AddToScheme":               "the scheme registration every Kubernetes API package publishes",
	"cmd/gatehouse/app.Version":                  "set by the linker (-ldflags -X), which needs a variable",
	"cmd/gatehouse/app.Commit":                   "set by the linker (-ldflags -X), which needs a variable",
	"policies/dependencygroup.GroupGVK":          "a comparable GroupVersionKind value, as API packages publish them",
	"policies/dependencygroup.SourceGVK":         "a comparable GroupVersionKind value, as API packages publish them",
	"policies/exception.GVK":                     "a comparable GroupVersionKind value, as API packages publish them",
	"policies/exception.ClusterGVK":              "a comparable GroupVersionKind value, as API packages publish them",
	"policies/harness.GVK":                       "a comparable GroupVersionKind value, as API packages publish them",
	"policies/harness.HelmeticaGVK":              "a comparable GroupVersionKind value, as API packages publish them",
	"policies/harness.ClusterRoleGVK":            "a comparable GroupVersionKind value, as API packages publish them",
	"policies/harness.RoleGVK":                   "a comparable GroupVersionKind value, as API packages publish them",
}

// TestNoExportedMutableState: no package of the product module exports a
// variable but sharedVars and sentinel errors (errors.New), so a table the
// registry, the routing or a policy reads cannot be changed by an importer.
func TestNoExportedMutableState(t *testing.T) {
	module, pkgs := modulePackages(t)
	seen := 0
	for _, p := range pkgs {
		rel := p.rel(module)
		for _, file := range p.sourceFiles(t) {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					spec := s.(*ast.ValueSpec)
					for i, n := range spec.Names {
						if !n.IsExported() {
							continue
						}
						seen++
						if _, ok := sharedVars[rel+"."+n.Name]; ok || sentinelError(spec, i) {
							continue
						}
						t.Errorf("%s exports the variable %s: keep the table unexported behind a function that returns a copy (or add it to sharedVars with a reason)",
							filepath.Join(rel, filepath.Base(file)), n.Name)
					}
				}
			}
		}
	}
	if seen < len(sharedVars) {
		t.Errorf("found %d exported variables, fewer than the %d sharedVars names: the walk misses packages", seen, len(sharedVars))
	}
}

// sentinelError reports whether the i-th name of spec is initialised with
// errors.New.
func sentinelError(spec *ast.ValueSpec, i int) bool {
	if i >= len(spec.Values) {
		return false
	}
	call, ok := spec.Values[i].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "errors" && sel.Sel.Name == "New"
}
