package adapters

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Evaluator decides one decoded review; an error is an internal failure and
// denies.
type Evaluator interface {
	Evaluate(ctx context.Context, review *Review) (Result, error)
}

// EvaluatorFunc adapts a function to Evaluator.
type EvaluatorFunc func(ctx context.Context, review *Review) (Result, error)

// Evaluate calls f.
func (f EvaluatorFunc) Evaluate(ctx context.Context, review *Review) (Result, error) {
	return f(ctx, review)
}

// Result is what an evaluator decided.
type Result struct {
	Findings []policies.Finding
	// Mutated reports that a mutating evaluator changed review.Object, in
	// place or (CopiedOnWrite) by replacing it with a changed copy. The
	// chain turns the change into a JSON patch against the object as sent,
	// so fields the evaluator does not know survive.
	Mutated bool
	// CopiedOnWrite reports that the evaluator changed no object or list it
	// was given: it set review.Object to a new object that shares every
	// part it did not change (podsecurity.Defaulted). While every mutating
	// member copies on write, the chain keeps the object as sent as it was
	// decoded, and its patch visits only the parts that are not shared.
	CopiedOnWrite bool
}

// Review is an admission request decoded once for the evaluators.
type Review struct {
	Operation admissionregistrationv1.OperationType
	Kind      schema.GroupVersionKind
	Resource  schema.GroupVersionResource
	// Subresource is set for subresource requests (pods/ephemeralcontainers,
	// pods/status).
	Subresource string
	Namespace   string
	Name        string
	// Username is who makes the request (request.userInfo.username).
	Username string
	// Object is the object being admitted, decoded from JSON. Mutating
	// evaluators change it in place, or replace it with a changed copy
	// (Result.CopiedOnWrite); the members after them see the change.
	Object map[string]any
	// OldObject is the stored object on UPDATE, nil otherwise.
	OldObject map[string]any
}
