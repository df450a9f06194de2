package scopelabel

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

type fakeState struct {
	namespaces map[string]map[string]string
	harnesses  []map[string]any
	err        error
}

func (s fakeState) NamespaceLabels(ns string) (map[string]string, error) {
	return s.namespaces[ns], s.err
}

func (s fakeState) HarnessesWithScopeLabel(key string) ([]map[string]any, error) {
	var out []map[string]any
	for _, h := range s.harnesses {
		if k, _ := h["spec"].(map[string]any)["scopeToLabel"].(string); k == key {
			out = append(out, h)
		}
	}
	return out, s.err
}

func (s fakeState) HarnessesIn(ns string) ([]map[string]any, error) {
	var out []map[string]any
	for _, h := range s.harnesses {
		if n, _ := h["spec"].(map[string]any)["operator"].(map[string]any)["namespace"].(string); n == ns {
			out = append(out, h)
		}
	}
	return out, s.err
}

const operatorUser = "system:serviceaccount:mariadb-system:mariadb-operator"

func TestAdmit(t *testing.T) {
	state := fakeState{
		namespaces: map[string]map[string]string{
			"apps":   {keyA: "tenant-1", "report.example/key": "x", "team": "a"},
			"plain":  {"team": "b"},
			"report": {"report.example/key": "x"},
			"redis":  {keyB: "cache-1"},
		},
		harnesses: []map[string]any{
			harnessObj("Enforce", keyA, "mariadb-system", "mariadb-operator"),
			harnessObj("Report", "report.example/key", "report-system"),
			harnessObj("Enforce", keyB, "redis-system", "redis-operator"),
		},
	}
	withLabel := func(obj map[string]any, key, value string) map[string]any {
		labels(obj)[key] = value
		return obj
	}
	for _, tc := range []struct {
		name       string
		req        Request
		wantLabels map[string]any // labels after Admit; nil: object unchanged
		wantDeny   []golden.Result
	}{
		{
			name:       "namespaced create copies the enforced label",
			req:        Request{Namespace: "apps", Username: "alice", Object: configMap()},
			wantLabels: map[string]any{"app": "db", keyA: "tenant-1"},
		},
		{
			name: "namespaced create, report-mode label is not copied",
			req:  Request{Namespace: "report", Username: "alice", Object: configMap()},
		},
		{
			name: "namespaced create in a namespace without scope labels",
			req:  Request{Namespace: "plain", Username: "alice", Object: configMap()},
		},
		{
			name: "namespaced create in an unknown namespace",
			req:  Request{Namespace: "gone", Username: "alice", Object: configMap()},
		},
		{
			name:     "namespaced create with another value is denied",
			req:      Request{Namespace: "apps", Username: "alice", Object: withLabel(configMap(), keyA, "tenant-2")},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelMismatch, "metadata.labels["+keyA+"]")},
		},
		{
			name:       "cluster-scoped create by the harnessed account",
			req:        Request{Username: operatorUser, Object: clusterRole()},
			wantLabels: map[string]any{keyA: ClusterScopedValue},
		},
		{
			name: "cluster-scoped create by another account",
			req:  Request{Username: "system:serviceaccount:mariadb-system:other", Object: clusterRole()},
		},
		{
			name: "cluster-scoped create by a person",
			req:  Request{Username: "alice", Object: clusterRole()},
		},
		{
			name:     "update removing the label by the harnessed account",
			req:      Request{Update: true, Username: operatorUser, Object: clusterRole(), OldObject: withLabel(clusterRole(), keyA, "true")},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyA+"]")},
		},
		{
			name: "update removing the label by a person",
			req:  Request{Update: true, Username: "alice", Object: clusterRole(), OldObject: withLabel(clusterRole(), keyA, "true")},
		},
		{
			name: "update stripping another harness's label by the harnessed account",
			req: Request{Update: true, Namespace: "redis", Username: operatorUser,
				Object: configMap(), OldObject: withLabel(configMap(), keyB, "cache-1")},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyB+"]")},
		},
		{
			name: "update stripping an Enforce harness's label by a Report-mode harness's account",
			req: Request{Update: true, Namespace: "redis", Username: "system:serviceaccount:report-system:exporter",
				Object: configMap(), OldObject: withLabel(configMap(), keyB, "cache-1")},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyB+"]")},
		},
		{
			name: "update stripping a Report-mode harness's label",
			req: Request{Update: true, Namespace: "report", Username: operatorUser,
				Object: configMap(), OldObject: withLabel(configMap(), "report.example/key", "x")},
		},
		{
			name: "update stripping another harness's label by an unharnessed account",
			req: Request{Update: true, Namespace: "redis", Username: "system:serviceaccount:apps:deployer",
				Object: configMap(), OldObject: withLabel(configMap(), keyB, "cache-1")},
		},
		{
			name: "update adding the label with another namespace's value",
			req: Request{Update: true, Namespace: "apps", Username: operatorUser,
				Object: withLabel(configMap(), keyA, "tenant-2"), OldObject: configMap()},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelAdded, "metadata.labels["+keyA+"]")},
		},
		{
			name: "update adding another harness's label in a namespace without it",
			req: Request{Update: true, Namespace: "apps", Username: operatorUser,
				Object: withLabel(configMap(), keyB, "cache-1"), OldObject: configMap()},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelAdded, "metadata.labels["+keyB+"]")},
		},
		{
			name: "update adding the label with the namespace's value",
			req: Request{Update: true, Namespace: "apps", Username: operatorUser,
				Object: withLabel(configMap(), keyA, "tenant-1"), OldObject: configMap()},
		},
		{
			name: "update adding the label to a cluster-scoped object",
			req: Request{Update: true, Username: operatorUser,
				Object: withLabel(clusterRole(), keyA, ClusterScopedValue), OldObject: clusterRole()},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelAdded, "metadata.labels["+keyA+"]")},
		},
		{
			name: "update adding the label with another value by a person",
			req: Request{Update: true, Namespace: "apps", Username: "alice",
				Object: withLabel(configMap(), keyA, "tenant-2"), OldObject: configMap()},
		},
		{
			// A pods/status UPDATE carries the whole Pod; the guard reads
			// its labels as on the main resource.
			name: "status update of a pod stripping the label",
			req: Request{Update: true, Namespace: "apps", Username: operatorUser,
				Object: podWithStatus(nil), OldObject: podWithStatus(map[string]any{keyA: "tenant-1"})},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyA+"]")},
		},
		{
			name: "status update of a pod keeping the label",
			req: Request{Update: true, Namespace: "apps", Username: operatorUser,
				Object: podWithStatus(map[string]any{keyA: "tenant-1"}), OldObject: podWithStatus(map[string]any{keyA: "tenant-1"})},
		},
		{
			name:     "namespaced update changing the label by the harnessed account",
			req:      Request{Update: true, Namespace: "apps", Username: operatorUser, Object: withLabel(configMap(), keyA, "x"), OldObject: withLabel(configMap(), keyA, "tenant-1")},
			wantDeny: []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyA+"]")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := clone(tc.req.Object)
			changed, findings := Admit(tc.req, state)
			if got := golden.Results(findings); !reflect.DeepEqual(got, tc.wantDeny) && (len(got) != 0 || len(tc.wantDeny) != 0) {
				t.Errorf("findings = %v, want %v", got, tc.wantDeny)
			}
			if tc.wantLabels == nil {
				if changed || !reflect.DeepEqual(readBack(tc.req.Object), readBack(before)) {
					t.Errorf("Admit() changed the object (changed=%v):\n%s", changed, toYAML(tc.req.Object))
				}
				return
			}
			if got := labels(tc.req.Object); !changed || !reflect.DeepEqual(got, tc.wantLabels) {
				t.Errorf("Admit() = changed %v, labels %v; want labels %v", changed, got, tc.wantLabels)
			}
		})
	}
}

