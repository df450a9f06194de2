package exception

import (
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// baseClusterException is a valid ClusterException at now: one code of
// secret-scope for one StatefulSet of team-a, for a day.
func baseClusterException() map[string]any {
	return map[string]any{
		"apiVersion": "gatehouse.dev/v1alpha1", "kind": "ClusterException",
		"metadata": map[string]any{"name": "hdfs-scope-migration"},
		"spec": map[string]any{
			"match": []any{map[string]any{
				"namespaces": []any{"team-a"},
				"kinds":      []any{map[string]any{"group": "apps", "kind": "StatefulSet"}},
				"names":      []any{"hdfs"},
			}},
			"webhooks": []any{"secret-scope"},
			"codes":    []any{string(codeDelimiter)},
			"reason":   "migrating to per-service scopes, PLAT-1234",
			"expires":  now.Add(24 * time.Hour).Format(time.RFC3339),
		},
	}
}

// baseException is the same as an Exception of team-a.
func baseException() map[string]any {
	obj := baseClusterException()
	obj["kind"] = "Exception"
	obj["metadata"] = map[string]any{"name": "hdfs-scope-migration", "namespace": "team-a"}
	delete(firstMatch(obj), "namespaces")
	return obj
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func firstMatch(obj map[string]any) map[string]any {
	return spec(obj)["match"].([]any)[0].(map[string]any)
}

func setSpec(key string, value any) func(map[string]any) {
	return func(obj map[string]any) { spec(obj)[key] = value }
}

func goldenFixtures() []golden.Fixture {
	fx := func(name string, expect golden.Outcome, base func() map[string]any, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(base, tweak)}
	}
	pass, fail := golden.Pass, golden.Fail
	return []golden.Fixture{
		fx("cluster-exception-one-statefulset", pass, baseClusterException, nil),
		fx("exception-own-namespace", pass, baseException, nil),
		fx("cluster-exception-by-label", pass, baseClusterException, func(obj map[string]any) {
			spec(obj)["match"] = []any{map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "hdfs"}}}}
		}),
		fx("cluster-exception-break-glass-named", pass, baseClusterException, func(obj map[string]any) {
			spec(obj)["webhooks"], spec(obj)["codes"] = []any{"*"}, []any{"*"}
		}),
		fx("reason-blank", fail, baseClusterException, setSpec("reason", "  ")),
		fx("expired", fail, baseClusterException, setSpec("expires", now.Add(-time.Minute).Format(time.RFC3339))),
		fx("expiry-too-far", fail, baseClusterException, setSpec("expires", now.Add(31*24*time.Hour).Format(time.RFC3339))),
		fx("exception-other-namespace", fail, baseException, func(obj map[string]any) {
			firstMatch(obj)["namespaces"] = []any{"team-b"}
		}),
		fx("cluster-exception-selects-everything", fail, baseClusterException, func(obj map[string]any) {
			spec(obj)["match"] = []any{map[string]any{}}
		}),
		fx("break-glass-unnamed", fail, baseClusterException, func(obj map[string]any) {
			spec(obj)["webhooks"], spec(obj)["codes"] = []any{"*"}, []any{"*"}
			delete(firstMatch(obj), "names")
		}),
		fx("unknown-webhook", fail, baseClusterException, setSpec("webhooks", []any{"secret-scope", "no-such"})),
		fx("unknown-code", fail, baseClusterException, setSpec("codes", []any{"NoSuchCode"})),
		fx("state-unavailable", fail, baseClusterException, setSpec("codes", []any{string(policies.StateUnavailable)})),
		fx("wildcard-not-alone", fail, baseClusterException, setSpec("codes", []any{"*", string(codeOther)})),
	}
}

// TestGolden: the fixtures under testdata/ are what Validate says at now
// with the test rules (GATEHOUSE_UPDATE_GOLDEN=1 rewrites them).
func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", goldenFixtures(), func(obj map[string]any) []policies.Finding {
		e, err := FromObject(obj)
		if err != nil {
			t.Fatalf("fixture does not decode: %v", err)
		}
		return Validate(e, now, rules())
	})
}
