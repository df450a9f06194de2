package serviceaccount

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// want is the part of a finding the table tests compare exactly.
type want struct {
	sev   policies.Severity
	code  policies.Code
	field string
}

func (w want) String() string {
	sev := "deny"
	if w.sev == policies.Warn {
		sev = "warn"
	}
	return fmt.Sprintf("%s %s %s", sev, w.code, w.field)
}

func deny(code policies.Code, field string) want { return want{policies.Deny, code, field} }
func warn(code policies.Code, field string) want { return want{policies.Warn, code, field} }

// abbreviate shortens the long field paths of the depth tests for failure
// messages: the middle of a path over 200 bytes is elided.
func abbreviate(ws []want) []want {
	out := slices.Clone(ws)
	for i := range out {
		if f := out[i].field; len(f) > 200 {
			out[i].field = fmt.Sprintf("%s...(%d bytes)...%s", f[:80], len(f)-160, f[len(f)-80:])
		}
	}
	return out
}

func summarize(findings []policies.Finding) []want {
	var out []want
	for _, f := range findings {
		out = append(out, want{f.Severity, f.Code, f.Field})
	}
	return out
}

// nested returns obj with a chain of depth maps under keys n0, n1, ...,
// the innermost holding a podOverrides that sets serviceAccountName; the
// innermost map sits at depth depth below obj. It also returns the path of
// the innermost map and of the ServiceAccount field.
func nested(obj map[string]any, depth int) (_ map[string]any, innermost, sa string) {
	cur := obj
	var keys []string
	for i := range depth {
		k := fmt.Sprintf("n%d", i)
		keys = append(keys, k)
		next := map[string]any{}
		cur[k] = next
		cur = next
	}
	cur["podOverrides"] = map[string]any{"spec": map[string]any{"serviceAccountName": "other"}}
	innermost = strings.Join(keys, ".")
	return obj, innermost, innermost + ".podOverrides.spec.serviceAccountName"
}

// overrideAt returns an HdfsCluster whose name node podOverrides holds, under
// the key specKey, the map spec.
func overrideAt(specKey string, spec map[string]any) map[string]any {
	o := hdfsCluster()
	getMap(o, "spec", "nameNode", "podOverrides")[specKey] = spec
	return o
}

