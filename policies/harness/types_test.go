package harness

import (
	"os"
	"path/filepath"
	"testing"

	harnessv1 "github.com/gatehouse-dev/gatehouse/api/harness/v1"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// TestPassFixturesDecodeStrictly decodes every pass fixture into
// harnessv1.OperatorHarness with strict decoding: duplicate keys (YAML),
// unknown or case-mismatched fields and wrong types (JSON) fail. It proves
// that the objects this policy allows have the shape of the CRD gatehouse
// ships (spec.clusterRoles an object holding rules, acknowledgedGrants
// entries {name, apiGroups, resources, verbs, reason}). Fail fixtures may be
// deliberately malformed (cluster-roles-list, cluster-roles-malformed) and
// are not decoded.
func TestPassFixturesDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "pass", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no pass fixtures")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if errs := decodeStrict(data); len(errs) > 0 {
				t.Errorf("does not decode into OperatorHarness: %v", errs)
			}
		})
	}
}

// TestStrictDecodingRejectsTheOldShape guards the test above: the shape this
// policy was first written for must not decode.
func TestStrictDecodingRejectsTheOldShape(t *testing.T) {
	for name, doc := range map[string]string{
		"clusterRoles as a list of named roles": "spec:\n  clusterRoles:\n  - name: x\n    rules: []\n",
		"acknowledgement by role and rule":      "spec:\n  acknowledgedGrants:\n  - clusterRole: x\n    rule: 2\n    reason: long enough reason\n",
		"injectProxyConfiguration under spec":   "spec:\n  injectProxyConfiguration: true\n",
		"duplicate key":                         "spec:\n  mode: Report\n  mode: Enforce\n",
	} {
		if errs := decodeStrict([]byte(doc)); len(errs) == 0 {
			t.Errorf("%s: decoded strictly", name)
		}
	}
}

func decodeStrict(data []byte) []error {
	return golden.DecodeStrict(data, &harnessv1.OperatorHarness{})
}
