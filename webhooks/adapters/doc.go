// Package adapters puts each contract of policies/ behind the one interface
// the review chain calls (Evaluator): a decoded Review in, findings and the
// object as mutated out (evaluator.go). One file per webhook holds what its
// contract needs beyond the object: the cluster views it reads, the
// defaults it applies, the workloads it looks up. New builds a webhook's
// evaluator by name (evaluators.go).
package adapters
