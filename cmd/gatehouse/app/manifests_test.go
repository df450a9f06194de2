package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/webhooks"
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

// TestChartSchemaNamesTheRegistry: the Helm chart's values.schema.json
// takes a mode for exactly the registry's webhooks, and no Warn for a
// mutating one (it patches or it is off), so a webhook added to the
// registry cannot be missing from the chart's values.
func TestChartSchemaNamesTheRegistry(t *testing.T) {
	raw, err := os.ReadFile("../../../charts/gatehouse/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Webhooks struct {
				Properties map[string]struct {
					Properties struct {
						Mode struct {
							Enum []string `json:"enum"`
						} `json:"mode"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"webhooks"`
		} `json:"properties"`
	}
	if err := yaml.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	inSchema := schema.Properties.Webhooks.Properties
	for _, d := range webhooks.Registry {
		modes, ok := inSchema[d.Name]
		if !ok {
			t.Errorf("values.schema.json: webhooks.%s is missing", d.Name)
			continue
		}
		want := []string{ModeEnforce, ModeWarn, ModeAudit}
		if d.Type == webhooks.Mutating {
			want = []string{ModeEnforce, ModeAudit}
		}
		if !slices.Equal(modes.Properties.Mode.Enum, want) {
			t.Errorf("values.schema.json: webhooks.%s.mode takes %v, want %v", d.Name, modes.Properties.Mode.Enum, want)
		}
		delete(inSchema, d.Name)
	}
	for name := range inSchema {
		t.Errorf("values.schema.json: webhooks.%s is not in the registry", name)
	}
}
