// Package v1 contains helmetica's API (helmetica.io/v1) in the shape of its
// public implementation, chrysopoeia: DependencyGroup (cluster-scoped), which
// claims CRDs for one operator; CustomResourceDefinitionSource (namespaced),
// which says which dependency groups a chart provides, manages or requires;
// and OperatorHarness (cluster-scoped, scopeToLabel and operator only).
//
// These CRDs belong to helmetica: deploy/default installs none of them. The
// optional component deploy/helmetica-crds, generated from these types by
// `make crds`, is for clusters without helmetica and for the e2e suite; its
// group, scopes and field types equal helmetica's (checked by
// e2e/helmetica_crds_test.go). gatehouse validates the objects at admission
// (docs/harness-dependencies.md).
//
// +kubebuilder:object:generate=true
// +groupName=helmetica.io
package v1