func TestAdmitStateUnavailable(t *testing.T) {
	broken := fakeState{err: errors.New("not synced")}
	for _, req := range []Request{
		{Namespace: "apps", Object: configMap()},
		{Username: operatorUser, Object: clusterRole()},
		{Update: true, Username: operatorUser, Object: clusterRole(), OldObject: clusterRole()},
		{Update: true, Namespace: "apps", Username: operatorUser, Object: withLabel(configMap(), keyA, "x"), OldObject: configMap()},
	} {
		changed, findings := Admit(req, broken)
		want := []golden.Result{golden.Deny(policies.StateUnavailable, "metadata.labels")}
		if changed || !reflect.DeepEqual(golden.Results(findings), want) {
			t.Errorf("Admit(%+v) = %v, %v; want %v", req, changed, golden.Results(findings), want)
		}
	}
	// A person's cluster-scoped create needs no harness lookup at all.
	if _, findings := Admit(Request{Username: "alice", Object: clusterRole()}, broken); len(findings) != 0 {
		t.Errorf("a person's cluster-scoped create was denied: %v", findings)
	}
}

// namespacesDown answers harness lookups but not namespace labels.
type namespacesDown struct{ fakeState }

func (namespacesDown) NamespaceLabels(string) (map[string]string, error) {
	return nil, errors.New("not synced")
}

// TestGuardReadsNamespacesOnlyToJudgeAnAddition: removing or changing a scope
// label is judged without the namespace (its labels cannot excuse it), so
// a namespace view that is down does not turn those denials into
// StateUnavailable; an addition needs it, and is denied when it cannot be read.
func TestGuardReadsNamespacesOnlyToJudgeAnAddition(t *testing.T) {
	state := namespacesDown{fakeState{harnesses: []map[string]any{harnessObj("Enforce", keyA, "mariadb-system", "mariadb-operator")}}}
	strip := Request{Update: true, Namespace: "apps", Username: operatorUser, Object: configMap(), OldObject: withLabel(configMap(), keyA, "tenant-1")}
	if got, want := golden.Results(Guard(strip, state)), []golden.Result{golden.Deny(ScopeLabelChanged, "metadata.labels["+keyA+"]")}; !reflect.DeepEqual(got, want) {
		t.Errorf("strip: %v, want %v", got, want)
	}
	add := Request{Update: true, Namespace: "apps", Username: operatorUser, Object: withLabel(configMap(), keyA, "tenant-1"), OldObject: configMap()}
	if got, want := golden.Results(Guard(add, state)), []golden.Result{golden.Deny(policies.StateUnavailable, "metadata.labels")}; !reflect.DeepEqual(got, want) {
		t.Errorf("add: %v, want %v", got, want)
	}
	if f := Guard(add, state); len(f) != 1 || f[0].Ratchets() {
		t.Errorf("StateUnavailable must never ratchet: %+v", f)
	}
}

func podWithStatus(podLabels map[string]any) map[string]any {
	meta := map[string]any{"name": "worker", "namespace": "apps"}
	if podLabels != nil {
		meta["labels"] = podLabels
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": meta,
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}},
		"status": map[string]any{"phase": "Running"},
	}
}
