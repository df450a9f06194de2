package serviceaccount

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// evalFixture evaluates a fixture as the webhook would in the default
// configuration (the Released preset): its group and kind come from its own
// apiVersion and kind.
func evalFixture(obj map[string]any) []policies.Finding {
	return Validate(fixtureGK(obj), obj, policies.DefaultProducts(), releasedNaming)
}

var releasedNaming, _ = Preset(PresetReleased)

// releasedProd is the ServiceAccount hdfs-operator 0.3.0 gives the pods of
// HdfsCluster "prod" (internal/common/util.go CreateServiceAccountName).
const releasedProd = "prod-sa"

// exampleAPIVersion and exampleKind are a product in no preset's table, as a
// future operator's would be: its name is derived (operator-go after
// e1f8813), so the fixtures of the hashed name use it.
const (
	exampleAPIVersion = "example.kubedoop.dev/v1alpha1"
	exampleKind       = "ExampleCluster"
)

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
	// ownedSA makes the object controlled by the product <product>.kubedoop.dev
	// kind "prod", with the pod ServiceAccount sa ("" sets none).
	ownedSA := func(product, kind, sa string) func(map[string]any) {
		return func(obj map[string]any) {
			setOwners(obj, ownerRef(product+".kubedoop.dev/v1alpha1", kind, clusterName, true))
			if sa != "" {
				setPodSA(fixtureGK(obj), obj, "serviceAccountName", sa)
			}
		}
	}
	// productCR is the HdfsCluster shape as another product's cluster.
	productCR := func(product, kind string) func() map[string]any {
		return func() map[string]any {
			obj := hdfsCluster()
			obj["apiVersion"], obj["kind"] = product+".kubedoop.dev/v1alpha1", kind
			return obj
		}
	}
	longOwner := func(sa string) func(map[string]any) {
		return func(obj map[string]any) {
			setOwners(obj, ownerRef(exampleAPIVersion, exampleKind, longClusterName, true))
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
			overrideSA("serviceAccountName", releasedProd, "spec", "nameNode")),
		fx("hdfscluster-rolegroup-podoverrides-derived-redundant", golden.Pass, hdfsCluster,
			overrideSA("serviceAccountName", releasedProd, "spec", "dataNode", "roleGroups", "default")),
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
			spec["serviceAccountName"] = releasedProd
			spec["ſerviceAccountName"] = releasedProd
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
		fx("examplecluster-long-name-podoverrides-hashed-redundant", golden.Pass, hdfsCluster, func(obj map[string]any) {
			obj["apiVersion"], obj["kind"] = exampleAPIVersion, exampleKind
			getMap(obj, "metadata")["name"] = longClusterName
			setPodOverrideSA(obj, "serviceAccountName", DerivedServiceAccountName(exampleKind, longClusterName), "spec", "nameNode")
		}),

		// The workloads of the released operators, as their code builds them
		// (operator-go v0.12.x gives each a controller ownerReference to the
		// cluster: pkg/client/client.go SetOwnerReference @ db6d49a, v0.12.6).
		// kafka-operator 0.3.0 (317361a) internal/controller/util.go: the
		// cluster's name.
		fx("released-kafka-statefulset", golden.Pass, statefulSet, ownedSA("kafka", "KafkaCluster", "prod")),
		fx("released-kafka-statefulset-other", golden.Fail, statefulSet, ownedSA("kafka", "KafkaCluster", "prod-sa")),
		// zookeeper-operator 0.3.0 (84b70de) server/statefulset.go:
		// DefaultProductName.
		fx("released-zookeeper-statefulset", golden.Pass, statefulSet, ownedSA("zookeeper", "ZookeeperCluster", "zookeeper")),
		fx("released-zookeeper-statefulset-cluster-name", golden.Fail, statefulSet, ownedSA("zookeeper", "ZookeeperCluster", "prod")),
		// nifi-operator 0.4.0-dev (782c3fd) node/statefulset.go
		// NifiServiceAccountName.
		fx("released-nifi-statefulset", golden.Pass, statefulSet, ownedSA("nifi", "NifiCluster", "prod-nifi")),
		// dolphinscheduler-operator 0.4.0 (944f5c2) internal/common/workload.go
		// serviceAccount(); its init-db Job (job_initscript.go) sets none.
		fx("released-dolphinscheduler-deployment", golden.Pass, deployment, ownedSA("dolphinscheduler", "DolphinschedulerCluster", "dolphinscheduler")),
		fx("released-dolphinscheduler-initdb-job", golden.Pass, job, ownedSA("dolphinscheduler", "DolphinschedulerCluster", "")),
		// trino-operator 0.2.0 (17ee813) sets none: its pods run as the
		// namespace's default, which the ServiceAccount admission plugin
		// writes into a pod that names none.
		fx("released-trino-statefulset", golden.Pass, statefulSet, ownedSA("trino", "TrinoCluster", "")),
		fx("released-trino-pod-default", golden.Pass, pod, ownedSA("trino", "TrinoCluster", DefaultServiceAccount)),
		fx("released-trino-statefulset-other", golden.Fail, statefulSet, ownedSA("trino", "TrinoCluster", "admin")),
		// For an operator that sets none, any other account in podOverrides
		// is an override.
		fx("trinocluster-podoverrides-serviceaccountname", golden.Fail, productCR("trino", "TrinoCluster"),
			overrideSA("serviceAccountName", "admin", "spec", "coordinators", "roleGroups", "default")),
		fx("trinocluster-podoverrides-default-redundant", golden.Pass, productCR("trino", "TrinoCluster"),
			overrideSA("serviceAccountName", DefaultServiceAccount, "spec", "coordinators")),
		fx("kafkacluster-podoverrides-cluster-name-redundant", golden.Pass, productCR("kafka", "KafkaCluster"),
			overrideSA("serviceAccountName", "prod", "spec", "brokers")),
		fx("zookeepercluster-podoverrides-serviceaccountname", golden.Fail, productCR("zookeeper", "ZookeeperCluster"),
			overrideSA("serviceAccountName", "prod", "spec", "servers")),

		// Workloads and Pods controlled by HdfsCluster "prod".
		fx("statefulset-owned-no-serviceaccount", golden.Pass, statefulSet, nil),
		fx("statefulset-owned-derived", golden.Pass, statefulSet, podSA("serviceAccountName", releasedProd)),
		fx("statefulset-owned-other", golden.Fail, statefulSet, podSA("serviceAccountName", "admin")),
		fx("statefulset-owned-deprecated-other", golden.Fail, statefulSet, podSA("serviceAccount", "admin")),
		fx("statefulset-owned-long-name-hashed", golden.Pass, statefulSet,
			longOwner(DerivedServiceAccountName(exampleKind, longClusterName))),
		fx("statefulset-owned-long-name-naively-cut", golden.Fail, statefulSet,
			longOwner(("examplecluster-" + longClusterName)[:maxServiceAccountNameLen])),
		// Under the Released preset the name operator-go would derive is
		// not the one hdfs-operator 0.3.0 runs its pods as.
		fx("statefulset-owned-operator-go-derived-name", golden.Fail, statefulSet, podSA("serviceAccountName", "hdfscluster-prod")),
		fx("statefulset-not-controller-other", golden.Pass, statefulSet, func(obj map[string]any) {
			setOwners(obj, ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", clusterName, false))
			setPodSA(statefulSetGK, obj, "serviceAccountName", "admin")
		}),
		fx("deployment-owned-derived", golden.Pass, deployment, podSA("serviceAccountName", releasedProd)),
		fx("deployment-owned-other", golden.Fail, deployment, podSA("serviceAccountName", "admin")),
		fx("job-owned-derived", golden.Pass, job, podSA("serviceAccountName", releasedProd)),
		fx("job-owned-other", golden.Fail, job, podSA("serviceAccountName", "admin")),
		fx("cronjob-owned-derived", golden.Pass, cronJob, podSA("serviceAccountName", releasedProd)),
		fx("cronjob-owned-other", golden.Fail, cronJob, podSA("serviceAccountName", "admin")),
		fx("pod-owned-derived", golden.Pass, pod, podSA("serviceAccountName", releasedProd)),
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
