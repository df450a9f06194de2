package podsecurity

import (
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDefaultPod compares the exact object DefaultPod produces, then checks
// that a second call changes nothing.
func TestDefaultPod(t *testing.T) {
	// with returns a defaultedPod changed by edit: the expected result.
	with := func(edit func(obj map[string]any)) map[string]any {
		obj := defaultedPod()
		edit(obj)
		return obj
	}
	tests := []struct {
		name    string
		obj     map[string]any
		want    map[string]any
		changed bool
	}{
		{name: "empty pod", obj: basePod(), want: defaultedPod(), changed: true},
		{name: "already defaulted", obj: defaultedPod(), want: defaultedPod()},
		{name: "pod states runAsUser", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 2000
		}), want: with(func(o map[string]any) { podSC(o)["runAsUser"] = 2000 }), changed: true},
		{name: "stated zero values and false are kept", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["fsGroup"] = 0
			containerSC(o, "containers", 0)["allowPrivilegeEscalation"] = true
		}), want: with(func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["fsGroup"] = 0
			containerSC(o, "containers", 0)["allowPrivilegeEscalation"] = true
		}), changed: true},
		{name: "pod runAsNonRoot false is inherited by containers", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = false
		}), want: with(func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = false
			containerSC(o, "containers", 0)["runAsNonRoot"] = false
		}), changed: true},
		{name: "container runAsNonRoot false is kept under pod true", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsNonRoot"] = true
			containerSC(o, "containers", 0)["runAsUser"] = 0
			containerSC(o, "containers", 0)["runAsNonRoot"] = false
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["runAsUser"] = 0
			containerSC(o, "containers", 0)["runAsNonRoot"] = false
		}), changed: true},
		{name: "pod runAsNonRoot of the wrong type is kept, containers get the default", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsNonRoot"] = "yes"
		}), want: with(func(o map[string]any) { podSC(o)["runAsNonRoot"] = "yes" }), changed: true},
		{name: "numbers of other Go types are kept", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["runAsUser"] = json.Number("7")
			podSC(o)["runAsGroup"] = int32(5)
		}), want: with(func(o map[string]any) {
			podSC(o)["runAsUser"] = json.Number("7")
			podSC(o)["runAsGroup"] = int32(5)
		}), changed: true},
		{name: "null fields are defaulted", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = map[string]any{"runAsUser": nil, "seccompProfile": nil}
			containerAt(o, "containers", 0)["securityContext"] = map[string]any{"capabilities": map[string]any{"drop": nil}}
		}), want: defaultedPod(), changed: true},
		{name: "null securityContexts are defaulted", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = nil
			containerAt(o, "containers", 0)["securityContext"] = nil
		}), want: defaultedPod(), changed: true},
		{name: "pod seccomp Localhost is copied into containers", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/web.json"}
		}), want: with(func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/web.json"}
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/web.json"}
		}), changed: true},
		{name: "pod seccomp Unconfined is copied into containers", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{"type": "Unconfined"}
		}), want: with(func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{"type": "Unconfined"}
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "Unconfined"}
		}), changed: true},
		{name: "container seccomp Localhost is kept", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/app.json"}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/app.json"}
		}), changed: true},
		{name: "seccompProfile without type gets the type", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = map[string]any{}
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "", "localhostProfile": "profiles/app.json"}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["seccompProfile"] = map[string]any{"type": "RuntimeDefault", "localhostProfile": "profiles/app.json"}
		}), changed: true},
		{name: "capabilities.add is kept, drop is added", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"NET_ADMIN"}}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"NET_ADMIN"}, "drop": []any{"ALL"}}
		}), changed: true},
		{name: "an empty drop list is stated", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"drop": []any{}}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"drop": []any{}}
		}), changed: true},
		{name: "privileged container gets allowPrivilegeEscalation true", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["privileged"] = true
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["privileged"] = true
			containerSC(o, "containers", 0)["allowPrivilegeEscalation"] = true
		}), changed: true},
		{name: "CAP_SYS_ADMIN container gets allowPrivilegeEscalation true", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"NET_ADMIN", "CAP_SYS_ADMIN"}}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"NET_ADMIN", "CAP_SYS_ADMIN"}, "drop": []any{"ALL"}}
			containerSC(o, "containers", 0)["allowPrivilegeEscalation"] = true
		}), changed: true},
		{name: "SYS_ADMIN without prefix and privileged false get the default", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["privileged"] = false
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"SYS_ADMIN"}}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["privileged"] = false
			containerSC(o, "containers", 0)["capabilities"] = map[string]any{"add": []any{"SYS_ADMIN"}, "drop": []any{"ALL"}}
		}), changed: true},
		{name: "readOnlyRootFilesystem is never set, other fields survive", obj: tweak(basePod(), func(o map[string]any) {
			containerSC(o, "containers", 0)["readOnlyRootFilesystem"] = false
			podSC(o)["supplementalGroups"] = []any{float64(4000)}
		}), want: with(func(o map[string]any) {
			containerSC(o, "containers", 0)["readOnlyRootFilesystem"] = false
			podSC(o)["supplementalGroups"] = []any{float64(4000)}
		}), changed: true},
		{name: "init, regular and ephemeral containers", obj: tweak(basePod(), func(o map[string]any) {
			addContainer(o, "initContainers", "setup")
			addContainer(o, "containers", "sidecar")
			addContainer(o, "ephemeralContainers", "debug")
		}), want: with(func(o map[string]any) {
			addContainer(o, "initContainers", "setup")["securityContext"] = defaultedContainerSC()
			addContainer(o, "containers", "sidecar")["securityContext"] = defaultedContainerSC()
			addContainer(o, "ephemeralContainers", "debug")["securityContext"] = defaultedContainerSC()
		}), changed: true},
		{name: "Windows pod gets runAsNonRoot only", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec", "os")["name"] = "windows"
		}), want: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec", "os")["name"] = "windows"
			podSC(o)["runAsNonRoot"] = true
			containerSC(o, "containers", 0)["runAsNonRoot"] = true
		}), changed: true},
		{name: "Linux pod by name", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec", "os")["name"] = "linux"
		}), want: with(func(o map[string]any) { getMap(o, "spec", "os")["name"] = "linux" }), changed: true},

		// Values of the wrong type are left alone.
		{name: "pod securityContext not an object", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = "restricted"
		}), want: with(func(o map[string]any) { getMap(o, "spec")["securityContext"] = "restricted" }), changed: true},
		{name: "container securityContext not an object", obj: tweak(basePod(), func(o map[string]any) {
			containerAt(o, "containers", 0)["securityContext"] = []any{"x"}
		}), want: with(func(o map[string]any) { containerAt(o, "containers", 0)["securityContext"] = []any{"x"} }), changed: true},
		{name: "seccompProfile and capabilities not objects", obj: tweak(basePod(), func(o map[string]any) {
			podSC(o)["seccompProfile"] = "RuntimeDefault"
			containerSC(o, "containers", 0)["seccompProfile"] = 1.5
			containerSC(o, "containers", 0)["capabilities"] = []any{"ALL"}
		}), want: with(func(o map[string]any) {
			podSC(o)["seccompProfile"] = "RuntimeDefault"
			containerSC(o, "containers", 0)["seccompProfile"] = 1.5
			containerSC(o, "containers", 0)["capabilities"] = []any{"ALL"}
		}), changed: true},
		{name: "container entries and lists of the wrong type", obj: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["initContainers"] = map[string]any{"name": "setup"}
			getMap(o, "spec")["containers"] = []any{"app", nil, container("app")}
		}), want: tweak(basePod(), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = defaultedPodSC()
			getMap(o, "spec")["initContainers"] = map[string]any{"name": "setup"}
			c := container("app")
			c["securityContext"] = defaultedContainerSC()
			getMap(o, "spec")["containers"] = []any{"app", nil, c}
		}), changed: true},
		{name: "no spec", obj: map[string]any{"kind": "Pod"}, want: map[string]any{"kind": "Pod"}},
		{name: "spec not an object", obj: map[string]any{"spec": []any{}}, want: map[string]any{"spec": []any{}}},
		{name: "nil object", obj: nil, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.obj
			if changed := DefaultPod(got, BuiltinDefaults()); changed != tc.changed {
				t.Errorf("DefaultPod reported changed=%v, want %v", changed, tc.changed)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("result\n%s\nwant\n%s", toYAML(got), toYAML(tc.want))
			}
			if DefaultPod(got, BuiltinDefaults()) {
				t.Error("second DefaultPod reported a change")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("second DefaultPod changed the object\n%s", toYAML(got))
			}
		})
	}
}

