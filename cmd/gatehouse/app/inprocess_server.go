//go:build gatehouse_server

package app

import (
	"context"
	"errors"

	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The server image's build (-tags gatehouse_server) leaves out the API
// server's admission-policy plugin that only `check --layout in-process`
// runs: it is a quarter of the binary (grpc, OpenTelemetry) that the server
// never executes and image scanners would flag.

type inProcessPolicies struct{}

var errNoInProcess = errors.New("--layout in-process: this gatehouse is the server build, without the API server's " +
	"admission-policy code; run check --layout in-process with a full build (make build, or go install)")

func newInProcessPolicies(route.Options, func(string) bool, route.NamespaceReader) (*inProcessPolicies, error) {
	return nil, errNoInProcess
}

func (p *inProcessPolicies) close() {}

func (p *inProcessPolicies) review(context.Context, ctrladmission.Request, map[string]any, []webhooks.Decision) ([]webhooks.Decision, error) {
	return nil, errNoInProcess
}
