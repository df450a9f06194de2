package policies_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCodeIsInTheContractsDoc: every finding code a policy declares
// (a constant of type policies.Code) is named in docs/contracts.md, so the
// project's own contract reference lists every code a user can meet.
func TestEveryCodeIsInTheContractsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				sel, ok := vs.Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Code" {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						code, _ := strconv.Unquote(lit.Value)
						codes[code] = path
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) < 50 {
		t.Fatalf("found only %d codes; the walk no longer sees the policies' declarations", len(codes))
	}
	for code, path := range codes {
		if !strings.Contains(string(doc), "`"+code+"`") {
			t.Errorf("docs/contracts.md does not name %s (declared in policies/%s)", code, path)
		}
	}
}
