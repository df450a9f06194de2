package proxy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func names(items []any) []string {
	var out []string
	for _, item := range items {
		out = append(out, item.(map[string]any)["name"].(string))
	}
	return out
}

func TestInjectAdmittedPod(t *testing.T) {
	pod := admittedPod()
	c := Config{Host: "proxy.example.svc", Port: 8443, CAConfigMap: "ca"}
	changed, findings := Inject(pod, c)
	if !changed || findings != nil {
		t.Fatalf("Inject = %v, %v; want true, nil", changed, findings)
	}
	s := spec(pod)
	if s["automountServiceAccountToken"] != false {
		t.Error("automountServiceAccountToken not false")
	}
	if got := names(s["volumes"].([]any)); !reflect.DeepEqual(got, []string{"config", VolumeName}) {
		t.Errorf("volumes = %v", got)
	}
	if !jsonEqual(s["volumes"].([]any)[1], injectedVolume(c)) {
		t.Errorf("injected volume = %s", toYAML(s["volumes"].([]any)[1]))
	}
	for _, ref := range []struct {
		list   string
		i      int
		mounts []string
	}{
		{"initContainers", 0, []string{VolumeName}},
		{"containers", 0, []string{"config", VolumeName}},
		{"containers", 1, []string{VolumeName}},
	} {
		ctr := container(pod, ref.list, ref.i)
		mounts := ctr["volumeMounts"].([]any)
		if got := names(mounts); !reflect.DeepEqual(got, ref.mounts) {
			t.Errorf("%s[%d] mounts = %v, want %v", ref.list, ref.i, got, ref.mounts)
		}
		if !jsonEqual(mounts[len(mounts)-1], injectedMount()) {
			t.Errorf("%s[%d] mount = %v", ref.list, ref.i, mounts[len(mounts)-1])
		}
		want := []any{
			map[string]any{"name": "LOG_LEVEL", "value": "info"},
			map[string]any{"name": EnvHost, "value": "proxy.example.svc"},
			map[string]any{"name": EnvPort, "value": "8443"},
		}
		if !jsonEqual(ctr["env"], want) {
			t.Errorf("%s[%d] env = %v", ref.list, ref.i, ctr["env"])
		}
	}
}