func TestValidate(t *testing.T) {
	const (
		roleSA      = "spec.nameNode.podOverrides.spec.serviceAccountName"
		groupSA     = "spec.nameNode.roleGroups.default.podOverrides.spec.serviceAccountName"
		stsSA       = "spec.template.spec.serviceAccountName"
		stsDeprecSA = "spec.template.spec.serviceAccount"
	)
	longCluster := "prod-" + strings.Repeat("a", 245)
	// The deepest podOverrides whose spec the walk still enters: spec at
	// maxWalkDepth. One level deeper, spec itself is past the bound.
	deepFound, _, deepFoundPath := nested(hdfsCluster(), maxWalkDepth-2)
	deepSpecPast, deepSpecPastInnermost, deepSpecPastPath := nested(hdfsCluster(), maxWalkDepth-1)
	deepHidden, deepHiddenPath, _ := nested(hdfsCluster(), maxWalkDepth+1)
	const nameNodeOverride = "spec.nameNode.podOverrides."

	tests := []struct {
		name     string
		gk       schema.GroupKind
		obj      map[string]any
		products *policies.ProductSelector // nil: policies.DefaultProducts()
		want     []want
	}{
		// Rule 1: product custom resources.
		{name: "CR without podOverrides", gk: hdfsGK, obj: hdfsCluster()},
		{name: "CR podOverrides without ServiceAccount", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "spec", "nameNode", "podOverrides", "spec")["nodeSelector"] = map[string]any{"disk": "ssd"}
			return o
		}()},
		{name: "CR role podOverrides sets another ServiceAccount", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "admin", "spec", "nameNode")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, roleSA)}},
		{name: "CR roleGroup podOverrides sets another ServiceAccount", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "admin", "spec", "nameNode", "roleGroups", "default")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, groupSA)}},
		{name: "CR deprecated serviceAccount", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccount", "admin", "spec", "dataNode")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, "spec.dataNode.podOverrides.spec.serviceAccount")}},
		{name: "CR redundant derived name", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", derivedProd, "spec", "nameNode", "roleGroups", "default")
			return o
		}(), want: []want{warn(ServiceAccountOverrideRedundant, groupSA)}},
		{name: "CR both fields, one redundant one overriding", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", derivedProd, "spec", "nameNode")
			setPodOverrideSA(o, "serviceAccount", "default", "spec", "nameNode")
			return o
		}(), want: []want{
			deny(ServiceAccountOverridden, "spec.nameNode.podOverrides.spec.serviceAccount"),
			warn(ServiceAccountOverrideRedundant, roleSA),
		}},
		{name: "CR empty string", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "", "spec", "nameNode")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, roleSA)}},
		{name: "CR non-string values", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", int64(5), "spec", "nameNode")
			setPodOverrideSA(o, "serviceAccount", map[string]any{"name": derivedProd}, "spec", "nameNode")
			return o
		}(), want: []want{
			deny(ServiceAccountOverridden, "spec.nameNode.podOverrides.spec.serviceAccount"),
			deny(ServiceAccountOverridden, roleSA),
		}},
		{name: "CR null is absent", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", nil, "spec", "nameNode")
			return o
		}()},
		{name: "CR findings in every role, sorted by path", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			for _, role := range []string{"nameNode", "journalNode", "dataNode"} {
				setPodOverrideSA(o, "serviceAccountName", "admin", "spec", role, "roleGroups", "default")
				setPodOverrideSA(o, "serviceAccountName", "admin", "spec", role)
			}
			return o
		}(), want: []want{
			deny(ServiceAccountOverridden, "spec.dataNode.podOverrides.spec.serviceAccountName"),
			deny(ServiceAccountOverridden, "spec.dataNode.roleGroups.default.podOverrides.spec.serviceAccountName"),
			deny(ServiceAccountOverridden, "spec.journalNode.podOverrides.spec.serviceAccountName"),
			deny(ServiceAccountOverridden, "spec.journalNode.roleGroups.default.podOverrides.spec.serviceAccountName"),
			deny(ServiceAccountOverridden, roleSA),
			deny(ServiceAccountOverridden, groupSA),
		}},
		{name: "CR podOverrides inside a list", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "spec")["extraRoles"] = []any{"x", map[string]any{
				"podOverrides": map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}},
			}}
			return o
		}(), want: []want{deny(ServiceAccountOverridden, "spec.extraRoles[1].podOverrides.spec.serviceAccountName")}},
		{name: "CR podOverrides at the top level", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, "podOverrides.spec.serviceAccountName")}},
		{name: "CR podOverrides at the depth bound", gk: hdfsGK, obj: deepFound,
			want: []want{deny(ServiceAccountOverridden, deepFoundPath)}},
		{name: "CR podOverrides whose spec is past the depth bound: the field is read, the spec denied as unsearched", gk: hdfsGK,
			obj: deepSpecPast, want: []want{
				deny(ServiceAccountWalkTooDeep, deepSpecPastInnermost+".podOverrides.spec"),
				deny(ServiceAccountOverridden, deepSpecPastPath),
			}},
		{name: "CR podOverrides past the depth bound is denied, not skipped", gk: hdfsGK, obj: deepHidden,
			want: []want{deny(ServiceAccountWalkTooDeep, deepHiddenPath)}},
		{name: "CR nested past the depth bound in a list", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			var v any = map[string]any{}
			for range maxWalkDepth {
				v = []any{v}
			}
			getMap(o, "spec")["deep"] = v
			return o
		}(), want: []want{deny(ServiceAccountWalkTooDeep, "spec.deep"+strings.Repeat("[0]", maxWalkDepth-1))}},

		// Rule 1, keys spelled as encoding/json reads them.
		{name: "CR podOverrides ServiceAccountName", gk: hdfsGK,
			obj:  overrideAt("spec", map[string]any{"ServiceAccountName": "admin"}),
			want: []want{deny(ServiceAccountOverridden, nameNodeOverride+"spec.ServiceAccountName")}},
		{name: "CR podOverrides SPEC", gk: hdfsGK,
			obj:  overrideAt("SPEC", map[string]any{"serviceAccountName": "admin"}),
			want: []want{deny(ServiceAccountOverridden, nameNodeOverride+"SPEC.serviceAccountName")}},
		{name: "CR podOverrides long s in serviceAccountName (U+017F)", gk: hdfsGK,
			obj:  overrideAt("spec", map[string]any{"ſerviceAccountName": "admin"}),
			want: []want{deny(ServiceAccountOverridden, nameNodeOverride+"spec.ſerviceAccountName")}},
		{name: "CR podOverrides long s in spec and the deprecated field upper-cased", gk: hdfsGK,
			obj:  overrideAt("ſpec", map[string]any{"SERVICEACCOUNT": "admin"}),
			want: []want{deny(ServiceAccountOverridden, nameNodeOverride+"ſpec.SERVICEACCOUNT")}},
		{name: "CR podOverrides every spelling is judged: derived, other, null", gk: hdfsGK, obj: func() map[string]any {
			o := overrideAt("spec", map[string]any{"serviceAccountName": derivedProd, "ServiceAccountName": "admin", "SERVICEACCOUNTNAME": nil})
			getMap(o, "spec", "nameNode", "podOverrides")["Spec"] = map[string]any{"serviceaccountname": "root"}
			return o
		}(), want: []want{
			deny(ServiceAccountOverridden, nameNodeOverride+"Spec.serviceaccountname"),
			deny(ServiceAccountOverridden, nameNodeOverride+"spec.ServiceAccountName"),
			warn(ServiceAccountOverrideRedundant, nameNodeOverride+"spec.serviceAccountName"),
		}},
		{name: "CR podOverrides keys that encoding/json does not read as the fields", gk: hdfsGK, obj: func() map[string]any {
			o := overrideAt("spec", map[string]any{
				"serviceAccountNames":  "admin",
				"service_account_name": "admin",
				"serviceAccountName ":  "admin",
				"ｓerviceAccountName":   "admin", // fullwidth s folds to fullwidth S only
				"serviceAccountNamе":   "admin", // Cyrillic e
				"serviceAccoun":        "admin",
			})
			getMap(o, "spec", "nameNode", "podOverrides")["specs"] = map[string]any{"serviceAccountName": "admin"}
			getMap(o, "spec", "nameNode", "podOverrides")["template"] = map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}}
			return o
		}()},
		{name: "CR PodOverrides is not podOverrides: the operator's typed decoding is case-sensitive", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "spec", "nameNode")["PodOverrides"] = map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}}
			return o
		}()},
		{name: "CR without a name denies even the would-be derived name", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			meta := getMap(o, "metadata")
			delete(meta, "name")
			meta["generateName"] = "prod-"
			setPodOverrideSA(o, "serviceAccountName", "hdfscluster-", "spec", "nameNode")
			return o
		}(), want: []want{deny(ServiceAccountOverridden, roleSA)}},
		{name: "CR of another product derives from its own kind", gk: schema.GroupKind{Group: "trino.kubedoop.dev", Kind: "TrinoCluster"}, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "trinocluster-prod", "spec", "nameNode")
			setPodOverrideSA(o, "serviceAccount", derivedProd, "spec", "nameNode")
			return o
		}(), want: []want{
			deny(ServiceAccountOverridden, "spec.nameNode.podOverrides.spec.serviceAccount"),
			warn(ServiceAccountOverrideRedundant, roleSA),
		}},
		{name: "CR with a long name, hashed derived name is redundant", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "metadata")["name"] = longCluster
			setPodOverrideSA(o, "serviceAccountName", DerivedServiceAccountName("HdfsCluster", longCluster), "spec", "nameNode")
			return o
		}(), want: []want{warn(ServiceAccountOverrideRedundant, roleSA)}},
		{name: "non-product group is not a product CR", gk: schema.GroupKind{Group: "example.com", Kind: "Widget"}, obj: func() map[string]any {
			o := hdfsCluster()
			setPodOverrideSA(o, "serviceAccountName", "admin", "spec", "nameNode")
			return o
		}()},
		{name: "configured product selector", gk: schema.GroupKind{Group: "data.example.com", Kind: "Widget"},
			products: &policies.ProductSelector{GroupSuffixes: []string{".example.com"}},
			obj: func() map[string]any {
				o := hdfsCluster()
				setPodOverrideSA(o, "serviceAccountName", "admin", "spec", "nameNode")
				return o
			}(), want: []want{deny(ServiceAccountOverridden, roleSA)}},
		{name: "configured product selector excludes the default", gk: hdfsGK,
			products: &policies.ProductSelector{GroupSuffixes: []string{".example.com"}},
			obj: func() map[string]any {
				o := hdfsCluster()
				setPodOverrideSA(o, "serviceAccountName", "admin", "spec", "nameNode")
				return o
			}()},
		{name: "CR hostile: podOverrides is a string", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "spec", "nameNode")["podOverrides"] = "serviceAccountName: admin"
			return o
		}()},
		{name: "CR hostile: podOverrides.spec is a list", gk: hdfsGK, obj: func() map[string]any {
			o := hdfsCluster()
			getMap(o, "spec", "nameNode", "podOverrides")["spec"] = []any{map[string]any{"serviceAccountName": "admin"}}
			return o
		}()},
		{name: "CR hostile: metadata and spec of the wrong type", gk: hdfsGK, obj: map[string]any{
			"metadata": "prod", "spec": []any{nil, 1.5, []any{}, map[string]any{"podOverrides": nil}},
		}},
		{name: "CR hostile: nil object", gk: hdfsGK, obj: nil},

		// Rule 2: workloads and Pods.
		{name: "StatefulSet owned by a product, another ServiceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet owned by a product, derived ServiceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", derivedProd)
			setPodSA(statefulSetGK, o, "serviceAccount", derivedProd)
			return o
		}()},
		{name: "StatefulSet as the API server sends it: both fields hold the same other name, reported once", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			setPodSA(statefulSetGK, o, "serviceAccount", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet with two different other names: both reported", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			setPodSA(statefulSetGK, o, "serviceAccount", "root")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsDeprecSA), deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet with equal non-string values is not deduplicated (and does not panic)", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", map[string]any{"a": 1})
			setPodSA(statefulSetGK, o, "serviceAccount", map[string]any{"a": 1})
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsDeprecSA), deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet owned by a product, no ServiceAccount", gk: statefulSetGK, obj: statefulSet()},
		{name: "StatefulSet owned by a product, empty and null are unset", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", "")
			setPodSA(statefulSetGK, o, "serviceAccount", nil)
			return o
		}()},
		{name: "StatefulSet deprecated serviceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", derivedProd)
			setPodSA(statefulSetGK, o, "serviceAccount", "default")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsDeprecSA)}},
		{name: "StatefulSet non-string ServiceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setPodSA(statefulSetGK, o, "serviceAccountName", true)
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet owned by a product with a long name, hashed ServiceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", longCluster, true))
			setPodSA(statefulSetGK, o, "serviceAccountName", DerivedServiceAccountName("HdfsCluster", longCluster))
			return o
		}()},
		{name: "StatefulSet owned by a product with a long name, naively cut ServiceAccount", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", longCluster, true))
			setPodSA(statefulSetGK, o, "serviceAccountName", ("hdfscluster-" + longCluster)[:253])
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet owned by another product kind", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, ownerRef("trino.kubedoop.dev/v1alpha1", "TrinoCluster", clusterName, true))
			setPodSA(statefulSetGK, o, "serviceAccountName", derivedProd)
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet with two product controllers must match both", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, hdfsOwner(), ownerRef("trino.kubedoop.dev/v1alpha1", "TrinoCluster", clusterName, true))
			setPodSA(statefulSetGK, o, "serviceAccountName", derivedProd)
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet owner reference without a name", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			ref := hdfsOwner()
			delete(ref, "name")
			setOwners(o, ref)
			setPodSA(statefulSetGK, o, "serviceAccountName", "hdfscluster-")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "Deployment owned by a product", gk: deploymentGK, obj: func() map[string]any {
			o := deployment()
			setPodSA(deploymentGK, o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "Job owned by a product", gk: jobGK, obj: func() map[string]any {
			o := job()
			setPodSA(jobGK, o, "serviceAccount", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsDeprecSA)}},
		{name: "CronJob owned by a product", gk: cronJobGK, obj: func() map[string]any {
			o := cronJob()
			setPodSA(cronJobGK, o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, "spec.jobTemplate.spec.template.spec.serviceAccountName")}},
		{name: "PodTemplate owned by a product", gk: schema.GroupKind{Kind: "PodTemplate"}, obj: map[string]any{
			"metadata": map[string]any{"name": "t", "ownerReferences": []any{hdfsOwner()}},
			"template": map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}},
		}, want: []want{deny(ServiceAccountMismatch, "template.spec.serviceAccountName")}},
		{name: "Pod owned directly by a product", gk: podGK, obj: func() map[string]any {
			o := pod()
			setPodSA(podGK, o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, "spec.serviceAccountName")}},
		{name: "Pod controlled by a ReplicaSet", gk: podGK, obj: func() map[string]any {
			o := pod()
			setOwners(o, ownerRef("apps/v1", "ReplicaSet", "prod-httpfs-5d8f7", true))
			setPodSA(podGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "Pod owner in the core group", gk: podGK, obj: func() map[string]any {
			o := pod()
			setOwners(o, ownerRef("v1", "HdfsCluster", clusterName, true))
			setPodSA(podGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "StatefulSet product owner without controller: true", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", clusterName, false))
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "StatefulSet product owner with controller: false", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			ref := hdfsOwner()
			ref["controller"] = false
			setOwners(o, ref)
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "StatefulSet hostile: ownerReferences is not a list", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			getMap(o, "metadata")["ownerReferences"] = map[string]any{"0": hdfsOwner()}
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "StatefulSet hostile: owner reference fields of the wrong type", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, "hdfs", nil, 7, map[string]any{"controller": "true", "apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": clusterName},
				map[string]any{"controller": true, "apiVersion": []any{"hdfs.kubedoop.dev/v1alpha1"}, "kind": "HdfsCluster", "name": clusterName})
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}()},
		{name: "StatefulSet hostile: kind and name of the wrong type", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			setOwners(o, map[string]any{"controller": true, "apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": 1, "name": []any{}})
			setPodSA(statefulSetGK, o, "serviceAccountName", "admin")
			return o
		}(), want: []want{deny(ServiceAccountMismatch, stsSA)}},
		{name: "StatefulSet hostile: template is a string", gk: statefulSetGK, obj: func() map[string]any {
			o := statefulSet()
			getMap(o, "spec")["template"] = "spec: {serviceAccountName: admin}"
			return o
		}()},
		{name: "StatefulSet hostile: nil object", gk: statefulSetGK, obj: nil},
		{name: "kind that runs no pods", gk: schema.GroupKind{Kind: "ConfigMap"}, obj: map[string]any{
			"metadata": map[string]any{"ownerReferences": []any{hdfsOwner()}},
			"spec":     map[string]any{"serviceAccountName": "admin"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			products := policies.DefaultProducts()
			if tc.products != nil {
				products = *tc.products
			}
			got := summarize(Validate(tc.gk, tc.obj, products, derivedNaming))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings\n got %v\nwant %v", abbreviate(got), abbreviate(tc.want))
			}
		})
	}
}

