package route

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies/celtext"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
)

// Content narrowing (docs/contracts.md §10): a webhook whose evaluator can
// act only on requests of a certain content declares it as a CEL predicate
// (Intercept.Acts), which the webhook configurations carry as the
// matchCondition "gatehouse-acts". The predicate must be true for every
// request the evaluator could deny, warn about or patch; where it is false
// the evaluator gives a plain allow, so the API server need not call.
// TestNarrowingIsSound proves that over the fixtures and objects generated
// from them. The expressions use only standard CEL, as the API server
// evaluates matchConditions; an expression that errors on a malformed
// object sends it to a Fail webhook (its only user) and the review decides.

// scopeActs is SCOPE's predicate (policies/scope ActsCEL).
func scopeActs(Options) string { return scope.ActsCEL() }

// serviceAccountActs is SA's predicate (policies/serviceaccount ActsCEL).
func serviceAccountActs(opts Options) string { return serviceaccount.ActsCEL(opts.Products) }

// labelActs is LABEL's predicate (policies/scopelabel ActsCEL), with the
// routing's test of a namespaced request.
func labelActs(opts Options) string {
	return scopelabel.ActsCEL(namespacedRequestExpression, opts.ManagedSelections)
}

// ResourceIs tests the request's resource (any subresource).
func ResourceIs(r Resource) string { return celtext.ResourceIs(r.GVR) }

// HasPath is has() for every step of a path below object.
func HasPath(path []string) string { return celtext.HasPath(path) }

// actsPrograms caches the compiled predicates by expression.
var actsPrograms sync.Map

// ActsOn evaluates in process what the API server evaluates for the
// matchCondition "gatehouse-acts": whether a request reaches the webhook.
// `gatehouse check` routes with it, so that it lists exactly the webhooks
// the API server would call. The server does not need it: the API server
// has already evaluated it, and a member of a combined endpoint whose
// predicate is false decides a plain allow.
func ActsOn(in Intercept, opts Options, req *admission.Request, object, oldObject map[string]any) (bool, error) {
	if in.Acts == nil {
		return true, nil
	}
	return EvalCachedCondition(in.Acts(opts), req, object, oldObject)
}

// EvalCachedCondition evaluates a matchCondition expression on a request,
// compiling it once per expression.
func EvalCachedCondition(expr string, req *admission.Request, object, oldObject map[string]any) (bool, error) {
	prg, ok := actsPrograms.Load(expr)
	if !ok {
		compiled, err := CompileMatchCondition(expr)
		if err != nil {
			return false, err
		}
		prg, _ = actsPrograms.LoadOrStore(expr, compiled)
	}
	return EvalMatchCondition(prg.(cel.Program), CelRequest(req), object, oldObject)
}

// CompileMatchCondition compiles a matchConditions expression with the
// variables the API server declares for it, and the one library of the API
// server's environment gatehouse's conditions use: its strings extension
// (lowerAscii, in the in-process layout's ServiceAccount names).
func CompileMatchCondition(expr string) (cel.Program, error) {
	env, err := cel.NewEnv(cel.Variable("request", cel.DynType), cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType),
		ext.Strings(ext.StringsVersion(2)))
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	return env.Program(ast)
}

// EvalMatchCondition evaluates a compiled matchCondition; an error is the
// API server's error too (it then calls a Fail webhook).
func EvalMatchCondition(prg cel.Program, request, object, oldObject map[string]any) (bool, error) {
	vars := map[string]any{"request": request, "object": nil, "oldObject": nil}
	if object != nil {
		vars["object"] = object
	}
	if oldObject != nil {
		vars["oldObject"] = oldObject
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("matchCondition is not boolean: %v", out)
	}
	return b, nil
}

// CelRequest is the request as a matchCondition sees it: fields that are
// empty (omitempty in AdmissionRequest) are absent, not "".
func CelRequest(req *admission.Request) map[string]any {
	request := map[string]any{
		"operation": string(req.Operation),
		"resource":  map[string]any{"group": req.Resource.Group, "version": req.Resource.Version, "resource": req.Resource.Resource},
		"userInfo":  map[string]any{"username": req.UserInfo.Username},
	}
	if len(req.UserInfo.Groups) > 0 {
		groups := make([]any, len(req.UserInfo.Groups))
		for i, g := range req.UserInfo.Groups {
			groups[i] = g
		}
		request["userInfo"].(map[string]any)["groups"] = groups
	}
	for key, v := range map[string]string{"subResource": req.SubResource, "namespace": req.Namespace, "name": req.Name} {
		if v != "" {
			request[key] = v
		}
	}
	return request
}
