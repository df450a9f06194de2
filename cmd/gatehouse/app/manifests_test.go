package app

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestDeployedWebhookConfigurationsMatchTheRegistry keeps deploy/ equal to
// what the registry renders for the configuration deploy/default runs
// with: a webhook added, removed or re-routed in the registry, or a
// configuration that selects otherwise (harness.manageSelections),
// fails here until `make manifests` regenerates deploy/.
func TestDeployedWebhookConfigurationsMatchTheRegistry(t *testing.T) {
	raw, err := os.ReadFile("../../../deploy/default/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "manifests", "--config", config)
	if code != exitOK {
		t.Fatalf("manifests: exit %d: %s", code, stderr)
	}
	onDisk, err := os.ReadFile("../../../deploy/webhooks/webhookconfigurations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != stdout {
		t.Fatalf("deploy/webhooks/webhookconfigurations.yaml is stale; run `make manifests`\n--- rendered\n%s", stdout)
	}
}