// TestValidateMessagesAndEvidence pins the wording that names the derived
// ServiceAccount, and checks that Evidence fingerprints the value that was set.
func TestValidateMessagesAndEvidence(t *testing.T) {
	cr := hdfsCluster()
	setPodOverrideSA(cr, "serviceAccountName", "admin", "spec", "nameNode")
	setPodOverrideSA(cr, "serviceAccount", derivedProd, "spec", "nameNode")
	sts := statefulSet()
	setPodSA(statefulSetGK, sts, "serviceAccountName", "admin")
	unnamed := hdfsCluster()
	delete(getMap(unnamed, "metadata"), "name")
	setPodOverrideSA(unnamed, "serviceAccountName", "admin", "spec", "nameNode")

	tests := []struct {
		name     string
		findings []policies.Finding
		messages []string
		evidence []string
	}{
		{
			name:     "product CR",
			findings: Validate(hdfsGK, cr, policies.DefaultProducts(), derivedNaming),
			messages: []string{
				msgOverrideRedundant,
				`podOverrides may not change the workload ServiceAccount; this HdfsCluster's pods run as "hdfscluster-prod" (remove the field)`,
			},
			evidence: []string{derivedProd, "admin"},
		},
		{
			name:     "product CR without a name",
			findings: Validate(hdfsGK, unnamed, policies.DefaultProducts(), derivedNaming),
			messages: []string{
				"podOverrides may not change the workload ServiceAccount; this HdfsCluster has no metadata.name yet, " +
					"so the ServiceAccount its pods will run as cannot be known (remove the field)",
			},
			evidence: []string{"admin"},
		},
		{
			name:     "StatefulSet",
			findings: Validate(statefulSetGK, sts, policies.DefaultProducts(), derivedNaming),
			messages: []string{
				`pods controlled by HdfsCluster "prod" run as the ServiceAccount its operator gives them, "hdfscluster-prod"; set the field to that name or remove it`,
			},
			evidence: []string{"admin"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.findings) != len(tc.messages) {
				t.Fatalf("got %d findings, want %d: %+v", len(tc.findings), len(tc.messages), tc.findings)
			}
			for i, f := range tc.findings {
				if f.Message != tc.messages[i] {
					t.Errorf("finding %d message\n got %q\nwant %q", i, f.Message, tc.messages[i])
				}
				if f.Evidence != policies.Fingerprint(tc.evidence[i]) {
					t.Errorf("finding %d evidence is not the fingerprint of %q", i, tc.evidence[i])
				}
			}
		})
	}
}

