package adapters

import "github.com/gatehouse-dev/gatehouse/webhooks/route"

// newEvaluator builds the evaluator of the webhook named name from the
// server options; nil for a name the registry does not hold
// (TestEveryWebhookHasAnEvaluator).
func New(name string, opts route.Options) Evaluator {
	switch name {
	case "pod-security-defaults":
		return newPodSecurityDefaults(opts)
	case "harness-proxy":
		return newHarnessProxy(opts)
	case "harness-labels":
		return newHarnessLabels(opts)
	case "secret-scope":
		return newSecretScope(opts)
	case "service-account":
		return newServiceAccount(opts)
	case "component-overrides":
		return newComponentOverrides(opts)
	case "harness":
		return newHarness(opts)
	case "dependency-group":
		return newDependencyGroup(opts)
	case "crd-source":
		return newCRDSource(opts)
	case route.LabelsGuardWebhook:
		return newHarnessLabelsGuard(opts)
	case "pod-security":
		return newPodSecurity(opts)
	case route.ExceptionWebhook:
		return newException(opts)
	}
	return nil
}
