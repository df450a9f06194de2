package serviceaccount

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// evalFixture evaluates a fixture as the webhook would: its group and kind
// come from its own apiVersion and kind.
func evalFixture(obj map[string]any) []policies.Finding {
	return Validate(fixtureGK(obj), obj, policies.DefaultProducts)
}

func fixtureGK(obj map[string]any) schema.GroupKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
}

// longClusterName is a valid 250-byte DNS subdomain: the derived
// ServiceAccount name of an HdfsCluster so named is over 253 bytes and hashed.
var longClusterName = "prod-" + strings.Repeat("a", 245)

func fixtures() []golden.Fixture {
	fx := func(name string, expect golden.Outcome, base func() map[string]any, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(base, tweak)}
	}
	podSA := func(field string, value any) func(map[string]any) {
		return func(obj map[string]any) { setPodSA(fixtureGK(obj), obj, field, value) }
	}
	overrideSA := func(field string, value any, keys ...string) func(map[string]any) {
		return func(obj map[string]any) { setPodOverrideSA(obj, field, value, keys...) }
	}
	longOwner := func(sa string) func(map[string]any) {
		return func(obj map[string]any) {
			setOwners(obj, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", longClusterName, true))
			setPodSA(fixtureGK(obj), obj, "serviceAccountName", sa)
		}
	}

	return []golden.Fixture{
		// Product custom resources.
		fx("hdfscluster-minimal", golden.Pass, hdfsCluster, nil),
		fx("hdfscluster-role-podoverrides-without-serviceaccount", golden.Pass, hdfsCluster, func(obj map[string]any) {
			getMap(obj, "spec", "nameNode", "podOverrides", "spec")["nodeSelector"] = map[string]any{"disk": "ssd"}
		}),
		fx("hdfscluster-role-podoverrides-derived-redundant", golden.Pass, hdfsCluster,
			overrideSA("serviceAccountName", derivedProd, "spec", "nameNode")),
		fx("hdfscluster-rolegroup-podoverrides-derived-redundant", golden.Pass, hdfsCluster,
			overrideSA("serviceAccountName", derivedProd, "spec", "dataNode", "roleGroups", "default")),
		fx("hdfscluster-role-podoverrides-serviceaccountname", golden.Fail, hdfsCluster,
			overrideSA("serviceAccountName", "admin", "spec", "nameNode")),
		fx("hdfscluster-rolegroup-podoverrides-serviceaccountname", golden.Fail, hdfsCluster,
			overrideSA("serviceAccountName", "admin", "spec", "journalNode", "roleGroups", "default")),
		fx("hdfscluster-rolegroup-podoverrides-deprecated-serviceaccount", golden.Fail, hdfsCluster,
			overrideSA("serviceAccount", "default", "spec", "dataNode", "roleGroups", "default")),
		fx("hdfscluster-generatename-podoverrides", golden.Fail, hdfsCluster, func(obj map[string]any) {
			meta := getMap(obj, "metadata")
			delete(meta, "name")
			meta["generateName"] = "prod-"
			setPodOverrideSA(obj, "serviceAccountName", "admin", "spec", "nameNode")
		}),
		// Keys as the operator's encoding/json reads them.
		fx("hdfscluster-podoverrides-serviceaccountname-capitalised", golden.Fail, hdfsCluster,
			overrideSA("ServiceAccountName", "admin", "spec", "nameNode")),
		fx("hdfscluster-podoverrides-spec-uppercase", golden.Fail, hdfsCluster, func(obj map[string]any) {
			getMap(obj, "spec", "dataNode", "roleGroups", "default", "podOverrides", "SPEC")["serviceAccountName"] = "admin"
		}),
		fx("hdfscluster-podoverrides-serviceaccountname-long-s", golden.Fail, hdfsCluster,
			overrideSA("ſerviceAccountName", "admin", "spec", "journalNode")),
		fx("hdfscluster-podoverrides-long-s-spec-deprecated-uppercase", golden.Fail, hdfsCluster, func(obj map[string]any) {
			getMap(obj, "spec", "nameNode", "roleGroups", "default", "podOverrides", "ſpec")["SERVICEACCOUNT"] = "admin"
		}),
		fx("hdfscluster-podoverrides-spellings-derived-redundant", golden.Pass, hdfsCluster, func(obj map[string]any) {
			spec := getMap(obj, "spec", "nameNode", "podOverrides", "Spec")
			spec["serviceAccountName"] = derivedProd
			spec["ſerviceAccountName"] = derivedProd
		}),
		fx("hdfscluster-podoverrides-unrelated-keys", golden.Pass, hdfsCluster, func(obj map[string]any) {
			override := getMap(obj, "spec", "nameNode", "podOverrides")
			override["spec"] = map[string]any{
				"serviceAccountNames":  "admin",
				"service_account_name": "admin",
				"ｓerviceAccountName":   "admin", // fullwidth s: not in the folding orbit of s
				"serviceAccountNamе":   "admin", // Cyrillic e
				"nodeSelector":         map[string]any{"serviceAccountName": "admin"},
			}
			override["specs"] = map[string]any{"serviceAccountName": "admin"}
			override["template"] = map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}}
		}),
		fx("hdfscluster-capitalised-podoverrides-key-not-read", golden.Pass, hdfsCluster, func(obj map[string]any) {
			getMap(obj, "spec", "nameNode", "PodOverrides", "spec")["serviceAccountName"] = "admin"
		}),

		// Nesting: deeper than the walk of the first release went (64).
		fx("hdfscluster-podoverrides-nested-100-deep", golden.Fail, hdfsCluster, func(obj map[string]any) {
			cur := getMap(obj, "spec", "nameNode", "config")
			for range 100 {
				cur = getMap(cur, "nested")
			}
			cur["podOverrides"] = map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}}
		}),
		fx("hdfscluster-long-name-podoverrides-hashed-redundant", golden.Pass, hdfsCluster, func(obj map[string]any) {
			getMap(obj, "metadata")["name"] = longClusterName
			setPodOverrideSA(obj, "serviceAccountName", DerivedServiceAccountName("HdfsCluster", longClusterName), "spec", "nameNode")
		}),

		// Workloads and Pods controlled by HdfsCluster "prod".
		fx("statefulset-owned-no-serviceaccount", golden.Pass, statefulSet, nil),
		fx("statefulset-owned-derived", golden.Pass, statefulSet, podSA("serviceAccountName", derivedProd)),
		fx("statefulset-owned-other", golden.Fail, statefulSet, podSA("serviceAccountName", "admin")),
		fx("statefulset-owned-deprecated-other", golden.Fail, statefulSet, podSA("serviceAccount", "admin")),
		fx("statefulset-owned-long-name-hashed", golden.Pass, statefulSet,
			longOwner(DerivedServiceAccountName("HdfsCluster", longClusterName))),
		fx("statefulset-owned-long-name-naively-cut", golden.Fail, statefulSet,
			longOwner(("hdfscluster-" + longClusterName)[:maxServiceAccountNameLen])),
		fx("statefulset-not-controller-other", golden.Pass, statefulSet, func(obj map[string]any) {
			setOwners(obj, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", clusterName, false))
			setPodSA(statefulSetGK, obj, "serviceAccountName", "admin")
		}),
		fx("deployment-owned-derived", golden.Pass, deployment, podSA("serviceAccountName", derivedProd)),
		fx("deployment-owned-other", golden.Fail, deployment, podSA("serviceAccountName", "admin")),
		fx("job-owned-derived", golden.Pass, job, podSA("serviceAccountName", derivedProd)),
		fx("job-owned-other", golden.Fail, job, podSA("serviceAccountName", "admin")),
		fx("cronjob-owned-derived", golden.Pass, cronJob, podSA("serviceAccountName", derivedProd)),
		fx("cronjob-owned-other", golden.Fail, cronJob, podSA("serviceAccountName", "admin")),
		fx("pod-owned-derived", golden.Pass, pod, podSA("serviceAccountName", derivedProd)),
		fx("pod-owned-other", golden.Fail, pod, podSA("serviceAccountName", "admin")),
		fx("pod-replicaset-controller-other", golden.Pass, pod, func(obj map[string]any) {
			setOwners(obj, ownerRef("apps/v1", "ReplicaSet", "prod-httpfs-5d8f7", true))
			setPodSA(podGK, obj, "serviceAccountName", "admin")
		}),
	}
}

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", fixtures(), evalFixture)
}
