package dependencygroup

import (
	"errors"
	"strings"
	"testing"
)

func TestParseManages(t *testing.T) {
	tests := []struct {
		in           string
		group, alias string
		err          error
	}{
		{in: "mariadb", group: "mariadb"},
		{in: "mariadb as mariadb-test", group: "mariadb", alias: "mariadb-test"},
		{in: "k8s.mariadb as test", group: "k8s.mariadb", alias: "test"},
		{in: "as", group: "as"},
		{in: "as as as", group: "as", alias: "as"},
		{in: "", err: ErrManagesEmpty},
		{in: " mariadb", err: ErrManagesWhiteSpace},
		{in: "mariadb ", err: ErrManagesWhiteSpace},
		{in: "mariadb\t", err: ErrManagesWhiteSpace},
		{in: "a as b as c", err: ErrManagesForm},
		{in: "a as", err: ErrManagesForm},
		{in: "a  as b", err: ErrManagesForm},
		{in: "a AS b", err: ErrManagesForm},
		{in: "a b", err: ErrManagesForm},
		{in: "a b c", err: ErrManagesForm},
		{in: "Mariadb", err: ErrManagesGroup},
		{in: "a_b", err: ErrManagesGroup},
		{in: "a as b.c", err: ErrManagesAlias},
		{in: "a as B", err: ErrManagesAlias},
		{in: "a as " + strings.Repeat("b", 64), err: ErrManagesAlias},
	}
	for _, tt := range tests {
		group, alias, err := ParseManages(tt.in)
		if !errors.Is(err, tt.err) || group != tt.group || alias != tt.alias {
			t.Errorf("ParseManages(%q) = %q, %q, %v; want %q, %q, %v", tt.in, group, alias, err, tt.group, tt.alias, tt.err)
		}
	}
}

func TestScopeLabel(t *testing.T) {
	if key, ok := ScopeLabel("mariadb"); !ok || key != "requires.helmetica.io/mariadb" {
		t.Errorf("ScopeLabel(mariadb) = %q, %v", key, ok)
	}
	if _, ok := ScopeLabel(strings.Repeat("a", 63)); !ok {
		t.Error("63 characters is a valid label name")
	}
	if _, ok := ScopeLabel(strings.Repeat("a", 64)); ok {
		t.Error("64 characters is not a valid label name")
	}
}
