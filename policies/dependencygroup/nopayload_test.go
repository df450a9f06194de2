package dependencygroup

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestNoPayloadInFindings plants a marker in every value the policies read
// that is not a valid name (invalid CRD names, group names, manages strings,
// harnessRef kinds) and in fields they do not read, in objects that draw
// every kind of denial, and proves that no finding's message or field path
// carries it (docs/contracts.md §0.3). Valid names may appear in messages, so
// they carry no marker.
func TestNoPayloadInFindings(t *testing.T) {
	const marker = "MARKERdg91c2"
	bad := "Bad_" + marker
	annotate := func(obj map[string]any) map[string]any {
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{"note": marker}
		obj["metadata"].(map[string]any)["labels"] = map[string]any{"x": marker}
		return obj
	}
	groups := []map[string]any{
		group("x", "", bad, bad+".example.com", "ok.example.com", "ok.example.com", "kafkas.kafka.strimzi.io", map[string]any{"x": marker}),
		func() map[string]any {
			obj := baseGroup()
			spec(obj)["harnessRef"] = map[string]any{"kind": marker, "name": ""}
			spec(obj)["description"] = marker
			return obj
		}(),
		group("x", "", bad),
	}
	sources := []map[string]any{
		source("x", map[string]any{"provides": bad, "manages": bad, "requires": requiresList(bad, strings.ToLower(marker)+strings.Repeat("a", 60))}),
		source("x", map[string]any{"manages": "mariadb as " + bad, "requires": requiresList("redis")}),
		source("x", map[string]any{"manages": marker + " as x as y", "provides": "mariadb"}),
		source("x", map[string]any{"manages": " " + marker}),
		source("x", map[string]any{"manages": strings.ToLower(marker) + strings.Repeat("a", 60)}),
		source("x", map[string]any{"other": marker}),
		upstreamSource("team-b", "x", map[string]any{
			"provides": refList(map[string]any{"name": bad, "as": marker}, map[string]any{"name": "mariadb", "as": marker}),
			"manages":  refList(map[string]any{"name": "mariadb", "as": bad}, map[string]any{"name": bad, "as": "a"}),
			"requires": refList(map[string]any{"name": "redis", "as": bad}, map[string]any{"name": bad}),
			"crdNames": map[string]any{"kind": marker},
		}),
		upstreamSource("team-b", "x", map[string]any{
			"manages": refList(map[string]any{"name": "mariadb", "as": strings.ToLower(marker) + strings.Repeat("a", 60)}),
		}),
	}
	check := func(what string, i int, findings []policies.Finding) {
		if !policies.Denied(findings) {
			t.Errorf("%s %d: drew no denial", what, i)
		}
		for _, f := range findings {
			if strings.Contains(strings.ToLower(f.Message+f.Field), strings.ToLower(marker)) {
				t.Errorf("%s %d: finding leaks a value: %s %s: %s", what, i, f.Code, f.Field, f.Message)
			}
		}
	}
	for i, obj := range groups {
		check("group", i, ValidateGroup(annotate(obj), seededState()))
		check("group", i, ValidateGroup(obj, failingState{}))
	}
	for i, obj := range sources {
		check("source", i, ValidateSource(annotate(obj), seededState()))
		check("source", i, ValidateSource(obj, failingState{}))
	}
}
