package dependencygroup

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func setCRDs(names ...any) func(map[string]any) {
	return func(obj map[string]any) { spec(obj)["crds"] = crdList(names...) }
}

func sourceWith(name string, s map[string]any) func() map[string]any {
	return func() map[string]any { return source(name, s) }
}

func fixtures() []golden.Fixture {
	fx := func(name string, expect golden.Outcome, base func() map[string]any, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(base, tweak)}
	}
	pass, fail := golden.Pass, golden.Fail
	long := strings.Repeat("a", 64)
	return []golden.Fixture{
		fx("group-seed-mariadb", pass, baseGroup, nil),
		fx("group-new-crds", pass, func() map[string]any { return group("redis", "", "redis.redis.example.io") }, nil),
		fx("group-no-harnessref", pass, baseGroup, func(obj map[string]any) { delete(spec(obj), "harnessRef") }),
		fx("group-empty", fail, baseGroup, setCRDs()),
		fx("group-crd-name-invalid", fail, baseGroup, setCRDs("Backups.k8s.mariadb.com", "nodot")),
		fx("group-crd-duplicate", fail, baseGroup, setCRDs("backups.k8s.mariadb.com", "backups.k8s.mariadb.com")),
		fx("group-crd-claimed", fail, func() map[string]any {
			return group("kafka", "", "kafkas.kafka.strimzi.io", "kafkaconnects.kafka.example.io")
		}, nil),
		fx("group-harnessref-kind", fail, baseGroup, func(obj map[string]any) {
			spec(obj)["harnessRef"] = map[string]any{"kind": "Deployment", "name": "mariadb-operator"}
		}),

		fx("source-seed-provides", pass, sourceWith("mariadb-crds", map[string]any{"provides": "mariadb"}), nil),
		fx("source-seed-manages", pass, sourceWith("mariadb-operator", map[string]any{"manages": "mariadb"}), nil),
		fx("source-seed-manages-alias", pass, sourceWith("mariadb-operator-test", map[string]any{"manages": "mariadb as mariadb-test"}), nil),
		fx("source-seed-provides-and-manages", pass, sourceWith("strimzi-operator", map[string]any{"provides": "strimzi", "manages": "strimzi"}), nil),
		fx("source-seed-requires", pass, sourceWith("mariadb-cluster", map[string]any{"requires": requiresList("mariadb", "strimzi")}), nil),
		fx("source-requires-missing-group", pass, sourceWith("redis-cluster", map[string]any{"requires": requiresList("redis")}), nil),
		fx("source-empty", fail, sourceWith("nothing", map[string]any{}), nil),
		fx("source-provides-claimed", fail, sourceWith("mariadb-crds-fork", map[string]any{"provides": "mariadb"}), nil),
		fx("source-provides-invalid", fail, sourceWith("x", map[string]any{"provides": "MariaDB"}), nil),
		fx("source-manages-claimed", fail, sourceWith("mariadb-operator-fork", map[string]any{"manages": "mariadb"}), nil),
		fx("source-manages-alias-claimed", fail, sourceWith("x", map[string]any{"manages": "redis as mariadb-test"}), nil),
		fx("source-manages-invalid", fail, sourceWith("x", map[string]any{"manages": "a as b as c"}), nil),
		fx("source-manages-spaces", fail, sourceWith("x", map[string]any{"manages": " mariadb"}), nil),
		fx("source-scope-label-invalid", fail, sourceWith("x", map[string]any{"manages": long}), nil),
		fx("source-requires-invalid", fail, sourceWith("x", map[string]any{"requires": requiresList("Mariadb")}), nil),

		// Deleting objects claim nothing: their successors pass.
		fx("group-successor-of-deleting", pass, func() map[string]any {
			return group("memcached", "", "memcacheds.cache.example.io")
		}, nil),
		fx("source-successor-of-deleting", pass, upstream("team-b", "v9.valkey", map[string]any{
			"provides": refList(map[string]any{"name": "valkey"}),
			"manages":  refList(map[string]any{"name": "valkey"}),
		}), nil),

		// helmetica's own samples, reviewed against a view that contains
		// each of them: admitted, without a warning.
		fx("source-chrysopoeia-podinfo", pass, chrysopoeiaSample("v6.podinfo"), nil),
		fx("source-chrysopoeia-mariadb-crds", pass, chrysopoeiaSample("v26.mariadb-crds"), nil),
		fx("source-chrysopoeia-mariadb-operator", pass, chrysopoeiaSample("v26.mariadb-operator"), nil),
		fx("source-chrysopoeia-mariadb-cluster", pass, chrysopoeiaSample("v26.mariadb-cluster"), nil),
		fx("source-upstream-alias", pass, upstream("team-b", "v26.mariadb-operator-qa", map[string]any{
			"manages":  refList(map[string]any{"name": "mariadb", "as": "mariadb-qa"}),
			"requires": refList(map[string]any{"name": "strimzi", "as": "strimzi-qa"}),
		}), nil),
		// A provider or manager of another namespace clashes: claims are
		// cluster-wide.
		fx("source-upstream-provides-claimed", fail, upstream("team-b", "v26.mariadb-crds", map[string]any{
			"provides": refList(map[string]any{"name": "mariadb"}),
		}), nil),
		fx("source-upstream-manages-claimed", fail, upstream("team-b", "v26.mariadb-operator", map[string]any{
			"manages": refList(map[string]any{"name": "mariadb"}),
		}), nil),
		fx("source-upstream-alias-claimed", fail, upstream("team-b", "v26.mariadb-operator-dev", map[string]any{
			"manages": refList(map[string]any{"name": "mariadb", "as": "mariadb-dev"}),
		}), nil),
		fx("source-upstream-provides-aliased", fail, upstream("team-b", "v1.redis-crds", map[string]any{
			"provides": refList(map[string]any{"name": "redis", "as": "redis-a"}),
		}), nil),
		fx("source-upstream-alias-invalid", fail, upstream("team-b", "v1.redis", map[string]any{
			"manages":  refList(map[string]any{"name": "redis", "as": "Redis_A"}),
			"requires": refList(map[string]any{"name": "Mariadb"}, map[string]any{"name": "strimzi", "as": long}),
		}), nil),
	}
}

func upstream(namespace, name string, rest map[string]any) func() map[string]any {
	return func() map[string]any { return upstreamSource(namespace, name, rest) }
}

func chrysopoeiaSample(name string) func() map[string]any {
	return func() map[string]any {
		for _, obj := range chrysopoeiaSamples() {
			if obj["metadata"].(map[string]any)["name"] == name {
				return obj
			}
		}
		panic("no sample " + name)
	}
}

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", fixtures(), func(obj map[string]any) []policies.Finding {
		return validateByKind(obj, stateFor(obj))
	})
}

// stateFor is the view a fixture is reviewed against: a cluster running
// helmetica for helmetica's namespaced sources, cluster-scoped string-shaped
// ones otherwise.
func stateFor(obj map[string]any) State {
	if ns, _ := fields.String(obj, "metadata", "namespace"); ns != "" {
		return upstreamState()
	}
	return seededState()
}

// validateByKind dispatches a fixture by its kind.
func validateByKind(obj map[string]any, state State) []policies.Finding {
	if kind, _ := fields.String(obj, "kind"); kind == "CustomResourceDefinitionSource" {
		return ValidateSource(obj, state)
	}
	return ValidateGroup(obj, state)
}