// TestEvidenceOfNonStrings checks that a non-string value gets a stable
// evidence that differs from the string with the same text.
func TestEvidenceOfNonStrings(t *testing.T) {
	a := evidenceOf(map[string]any{"b": 1, "a": []any{"x"}})
	for range 10 {
		if b := evidenceOf(map[string]any{"a": []any{"x"}, "b": 1}); b != a {
			t.Fatalf("evidence not deterministic: %q vs %q", a, b)
		}
	}
	if evidenceOf(int64(1)) == evidenceOf("1") {
		t.Error("the number 1 and the string \"1\" have the same evidence")
	}
}

// TestValidateSelfReferencingMap checks that the depth bound ends the walk of
// a map that contains itself, which only Go code can build, and denies it
// once, at the first level past the bound, with a finding that never
// ratchets.
func TestValidateSelfReferencingMap(t *testing.T) {
	obj := hdfsCluster()
	obj["a"] = obj // sorts first, so the walk goes down it first
	findings := Validate(hdfsGK, obj, policies.DefaultProducts(), derivedNaming)
	want := []want{deny(ServiceAccountWalkTooDeep, strings.TrimSuffix(strings.Repeat("a.", maxWalkDepth+1), "."))}
	if got := summarize(findings); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings\n got %v\nwant %v", abbreviate(got), abbreviate(want))
	}
	if findings[0].Ratchets() {
		t.Error("a walk limit ratchets; it must deny an UPDATE as it denies a CREATE")
	}
}

