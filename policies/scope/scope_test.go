package scope

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

const emptyEntry = "pod,,node"

// TestValidateShapes: each kind is read where it keeps PVC annotations.
func TestValidateShapes(t *testing.T) {
	const vol = "volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]"
	tests := []struct {
		name string
		gk   schema.GroupKind
		obj  func() map[string]any
		want []result
	}{
		{name: "pod", gk: gkPod, obj: func() map[string]any {
			obj := basePod()
			podAnnotations(obj)[annotationScope] = emptyEntry
			return obj
		}, want: []result{deny(ScopeEntryEmpty, "spec."+vol)}},
		{name: "pod second volume", gk: gkPod, obj: func() map[string]any {
			obj := basePod()
			annotations := validSecretAnnotations()
			annotations[annotationScope] = emptyEntry
			spec := dig(obj, "spec")
			spec["volumes"] = append(spec["volumes"].([]any), map[string]any{"name": "cache", "emptyDir": map[string]any{}}, secretVolume("b", annotations))
			return obj
		}, want: []result{deny(ScopeEntryEmpty, "spec.volumes[2].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]")}},
		{name: "deployment", gk: gkDeployment, obj: func() map[string]any {
			obj := baseDeployment()
			templateAnnotations(obj, "spec", "template", "spec")[annotationScope] = emptyEntry
			return obj
		}, want: []result{deny(ScopeEntryEmpty, "spec.template.spec."+vol)}},
		{name: "cronjob", gk: gkCronJob, obj: func() map[string]any {
			obj := baseCronJob()
			templateAnnotations(obj, "spec", "jobTemplate", "spec", "template", "spec")[annotationScope] = emptyEntry
			return obj
		}, want: []result{deny(ScopeEntryEmpty, "spec.jobTemplate.spec.template.spec."+vol)}},
		{name: "statefulset template and claim template", gk: gkStatefulSet, obj: func() map[string]any {
			obj := baseStatefulSet()
			templateAnnotations(obj, "spec", "template", "spec")[annotationScope] = emptyEntry
			claim := dig(obj, "spec")["volumeClaimTemplates"].([]any)[0].(map[string]any)
			delete(dig(claim, "metadata", "annotations"), annotationClass)
			return obj
		}, want: []result{
			deny(ScopeEntryEmpty, "spec.template.spec."+vol),
			deny(SecretClassMissing, "spec.volumeClaimTemplates[0].metadata.annotations[secrets.kubedoop.dev/class]"),
		}},
		{name: "claim templates are a StatefulSet's only", gk: gkDeployment, obj: func() map[string]any {
			obj := baseStatefulSet()
			claim := dig(obj, "spec")["volumeClaimTemplates"].([]any)[0].(map[string]any)
			delete(dig(claim, "metadata", "annotations"), annotationClass)
			return obj
		}},
		{name: "pvc", gk: gkPVC, obj: func() map[string]any {
			obj := basePVC()
			dig(obj, "metadata", "annotations")[annotationScope] = emptyEntry
			return obj
		}, want: []result{deny(ScopeEntryEmpty, "metadata.annotations[secrets.kubedoop.dev/scope]")}},
		{name: "pod annotations are not PVC annotations", gk: gkPod, obj: func() map[string]any {
			obj := basePod()
			dig(obj, "metadata")["annotations"] = map[string]any{annotationScope: emptyEntry}
			return obj
		}},
		{name: "any product kind is walked", gk: gkTrinoCluster, obj: func() map[string]any {
			return map[string]any{"spec": map[string]any{"coordinators": credentialsHolder("x,node")}}
		}, want: []result{deny(ScopeNameHasDelimiter, "spec.coordinators.scope.services[0]")}},
		{name: "a pod is not walked as a custom resource", gk: gkPod, obj: func() map[string]any {
			obj := basePod()
			dig(obj, "spec")["x"] = credentialsHolder("x,node")
			return obj
		}},
		{name: "malformed pod", gk: gkPod, obj: func() map[string]any {
			return map[string]any{"spec": map[string]any{"volumes": []any{
				"x", nil, map[string]any{"ephemeral": "x"},
				map[string]any{"ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{"metadata": map[string]any{"annotations": []any{}}}}},
			}}}
		}},
		{name: "malformed statefulset", gk: gkStatefulSet, obj: func() map[string]any {
			return map[string]any{"spec": map[string]any{"template": "x", "volumeClaimTemplates": []any{1.0, map[string]any{"metadata": "x"}}}}
		}},
		{name: "empty objects", gk: gkPVC, obj: func() map[string]any { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := results(Validate(tt.gk, tt.obj())); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestEveryWorkloadKind: every kind that runs pods has its volumes read.
func TestEveryWorkloadKind(t *testing.T) {
	for _, k := range workload.Kinds() {
		obj := map[string]any{}
		pod := obj
		for _, key := range k.Template {
			next := map[string]any{}
			pod[key] = next
			pod = next
		}
		pod["spec"] = podSpec()
		templateAnnotations(pod, "spec")[annotationScope] = emptyEntry
		gk := schema.GroupKind{Group: k.Resource.Group, Kind: k.Kind}
		if got := Validate(gk, obj); !policies.Denied(got) {
			t.Errorf("%s: the volumes of its pod template are not checked", k.Kind)
		}
	}
}

// TestNoPayload plants marker values wherever SCOPE reads a value and proves
// that no message and no field path carries one.
func TestNoPayload(t *testing.T) {
	const marker = "S3CRET-MARKER"
	m := func(n string) string { return marker + "-" + n }

	planted := map[string]any{
		annotationClass:                    m("class"),
		annotationFormat:                   m("format"),
		annotationPKCS12Password:           m("password"),
		annotationAutoTLSCertLifetime:      m("lifetime"),
		annotationAutoTLSCertRestartBuffer: m("buffer"),
		annotationAutoTLSCertJitterFactor:  m("jitter"),
		annotationKerberosServiceNames:     m("kerberos"),
		annotationPodInfo:                  m("podinfo"),
		"secrets.kubedoop.dev/unknown":     m("unknown"),
		annotationScope: strings.Join([]string{
			"service=" + m("svc") + "=" + m("dropped"), "node=" + m("node"), "pod=" + m("pod"),
			m("key") + "=" + m("value"), m("bare-key"), "", "listener-volume",
			"=" + m("keyless"), "service=*." + m("svc"), "listener-volume=" + m("lv"),
		}, ","),
	}
	// Durations cannot be markers and still parse, so the lifetime findings
	// are planted with values no message has a reason to contain.
	unissuable := map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "7h13m",
		annotationAutoTLSCertRestartBuffer: "9h47m", annotationAutoTLSCertJitterFactor: "0.000"}
	mayFail := map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "11h17m",
		annotationAutoTLSCertRestartBuffer: "9h47m", annotationAutoTLSCertJitterFactor: "0.37"}
	plantedValues := []string{"7h13m", "9h47m", "11h17m", "0.37", "0.000", "25980", "35220", "40620"}
	pod := basePod()
	dig(pod, "spec")["volumes"] = []any{secretVolume("tls", planted), secretVolume("short", unissuable), secretVolume("jittery", mayFail)}
	classless := map[string]any{annotationScope: m("scope"), annotationFormat: "tls-p12"}
	pvc := basePVC()
	dig(pvc, "metadata")["annotations"] = classless

	cr := baseHdfsCluster()
	hdfsScope(cr)["services"] = []any{m("a") + ",node," + m("b"), m("c") + "=" + m("d"), ""}
	hdfsScope(cr)["listenerVolumes"] = []any{m("e") + ",pod", m("f") + "=x", m("g")}
	hdfsScope(cr)["services"] = append(hdfsScope(cr)["services"].([]any), "*."+m("h"))
	var deep any = map[string]any{"x": m("deep")}
	for range maxWalkDepth {
		deep = map[string]any{"x": deep}
	}
	dig(cr, "spec")["deep"] = deep

	var findings []policies.Finding
	findings = append(findings, Validate(gkPod, pod)...)
	findings = append(findings, Validate(gkPVC, pvc)...)
	findings = append(findings, Validate(gkHdfsCluster, cr)...)

	fired := map[policies.Code]bool{}
	for _, f := range findings {
		fired[f.Code] = true
		if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
			t.Errorf("%s at %s leaks a planted value: %s", f.Code, f.Field, f.Message)
		}
		for _, v := range plantedValues {
			if strings.Contains(f.Message, v) {
				t.Errorf("%s at %s leaks the planted value %q: %s", f.Code, f.Field, v, f.Message)
			}
		}
	}
	// Every code must have fired, or the test proves less than it claims.
	for _, code := range []policies.Code{
		ScopeEntryEmpty, ScopeValueMissing, ScopeValueHasDelimiter, ScopeUnexpectedValue, ScopeUnknownKey,
		ScopeNameEmpty, ScopeNameHasDelimiter, SecretClassMissing, SecretFormatUnknown, SecretDurationInvalid,
		SecretJitterFactorInvalid, SecretPasswordReadable, SecretAnnotationUnknown,
		ScopeKeyMissing, ScopeServiceNameInvalid, ScopeListenerVolumeNameInvalid, ScopeWalkLimit,
		SecretJitterFactorZero, SecretCertLifetimeUnissuable, SecretCertLifetimeMayFail,
	} {
		if !fired[code] {
			t.Errorf("%s never fired on the planted values", code)
		}
	}
}

// TestNameEvidence: the evidence of a CR name finding is the name.
func TestNameEvidence(t *testing.T) {
	obj := baseHdfsCluster()
	hdfsScope(obj)["services"] = []any{"mysvc,node"}
	findings := Validate(gkHdfsCluster, obj)
	if len(findings) != 1 || findings[0].Evidence != policies.Fingerprint("mysvc,node") {
		t.Fatalf("want one finding with the name as evidence, got %+v", findings)
	}
}

// TestDeterministic: the same object yields the same findings in the same
// order, whatever order Go iterates its maps in.
func TestDeterministic(t *testing.T) {
	obj := baseHdfsCluster()
	spec := dig(obj, "spec")
	for i := range 20 {
		spec[string(rune('a'+i))] = credentialsHolder(",", "a=b", "")
	}
	first := Validate(gkHdfsCluster, obj)
	for range 20 {
		if again := Validate(gkHdfsCluster, obj); !slices.Equal(again, first) {
			t.Fatal("findings differ between runs")
		}
	}
}
