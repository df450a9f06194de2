// Package webhooks runs admission reviews: the one review chain every
// endpoint and `gatehouse check` take (chain.go) decodes a request once
// (decode.go), asks each member that route says takes it (webhooks/route)
// for its decision through its adapter (webhooks/adapters), applies the
// member's mode and ratchets (modes.go, response.go), and answers within
// the review's deadline (deadline.go) with one patch (patch.go). The
// endpoints (endpoints.go) and the HTTPS server (server.go) serve the chain
// to the API server; metrics.go counts what it decided.
package webhooks