// tweak changes obj in place and returns it.
func tweak(obj map[string]any, edit func(map[string]any)) map[string]any {
	edit(obj)
	return obj
}

// TestDefaultPodCopiesNotShares checks that every container gets its own
// seccompProfile and drop list: a later change to one must not reach another
// or the pod level.
func TestDefaultPodCopiesNotShares(t *testing.T) {
	obj := basePod()
	addContainer(obj, "containers", "sidecar")
	podSC(obj)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": "profiles/web.json"}
	DefaultPod(obj, BuiltinDefaults())
	first, second := containerSC(obj, "containers", 0), containerSC(obj, "containers", 1)
	first["seccompProfile"].(map[string]any)["localhostProfile"] = "changed"
	first["capabilities"].(map[string]any)["drop"].([]any)[0] = "changed"
	if got := second["seccompProfile"].(map[string]any)["localhostProfile"]; got != "profiles/web.json" {
		t.Errorf("containers share a seccompProfile: %v", got)
	}
	if got := podSC(obj)["seccompProfile"].(map[string]any)["localhostProfile"]; got != "profiles/web.json" {
		t.Errorf("a container shares the pod's seccompProfile: %v", got)
	}
	if got := second["capabilities"].(map[string]any)["drop"].([]any)[0]; got != "ALL" {
		t.Errorf("containers share a drop list: %v", got)
	}
	d := BuiltinDefaults()
	obj = basePod()
	DefaultPod(obj, d)
	containerSC(obj, "containers", 0)["capabilities"].(map[string]any)["drop"].([]any)[0] = "changed"
	if d.CapabilitiesDrop[0] != "ALL" {
		t.Error("the drop list shares the Defaults' slice")
	}
}

