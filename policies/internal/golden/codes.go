package golden

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// DeclaredCode is a finding code as a policy's source declares it.
type DeclaredCode struct {
	Name  string // the constant
	Value string // the code
	File  string // the file, relative to the directory searched
}

// DeclaredCodes parses the Go files below dir, tests left out, and returns
// every constant declared with the type policies.Code (Code in package
// policies itself) and a string literal value, or as a conversion of one to
// that type, in the order of the files and their declarations. Tests read the
// codes from the source, not from a list of them kept by hand, so that a code
// added without its test entry or its documentation is found.
func DeclaredCodes(tb testing.TB, dir string) []DeclaredCode {
	tb.Helper()
	var out []DeclaredCode
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
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
				typed := isCodeType(vs.Type, file.Name.Name)
				for i, v := range vs.Values {
					if i >= len(vs.Names) {
						break
					}
					// policies.Code("X") is a Code as much as a
					// constant declared with the type.
					if call, ok := v.(*ast.CallExpr); ok && vs.Type == nil && len(call.Args) == 1 && isCodeType(call.Fun, file.Name.Name) {
						v = call.Args[0]
					} else if !typed {
						continue
					}
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						value, err := strconv.Unquote(lit.Value)
						if err != nil {
							return err
						}
						out = append(out, DeclaredCode{Name: vs.Names[i].Name, Value: value, File: rel})
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// isCodeType reports whether expr names the type policies.Code as the file of
// package pkg spells it.
func isCodeType(expr ast.Expr, pkg string) bool {
	switch t := expr.(type) {
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		return ok && x.Name == "policies" && t.Sel.Name == "Code"
	case *ast.Ident:
		return pkg == "policies" && t.Name == "Code"
	}
	return false
}
