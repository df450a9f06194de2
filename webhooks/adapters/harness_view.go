package adapters

import (
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// harnessView adapts the cluster state and namespace readers to the State
// interfaces of PROXY and LABEL. A nil reader cannot answer: the policies
// then deny.
type harnessView struct {
	state      route.StateReader
	namespaces route.NamespaceReader
}

var (
	_ proxy.State      = harnessView{}
	_ scopelabel.State = harnessView{}
)

// objects are the harnesses of both groups found under an index value,
// vshn.net's first; PROXY and LABEL decide alike whatever the order.
func (v harnessView) objects(index, value string) ([]map[string]any, error) {
	if v.state == nil {
		return nil, route.ErrNoClusterState
	}
	var out []map[string]any
	for _, gvk := range harness.GVKs() {
		objs, err := v.state.Objects(gvk, index, value)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func (v harnessView) HarnessesIn(namespace string) ([]map[string]any, error) {
	return v.objects(harness.IndexClaimNamespace, namespace)
}

func (v harnessView) HarnessesWithScopeLabel(key string) ([]map[string]any, error) {
	return v.objects(harness.IndexScopeLabel, key)
}

func (v harnessView) NamespaceLabels(name string) (map[string]string, error) {
	if v.namespaces == nil {
		return nil, route.ErrNoClusterState
	}
	return v.namespaces.NamespaceLabels(name)
}