// TestDefaultPodConfigured checks that configured values, not the builtin
// ones, are written.
func TestDefaultPodConfigured(t *testing.T) {
	d := Defaults{
		RunAsUser: 2000, RunAsGroup: 3000, FSGroup: 4000, FSGroupChangePolicy: "Always",
		RunAsNonRoot: false, SeccompProfileType: "Unconfined", AllowPrivilegeEscalation: true,
		CapabilitiesDrop: []string{"NET_RAW", "SYS_CHROOT"},
	}
	if errs := d.Validate(nil); errs != nil {
		t.Fatal(errs)
	}
	obj := basePod()
	DefaultPod(obj, d)
	want := basePod()
	getMap(want, "spec")["securityContext"] = map[string]any{
		"runAsUser": int64(2000), "runAsGroup": int64(3000), "fsGroup": int64(4000), "fsGroupChangePolicy": "Always",
		"runAsNonRoot": false, "seccompProfile": map[string]any{"type": "Unconfined"},
	}
	containerAt(want, "containers", 0)["securityContext"] = map[string]any{
		"runAsNonRoot": false, "seccompProfile": map[string]any{"type": "Unconfined"},
		"allowPrivilegeEscalation": true, "capabilities": map[string]any{"drop": []any{"NET_RAW", "SYS_CHROOT"}},
	}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("result\n%s\nwant\n%s", toYAML(obj), toYAML(want))
	}
}

// TestDefaultPodUnusableDefaults checks that even a zero Defaults (which
// Validate rejects) leaves DefaultPod idempotent.
func TestDefaultPodUnusableDefaults(t *testing.T) {
	obj := basePod()
	podSC(obj)["seccompProfile"] = map[string]any{"type": ""}
	if !DefaultPod(obj, Defaults{}) {
		t.Fatal("first call changed nothing")
	}
	before := clone(obj)
	if DefaultPod(obj, Defaults{}) || !reflect.DeepEqual(obj, before) {
		t.Errorf("not idempotent with zero Defaults:\n%s", toYAML(obj))
	}
}

// TestDefaultPodKeepsUnknownFields checks that fields the Go types lack
// survive, at the pod and the container level and inside the security
// contexts.
func TestDefaultPodKeepsUnknownFields(t *testing.T) {
	obj := basePod()
	podSC(obj)["futureField"] = "x"
	containerAt(obj, "containers", 0)["futureField"] = map[string]any{"nested": []any{"y"}}
	containerSC(obj, "containers", 0)["futureContainerField"] = true
	getMap(obj, "spec")["futureSpecField"] = 1.0
	DefaultPod(obj, BuiltinDefaults())
	if podSC(obj)["futureField"] != "x" {
		t.Error("spec.securityContext.futureField was lost")
	}
	if !reflect.DeepEqual(containerAt(obj, "containers", 0)["futureField"], map[string]any{"nested": []any{"y"}}) {
		t.Error("spec.containers[0].futureField was lost")
	}
	if containerSC(obj, "containers", 0)["futureContainerField"] != true {
		t.Error("spec.containers[0].securityContext.futureContainerField was lost")
	}
	if getMap(obj, "spec")["futureSpecField"] != 1.0 {
		t.Error("spec.futureSpecField was lost")
	}
	if podSC(obj)["runAsUser"] != int64(1001) {
		t.Error("defaults were not applied next to the unknown fields")
	}
}