// TestWalkCoversEveryDecodableObject checks the claim behind maxWalkDepth
// against the decoders themselves: the deepest product custom resource that
// the API server's decoder (sigs.k8s.io/json) and the webhook's
// (encoding/json) accept, with a podOverrides ServiceAccount at the very
// bottom, is walked to the bottom and denied for the ServiceAccount, not for
// its depth; and one level more is refused by both decoders, so no decoded
// object reaches the bound.
func TestWalkCoversEveryDecodableObject(t *testing.T) {
	// The object is depth 0 and spec depth 1; chain maps under "n" follow,
	// then podOverrides, and its spec lands at depth 2+chain+1.
	doc := func(chain int) []byte {
		return []byte(`{"metadata":{"name":"prod"},"spec":` + strings.Repeat(`{"n":`, chain) +
			`{"podOverrides":{"spec":{"serviceAccountName":"admin"}}}` + strings.Repeat(`}`, chain) + `}`)
	}
	const deepest = 9999 // the 10000th level of nesting, counting the object
	chain := deepest - 3
	decoders := map[string]func([]byte, any) error{
		"encoding/json":    json.Unmarshal,
		"sigs.k8s.io/json": func(b []byte, v any) error { return kjson.UnmarshalCaseSensitivePreserveInts(b, v) },
	}
	for name, decode := range decoders {
		var obj map[string]any
		if err := decode(doc(chain), &obj); err != nil {
			t.Fatalf("%s refuses the deepest object: %v", name, err)
		}
		want := []want{deny(ServiceAccountOverridden, "spec"+strings.Repeat(".n", chain)+".podOverrides.spec.serviceAccountName")}
		if got := summarize(Validate(hdfsGK, obj, policies.DefaultProducts(), derivedNaming)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: findings\n got %v\nwant %v", name, abbreviate(got), abbreviate(want))
		}
		if err := decode(doc(chain+1), &obj); err == nil {
			t.Errorf("%s accepts nesting one level deeper; maxWalkDepth must follow it", name)
		}
	}
	if deepest > maxWalkDepth {
		t.Errorf("maxWalkDepth %d is shallower than a decodable object (%d)", maxWalkDepth, deepest)
	}
}
