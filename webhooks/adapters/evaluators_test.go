package adapters

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestEveryWebhookHasAnEvaluator: the registry and the evaluators name the
// same webhooks, so a row added to one and not the other fails here, not in
// a review.
func TestEveryWebhookHasAnEvaluator(t *testing.T) {
	for _, def := range route.Registry() {
		if New(def.Name, route.Options{}) == nil {
			t.Errorf("webhook %s has no evaluator", def.Name)
		}
	}
	if New("no-such-webhook", route.Options{}) != nil {
		t.Error("an unknown name has an evaluator")
	}
}