func TestDefaultNewEphemeralContainers(t *testing.T) {
	// running is a Pod as stored: defaulted, with ephemeral container
	// debug-1 added earlier.
	running := func() map[string]any {
		obj := basePod()
		addContainer(obj, "ephemeralContainers", "debug-1")
		DefaultPod(obj, BuiltinDefaults())
		return obj
	}
	t.Run("only the new ephemeral container changes", func(t *testing.T) {
		old := running()
		// A stored pod whose existing ephemeral container lacks the defaults
		// (it predates the opt-in) shows that it is left alone.
		delete(containerAt(old, "ephemeralContainers", 0), "securityContext")
		obj := clone(old)
		addContainer(obj, "ephemeralContainers", "debug-2")
		want := clone(obj)
		containerAt(want, "ephemeralContainers", 1)["securityContext"] = defaultedContainerSC()
		if !DefaultNewEphemeralContainers(obj, old, BuiltinDefaults()) {
			t.Error("reported no change")
		}
		if !reflect.DeepEqual(obj, want) {
			t.Errorf("result\n%s\nwant\n%s", toYAML(obj), toYAML(want))
		}
		if DefaultNewEphemeralContainers(obj, old, BuiltinDefaults()) {
			t.Error("second call reported a change")
		}
	})
	t.Run("a root debug container in a user namespace keeps runAsNonRoot unset", func(t *testing.T) {
		// The pod runs as uid 0 in its own user namespace, so it was
		// created without runAsNonRoot at either level; the debug container
		// inherits uid 0.
		old := basePod()
		getMap(old, "spec")["hostUsers"] = false
		podSC(old)["runAsUser"] = 0
		DefaultPod(old, BuiltinDefaults())
		obj := clone(old)
		addContainer(obj, "ephemeralContainers", "debug")
		if !DefaultNewEphemeralContainers(obj, old, BuiltinDefaults()) {
			t.Fatal("reported no change")
		}
		sc := containerSC(obj, "ephemeralContainers", 0)
		if _, set := sc["runAsNonRoot"]; set || sc["allowPrivilegeEscalation"] != false {
			t.Errorf("debug container: %v; want every default but runAsNonRoot", sc)
		}
		if findings := ValidatePod(obj, old); len(findings) != 0 {
			t.Errorf("ValidatePod: %v", findings)
		}
		// The same container in a pod sharing the host's users gets it and
		// is then denied: uid 0 with runAsNonRoot true.
		getMap(old, "spec")["hostUsers"] = true
		obj = clone(old)
		addContainer(obj, "ephemeralContainers", "debug")
		DefaultNewEphemeralContainers(obj, old, BuiltinDefaults())
		if findings := ValidatePod(obj, old); len(findings) != 1 || findings[0].Code != RunAsRootConflict {
			t.Errorf("ValidatePod with hostUsers true: %v, want one RunAsRootConflict", findings)
		}
	})
	t.Run("pod level is neither changed nor required", func(t *testing.T) {
		old := basePod()
		obj := clone(old)
		addContainer(obj, "ephemeralContainers", "debug")
		DefaultNewEphemeralContainers(obj, old, BuiltinDefaults())
		if _, ok := getMap(obj, "spec")["securityContext"]; ok {
			t.Error("the pod level was changed")
		}
		if containerAt(obj, "containers", 0)["securityContext"] != nil {
			t.Error("a regular container was changed")
		}
		if !reflect.DeepEqual(containerSC(obj, "ephemeralContainers", 0), defaultedContainerSC()) {
			t.Errorf("ephemeral container\n%s", toYAML(containerSC(obj, "ephemeralContainers", 0)))
		}
	})
	t.Run("new ephemeral container inherits the pod level", func(t *testing.T) {
		old := running()
		podSC(old)["runAsUser"] = 0
		podSC(old)["runAsNonRoot"] = false
		podSC(old)["seccompProfile"] = map[string]any{"type": "Unconfined"}
		obj := clone(old)
		addContainer(obj, "ephemeralContainers", "debug-2")
		DefaultNewEphemeralContainers(obj, old, BuiltinDefaults())
		want := defaultedContainerSC()
		want["runAsNonRoot"] = false
		want["seccompProfile"] = map[string]any{"type": "Unconfined"}
		if got := containerSC(obj, "ephemeralContainers", 1); !reflect.DeepEqual(got, want) {
			t.Errorf("ephemeral container\n%s\nwant\n%s", toYAML(got), toYAML(want))
		}
	})
	t.Run("unnamed ephemeral container counts as new", func(t *testing.T) {
		old := running()
		obj := clone(old)
		delete(addContainer(obj, "ephemeralContainers", "x"), "name")
		if !DefaultNewEphemeralContainers(obj, old, BuiltinDefaults()) {
			t.Error("reported no change")
		}
		if !reflect.DeepEqual(containerSC(obj, "ephemeralContainers", 1), defaultedContainerSC()) {
			t.Error("the unnamed ephemeral container was not defaulted")
		}
	})
	t.Run("nil old object: every ephemeral container is new", func(t *testing.T) {
		obj := basePod()
		addContainer(obj, "ephemeralContainers", "debug")
		if !DefaultNewEphemeralContainers(obj, nil, BuiltinDefaults()) {
			t.Error("reported no change")
		}
	})
	t.Run("no new ephemeral container", func(t *testing.T) {
		old := running()
		delete(containerAt(old, "ephemeralContainers", 0), "securityContext")
		obj := clone(old)
		if DefaultNewEphemeralContainers(obj, old, BuiltinDefaults()) || !reflect.DeepEqual(obj, old) {
			t.Error("an existing ephemeral container was changed")
		}
	})
	t.Run("hostile shapes", func(t *testing.T) {
		for _, obj := range []map[string]any{
			nil,
			{"spec": "x"},
			{"spec": map[string]any{"ephemeralContainers": "x"}},
			{"spec": map[string]any{"ephemeralContainers": []any{1, nil, map[string]any{"securityContext": 2}}}},
		} {
			before := clone(obj)
			if DefaultNewEphemeralContainers(obj, map[string]any{"spec": map[string]any{"ephemeralContainers": []any{map[string]any{"name": 1}}}}, BuiltinDefaults()) {
				t.Errorf("changed %v", before)
			}
			if !reflect.DeepEqual(obj, before) {
				t.Errorf("changed %v to %v", before, obj)
			}
		}
	})
}