func TestInjectReplacesEnv(t *testing.T) {
	pod := admittedPod()
	ctr := container(pod, "containers", 0)
	ctr["env"] = []any{
		map[string]any{"name": EnvPort, "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
		map[string]any{"name": EnvHost, "value": "10.0.0.1"},
		map[string]any{"name": EnvHost, "value": "10.0.0.2"},
		"not an object",
	}
	Inject(pod, BuiltinConfig())
	want := []any{
		map[string]any{"name": EnvPort, "value": "443"},
		map[string]any{"name": EnvHost, "value": "proxy-service.proxy-namespace.svc"},
		"not an object",
	}
	if !jsonEqual(ctr["env"], want) {
		t.Errorf("env = %v", ctr["env"])
	}
}

func TestInjectAlreadyInjected(t *testing.T) {
	pod := admittedPod()
	Inject(pod, BuiltinConfig())
	for _, p := range []map[string]any{pod, readBack(pod), clone(pod)} {
		before := clone(p)
		if changed, findings := Inject(p, BuiltinConfig()); changed || findings != nil {
			t.Errorf("Inject on injected pod = %v, %v", changed, findings)
		}
		if !jsonEqual(p, before) {
			t.Error("Inject changed an injected pod")
		}
	}
}

func TestInjectVolumeNameTaken(t *testing.T) {
	for name, vol := range map[string]map[string]any{
		"emptyDir":          {"name": VolumeName, "emptyDir": map[string]any{}},
		"other CA":          injectedVolume(Config{CAConfigMap: "other-ca"}),
		"duplicate of ours": injectedVolume(BuiltinConfig()),
	} {
		t.Run(name, func(t *testing.T) {
			pod := admittedPod()
			s := spec(pod)
			vols := append(s["volumes"].([]any), vol)
			if name == "duplicate of ours" {
				vols = append(vols, injectedVolume(BuiltinConfig()))
			}
			s["volumes"] = vols
			before := clone(pod)
			changed, findings := Inject(pod, BuiltinConfig())
			want := []golden.Result{golden.Deny(ProxyVolumeNameTaken, "spec.volumes[2].name")}
			if name == "duplicate of ours" {
				want = []golden.Result{golden.Deny(ProxyVolumeNameTaken, "spec.volumes[3].name")}
			}
			if changed || !reflect.DeepEqual(golden.Results(findings), want) {
				t.Errorf("Inject = %v, %v; want false, %v", changed, golden.Results(findings), want)
			}
			if !jsonEqual(pod, before) {
				t.Error("a denied pod was changed")
			}
		})
	}
}

func TestInjectKeepsUserVolumes(t *testing.T) {
	pod := admittedPod()
	s := spec(pod)
	// An unmounted user volume, and a kube-api-access-like name that is not projected.
	s["volumes"] = append(s["volumes"].([]any),
		map[string]any{"name": "spare", "emptyDir": map[string]any{}},
		map[string]any{"name": "kube-api-access-mine", "secret": map[string]any{"secretName": "x"}},
	)
	Inject(pod, BuiltinConfig())
	if got := names(s["volumes"].([]any)); !reflect.DeepEqual(got, []string{"config", "spare", "kube-api-access-mine", VolumeName}) {
		t.Errorf("volumes = %v", got)
	}
}

func TestInjectNoSpec(t *testing.T) {
	for _, pod := range []map[string]any{nil, {}, {"spec": "x"}, {"spec": map[string]any{"volumes": "x"}}} {
		before := clone(pod)
		if changed, findings := Inject(pod, BuiltinConfig()); changed || findings != nil {
			t.Errorf("Inject(%v) = %v, %v", pod, changed, findings)
		}
		if !reflect.DeepEqual(pod, before) && pod != nil {
			t.Errorf("Inject changed %v", before)
		}
	}
}

// TestMessagesCarryNoValues plants env values and checks no finding echoes them.
func TestMessagesCarryNoValues(t *testing.T) {
	const marker = "s3cr3t-marker"
	pod := admittedPod()
	container(pod, "containers", 0)["env"] = []any{map[string]any{"name": EnvHost, "value": marker}}
	s := spec(pod)
	s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": VolumeName, "secret": map[string]any{"secretName": marker}})
	_, findings := Inject(pod, BuiltinConfig())
	if len(findings) == 0 {
		t.Fatal("no finding")
	}
	for _, f := range findings {
		if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
			t.Errorf("finding leaks a value: %+v", f)
		}
	}
}

// TestConfigValidate: every problem is reported, each at its field below
// the path given.
func TestConfigValidate(t *testing.T) {
	if errs := BuiltinConfig().Validate(nil); errs != nil {
		t.Error(errs)
	}
	at := field.NewPath("harness", "proxy")
	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{Port: 443, CAConfigMap: "c"}, []string{"harness.proxy.host: Required value"}},
		{Config{Host: "h", CAConfigMap: "c"}, []string{"harness.proxy.port: Invalid value: 0 is outside 1..65535"}},
		{Config{Host: "h", Port: 70000, CAConfigMap: "c"}, []string{"harness.proxy.port: Invalid value: 70000 is outside 1..65535"}},
		{Config{Host: "h", Port: 443}, []string{"harness.proxy.caConfigMap: Required value"}},
		{Config{}, []string{"harness.proxy.host: Required value", "harness.proxy.port: Invalid value: 0 is outside 1..65535",
			"harness.proxy.caConfigMap: Required value"}},
	} {
		var got []string
		for _, e := range tc.c.Validate(at) {
			got = append(got, e.Error())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}
