//go:build tools

// Package tools pins controller-gen for generate.sh. It is a module of its
// own so that controller-tools' dependencies (k8s.io/apiextensions-apiserver,
// golang.org/x/tools, ...) never enter gatehouse's go.mod.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