// TestDefaultedSharesWhatItLeavesAlone: Defaulted copies only the objects
// and lists on the way to a change, so the review chain can compare the
// defaulted Pod with the Pod as sent by identity and skip the rest.
func TestDefaultedSharesWhatItLeavesAlone(t *testing.T) {
	var pod map[string]any
	if err := yaml.Unmarshal([]byte(`
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: a}}
spec:
  securityContext: {runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, fsGroupChangePolicy: OnRootMismatch, runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  volumes: [{name: v, emptyDir: {}}]
  initContainers:
  - {name: i, image: i, securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
  containers:
  - {name: a, image: a, securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
  - {name: b, image: b, env: [{name: X, value: "1"}]}
`), &pod); err != nil {
		t.Fatal(err)
	}
	before := clone(pod)
	out, changed := Defaulted(pod, BuiltinDefaults())
	if !changed || !reflect.DeepEqual(pod, before) {
		t.Fatalf("Defaulted: changed %v; input changed: %v", changed, !reflect.DeepEqual(pod, before))
	}
	same := func(a, b any) bool {
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		if va.Kind() == reflect.Slice {
			return va.Len() == vb.Len() && va.Pointer() == vb.Pointer()
		}
		return va.UnsafePointer() == vb.UnsafePointer()
	}
	spec, outSpec := pod["spec"].(map[string]any), out["spec"].(map[string]any)
	containers, outContainers := spec["containers"].([]any), outSpec["containers"].([]any)
	for _, c := range []struct {
		what   string
		a, b   any
		shared bool
	}{
		{"metadata", pod["metadata"], out["metadata"], true},
		{"spec", spec, outSpec, false},
		{"spec.securityContext", spec["securityContext"], outSpec["securityContext"], true},
		{"spec.volumes", spec["volumes"], outSpec["volumes"], true},
		{"spec.initContainers", spec["initContainers"], outSpec["initContainers"], true},
		{"spec.containers", containers, outContainers, false},
		{"spec.containers[0]", containers[0], outContainers[0], true},
		{"spec.containers[1]", containers[1], outContainers[1], false},
		{"spec.containers[1].env", containers[1].(map[string]any)["env"], outContainers[1].(map[string]any)["env"], true},
	} {
		if got := same(c.a, c.b); got != c.shared {
			t.Errorf("%s: shared %v, want %v", c.what, got, c.shared)
		}
	}
}
