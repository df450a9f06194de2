package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// minMessage is the length from which a string literal of a contract's
// package counts as one of its messages (shorter ones are words and
// fragments every package uses).
const minMessage = 40

// TestContractsKeepTheirWords: a contract's finding codes and messages are
// written in its folder only (policies/<contract>/). Elsewhere in the
// product module no string literal holds one of its code values as a word
// (use the constant) or shares a message of minMessage characters or more with it
// (render it from the contract's table, as policies/scope/cel.go renders the
// grammar's messages for the in-process policy), so a change to a contract
// is made once.
func TestContractsKeepTheirWords(t *testing.T) {
	module, pkgs := modulePackages(t)
	type words struct{ codes, messages []string }
	contracts := map[string]*words{}
	files := map[string][]string{} // string literals by file, relative to root
	for _, p := range pkgs {
		rel := p.rel(module)
		parts := strings.Split(rel, "/")
		contract := ""
		if len(parts) == 2 && parts[0] == "policies" && parts[1] != "internal" {
			contract = parts[1]
			contracts[contract] = &words{}
		}
		for _, path := range p.sourceFiles(t) {
			codes, literals := stringsOf(t, path)
			file := filepath.Join(rel, filepath.Base(path))
			files[file] = literals
			if contract == "" {
				continue
			}
			contracts[contract].codes = append(contracts[contract].codes, codes...)
			for _, s := range literals {
				if len(s) >= minMessage && strings.Contains(s, " ") && !isCEL(s) {
					contracts[contract].messages = append(contracts[contract].messages, s)
				}
			}
		}
	}
	if len(contracts) < 6 || len(contracts["scope"].codes) < 10 || len(contracts["scope"].messages) < 5 {
		t.Fatalf("found %d contracts (scope: %d codes, %d messages): the walk no longer sees them", len(contracts), len(contracts["scope"].codes), len(contracts["scope"].messages))
	}
	for file, literals := range files {
		for name, w := range contracts {
			if strings.HasPrefix(file, filepath.Join("policies", name)+string(filepath.Separator)) {
				continue
			}
			for _, s := range literals {
				for _, code := range w.codes {
					if containsWord(s, code) {
						t.Errorf("%s writes %s's code %q in a literal: use the constant", file, name, code)
					}
				}
				if len(s) < minMessage || isCEL(s) {
					continue
				}
				for _, m := range w.messages {
					if strings.Contains(m, s) || strings.Contains(s, m) {
						t.Errorf("%s writes a message of %s (%.60q): render it from policies/%s", file, name, s, name)
						break
					}
				}
			}
		}
	}
}

// isCEL reports whether a literal is a piece of a CEL expression rather
// than a message: the contracts' CEL renderings share the language's
// phrases (request.userInfo, has(), ==) with the webhooks' routing.
func isCEL(s string) bool {
	for _, marker := range []string{"request.", "object.", "has(", " == ", " && ", " || "} {
		if strings.Contains(s, marker) {
			return true
		}
	}
	return false
}

// containsWord reports whether s holds word with no letter or digit
// directly before or after it.
func containsWord(s, word string) bool {
	for i := strings.Index(s, word); i >= 0; {
		end := i + len(word)
		if (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		next := strings.Index(s[i+1:], word)
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// stringsOf returns the values of the policies.Code constants declared in
// path and every string literal in it.
func stringsOf(t *testing.T, path string) (codes, literals []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ValueSpec:
			if sel, ok := x.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" {
				for _, v := range x.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							codes = append(codes, s)
						}
					}
				}
			}
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil {
					literals = append(literals, s)
				}
			}
		}
		return true
	})
	return codes, literals
}
