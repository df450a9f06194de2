//go:build tools

// Package tools pins the sources of the control-plane binaries that the e2e
// suite runs with controller-runtime envtest. build.sh builds them; this file
// only keeps `go mod tidy` from dropping the requirements.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubemark"
)
