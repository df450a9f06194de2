// Package v1 contains Helmetica's dependency API (helmetica.io/v1) from
// ADR0008 "Operator Harness / Dependencies" (seed 001): DependencyGroup, which
// claims CRDs for one operator, and CustomResourceDefinitionSource, which
// says which dependency group a chart provides, manages or requires. gatehouse
// ships the CRDs (deploy/crds) and validates the objects at admission
// (CONTRACTS §6 DG, §7 CRDS).
//
// Both kinds are cluster-scoped. The seed states it for DependencyGroup; for
// CustomResourceDefinitionSource it does not say, but what a source declares
// (who provides or manages a group, cluster-wide unique) is cluster-wide.
//
// The schema rejects what the API server can decide on one object (a CRD
// name that is not <plural>.<group>, a name listed twice in one group, a
// "manages" that does not parse); the clashes between objects are the
// webhooks' part.
//
// +kubebuilder:object:generate=true
// +groupName=helmetica.io
package v1
