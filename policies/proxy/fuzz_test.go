package proxy

import (
	"path/filepath"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// FuzzInject feeds arbitrary YAML or JSON, decoded as the webhook decodes an
// object, to Inject: for panics, for idempotency, and for the property that a
// denial changes nothing. It also runs Harnessed on the input as a harness.
func FuzzInject(f *testing.F) {
	golden.AddFixtureSeeds(f, filepath.Join("testdata", "*", "*.yaml"))
	f.Add([]byte(`{"spec":{"volumes":[1,{"name":"proxy-api-access"}],"containers":[1,{"env":"x","volumeMounts":[null]}]}}`))
	f.Add([]byte(`{"spec":{"initContainers":[{"env":[{"name":"KUBERNETES_SERVICE_PORT"},{"name":"KUBERNETES_SERVICE_PORT"}],"volumeMounts":[{"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount/"}]}]}}`))
	f.Add([]byte(`{"spec":{"operator":{"namespace":"a","injectProxyConfiguration":true,"serviceAccounts":["b",2]}}}`))

	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) {
		Harnessed([]map[string]any{obj}, "a", "b")
		before := clone(obj)
		changed, findings := Inject(obj, BuiltinConfig())
		if len(findings) > 0 && (changed || !jsonEqual(obj, before)) {
			t.Fatalf("a denied pod was changed:\n%s", toYAML(obj))
		}
		once := clone(obj)
		changed, _ = Inject(obj, BuiltinConfig())
		if changed || !jsonEqual(obj, once) {
			t.Fatalf("Inject is not idempotent:\n%s\n---\n%s", toYAML(once), toYAML(obj))
		}
	})
}
