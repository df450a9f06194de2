package app

import (
	"os"
	"testing"
)

// TestDeployedWebhookConfigurationsMatchTheRegistry keeps deploy/ equal to
// what the registry renders: a webhook added, removed or re-routed in the
// registry fails here until `make manifests` regenerates deploy/.
func TestDeployedWebhookConfigurationsMatchTheRegistry(t *testing.T) {
	code, stdout, stderr := run(t, "", "manifests")
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
