package celtext

import "testing"

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		args   []string
		want   string
	}{
		{"plain", nil, `"plain"`},
		{"", nil, `""`},
		{"pods controlled by %s %q run as %q; set it", []string{"r.kind", "r.name", "x"},
			`"pods controlled by " + r.kind + " \"" + r.name + "\" run as \"" + x + "\"; set it"`},
		{"entry %d of %s", []string{"j", "k"}, `"entry " + string(j) + " of " + k`},
		{"100%% and %v", []string{"a"}, `"100% and %v"`},
	} {
		if got := Format(tc.format, tc.args...); got != tc.want {
			t.Errorf("Format(%q, %v) = %s, want %s", tc.format, tc.args, got, tc.want)
		}
	}
}
