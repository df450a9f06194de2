package webhooks

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Webhook is one enabled registry entry, ready to serve on its own path.
type Webhook struct {
	route.Definition
	member member
	// Admission serves the webhook's review chain over HTTP (transport.go):
	// it caps the body, checks the content type, echoes the UID and
	// recovers panics into a denying 500. It hands the API server's
	// ?timeout= to the chain (withReviewDeadline).
	Admission ReviewHandler
}

// Combined is one group (webhooks/route/combined.go), ready to serve on its path.
type Combined struct {
	route.Group
	// Admission serves the group's review chain over HTTP.
	Admission ReviewHandler
}

// Build returns the enabled webhooks of the registry, in registry order,
// each with its evaluator built once from opts.
func Build(opts route.Options, enabled func(name string) bool) []*Webhook {
	var out []*Webhook
	for _, def := range route.Registry() {
		if !enabled(def.Name) {
			continue
		}
		m := member{Member: route.Member{Def: def, Places: def.Placements(opts)}, eval: adapters.New(def.Name, opts)}
		c := &chain{name: def.Name, failurePolicy: opts.FailurePolicy(def.Name, def.FailurePolicy), members: []member{m}, opts: opts, serves: servesWebhook}
		out = append(out, &Webhook{Definition: def, member: m, Admission: serveChain(c)})
	}
	return out
}

// BuildCombined returns the combined endpoints over the enabled webhooks in
// hooks (from Build): each member keeps its evaluator, log line, metric and
// audit annotation. A group also runs the webhooks its entry holds when it
// was rendered for other modes than the server's (webhooks/route/drift.go).
func BuildCombined(hooks []*Webhook, opts route.Options) []*Combined {
	byName := map[string]*Webhook{}
	for _, w := range hooks {
		byName[w.Name] = w
	}
	var out []*Combined
	for _, g := range route.Groups() {
		c := &chain{name: g.Name, failurePolicy: g.FailurePolicy, opts: opts}
		for _, m := range g.ServedMembers(opts) {
			if w, ok := byName[m.Def.Name]; ok {
				c.members = append(c.members, member{Member: m, eval: w.member.eval})
			}
		}
		out = append(out, &Combined{Group: g, Admission: serveChain(c)})
	}
	return out
}

// Offline is the review chain of `gatehouse check`: every enabled webhook
// that takes a request, mutating ones first, each deciding on its own.
type Offline struct{ chain *chain }

// NewOffline returns the offline chain over hooks (from Build).
func NewOffline(hooks []*Webhook, opts route.Options) *Offline {
	c := &chain{name: "check", failurePolicy: "Fail", opts: opts, serves: servesCheck}
	for _, t := range []route.Type{route.Mutating, route.Validating} {
		for _, w := range hooks {
			if w.Type == t {
				c.members = append(c.members, w.member)
			}
		}
	}
	return &Offline{chain: c}
}

// Review decides req as the server would, and returns every decision and
// the object as the mutating webhooks left it (nil when no webhook took
// the request).
func (o *Offline) Review(ctx context.Context, req admission.Request) ([]Decision, map[string]any) {
	v := o.chain.review(ctx, &req)
	return v.decisions, v.object
}

func serveChain(c *chain) ReviewHandler {
	return ReviewHandler{&admission.Webhook{Handler: &endpoint{chain: c}, WithContextFunc: withReviewDeadline, LogConstructor: requestLogger}}
}

// requestLogger is the logger of one review: the request ID only. The
// decision line adds the operation, resource, namespace and name; the
// controller-runtime default would add them (and more) to every review's
// logger up front, which cost about a tenth of the server's CPU per review.
// Even the request ID is added only to a line that is written: most reviews
// write none, and controller-runtime builds this logger twice per review,
// each WithValues a copy of the zap logger (about 19 allocations a review).
func requestLogger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil || base.GetSink() == nil {
		return base
	}
	return base.WithSink(requestSink{base: base.GetSink(), uid: req.UID})
}

// requestSink writes base's lines with the request ID first among their
// values.
type requestSink struct {
	base logr.LogSink
	uid  types.UID
}

func (s requestSink) Init(info logr.RuntimeInfo) { s.base.Init(info) }
func (s requestSink) Enabled(level int) bool     { return s.base.Enabled(level) }
func (s requestSink) WithName(name string) logr.LogSink {
	return requestSink{base: s.base.WithName(name), uid: s.uid}
}

func (s requestSink) WithValues(kv ...any) logr.LogSink {
	return requestSink{base: s.base.WithValues(kv...), uid: s.uid}
}

func (s requestSink) Info(level int, msg string, kv ...any) {
	s.base.Info(level, msg, s.withID(kv)...)
}

func (s requestSink) Error(err error, msg string, kv ...any) {
	s.base.Error(err, msg, s.withID(kv)...)
}

func (s requestSink) withID(kv []any) []any {
	return append([]any{"requestID", s.uid}, kv...)
}

// endpoint serves a chain: one log line and one metric per decision.
type endpoint struct{ chain *chain }

func (e *endpoint) Handle(ctx context.Context, req admission.Request) admission.Response {
	v := e.chain.review(ctx, &req)
	log := logf.FromContext(ctx)
	for _, d := range v.decisions {
		recordDecision(d.Webhook, d.Outcome, d.Mode, d.Findings)
		if d.ModeDrift != nil {
			recordModeDriftReview(d.Webhook, *d.ModeDrift)
		}
		// Denials, warnings, patches, errors and decisions in another mode
		// than the server's are logged; a plain allow only at verbosity 1
		// and above, as most reviews are plain allows and the line was a
		// tenth of the server's CPU.
		line := log
		if d.Outcome == DecisionAllowed && len(d.Findings) == 0 && !d.Mutated && d.ModeDrift == nil {
			if line = log.V(1); !line.Enabled() {
				continue // not even the arguments of a line nobody writes
			}
		}
		kv := []any{
			"webhook", d.Webhook,
			"operation", req.Operation,
			"resource", req.Resource.Resource,
			"namespace", req.Namespace,
			"name", req.Name,
			"decision", d.Outcome,
			"mode", d.Mode,
			"codes", findingCodes(d.Findings),
			"durationSeconds", d.Duration.Seconds(),
			"timedOut", d.TimedOut,
		}
		if len(d.Excused) > 0 {
			kv = append(kv, "excusedBy", excusedBy(d.Excused))
		}
		if d.ModeDrift != nil {
			kv = append(kv, "modeDrift", d.ModeDrift.String(), "entry", d.ModeDrift.Entry, "configuredMode", d.ModeDrift.Configured)
		}
		line.Info("decision", kv...)
	}
	return withEncodedPatch(v.resp)
}
