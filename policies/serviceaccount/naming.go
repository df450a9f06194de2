// Which ServiceAccount an operator release gives a product cluster's pods.
//
// Reads: nothing from an object; callers pass the product's group and kind
// and the cluster (custom resource) name.
// Allows: any input. A Named rule's name is returned as the operator would
// build it, even when that is no valid ServiceAccount name (the operator
// would fail to create it; matching it is what counts here).

package serviceaccount

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RuleKind is how an operator release names the ServiceAccount.
type RuleKind uint8

const (
	// Derived is operator-go's ServiceAccountResourceName, after commit
	// e1f8813 (not in any release as of 2026-12): "<lowercased
	// kind>-<cluster>", hashed past 253 bytes (DerivedServiceAccountName).
	Derived RuleKind = iota
	// Named is a name the operator builds itself: Rule.Name, with
	// ClusterPlaceholder standing for the cluster's name.
	Named
)

// ClusterPlaceholder stands for the cluster's name in a Named rule's name.
const ClusterPlaceholder = "{name}"

// DefaultServiceAccount is the account the API server's ServiceAccount
// admission plugin gives a pod that names none: what the pods of an
// operator that sets no ServiceAccount run as.
const DefaultServiceAccount = "default"

// Rule is how one operator release names the ServiceAccount of its product
// clusters' pods.
type Rule struct {
	Kind RuleKind
	// Name is the Named rule's name, e.g. "{name}-sa" or "zookeeper".
	Name string
}

// ServiceAccount returns the ServiceAccount that the pods of the cluster of
// the given kind run as under r.
func (r Rule) ServiceAccount(kind, cluster string) string {
	if r.Kind == Derived {
		return DerivedServiceAccountName(kind, cluster)
	}
	return strings.ReplaceAll(r.Name, ClusterPlaceholder, cluster)
}

// Naming says, per product (API group and kind), which rule its operator
// release follows; Fallback is the rule of every product not listed. The
// zero Naming derives every name (Derived).
type Naming struct {
	Products map[schema.GroupKind]Rule
	Fallback Rule
}

// RuleFor returns the rule of the product gk.
func (n Naming) RuleFor(gk schema.GroupKind) Rule {
	if r, ok := n.Products[gk]; ok {
		return r
	}
	return n.Fallback
}

// ServiceAccount returns the ServiceAccount the pods of the cluster named
// cluster, of the product gk, run as.
func (n Naming) ServiceAccount(gk schema.GroupKind, cluster string) string {
	return n.RuleFor(gk).ServiceAccount(gk.Kind, cluster)
}

// Presets, by the name the configuration uses.
const (
	// PresetReleased is the kubedoop operators as released on operator-go
	// v0.12.x (0.3.0 and 0.4.0 lines), each naming its ServiceAccount
	// itself; products not in the table follow the derived rule.
	PresetReleased = "Released"
	// PresetDerived is operator-go after e1f8813: every product derives.
	PresetDerived = "Derived"
)

// releasedOperators are the kubedoop operators on operator-go v0.12.x and
// the ServiceAccount each puts into its workloads' pod templates (upstream,
// checked at the release tags and at main as of 2026-12):
//
//   - hdfs-operator 0.3.0 (1580d8b) internal/common/util.go
//     CreateServiceAccountName: "<name>-sa";
//   - kafka-operator 0.3.0 (317361a) internal/controller/util.go
//     ServiceAccountName: the cluster's name;
//   - zookeeper-operator 0.3.0 (84b70de) server/statefulset.go:
//     DefaultProductName, "zookeeper";
//   - nifi-operator 0.4.0-dev (782c3fd) node/statefulset.go
//     NifiServiceAccountName: "<name>-nifi";
//   - dolphinscheduler-operator 0.4.0 (944f5c2) internal/common/workload.go:
//     DefaultProductName, "dolphinscheduler";
//   - trino 0.2.0, hive, airflow, superset, spark-k8s, hbase 0.3.0 and doris
//     0.4.0-dev set none, so their pods run as the namespace's "default".
var releasedOperators = map[schema.GroupKind]Rule{
	{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster"}:                         {Kind: Named, Name: ClusterPlaceholder + "-sa"},
	{Group: "kafka.kubedoop.dev", Kind: "KafkaCluster"}:                       {Kind: Named, Name: ClusterPlaceholder},
	{Group: "zookeeper.kubedoop.dev", Kind: "ZookeeperCluster"}:               {Kind: Named, Name: "zookeeper"},
	{Group: "nifi.kubedoop.dev", Kind: "NifiCluster"}:                         {Kind: Named, Name: ClusterPlaceholder + "-nifi"},
	{Group: "dolphinscheduler.kubedoop.dev", Kind: "DolphinschedulerCluster"}: {Kind: Named, Name: "dolphinscheduler"},
	{Group: "trino.kubedoop.dev", Kind: "TrinoCluster"}:                       {Kind: Named, Name: DefaultServiceAccount},
	{Group: "hive.kubedoop.dev", Kind: "HiveMetastore"}:                       {Kind: Named, Name: DefaultServiceAccount},
	{Group: "doris.kubedoop.dev", Kind: "DorisCluster"}:                       {Kind: Named, Name: DefaultServiceAccount},
	{Group: "airflow.kubedoop.dev", Kind: "AirflowCluster"}:                   {Kind: Named, Name: DefaultServiceAccount},
	{Group: "superset.kubedoop.dev", Kind: "SupersetCluster"}:                 {Kind: Named, Name: DefaultServiceAccount},
	{Group: "spark.kubedoop.dev", Kind: "SparkHistoryServer"}:                 {Kind: Named, Name: DefaultServiceAccount},
	{Group: "hbase.kubedoop.dev", Kind: "HbaseCluster"}:                       {Kind: Named, Name: DefaultServiceAccount},
}

// Preset returns the naming of the preset called name, and whether there is
// one. The map is a copy the caller may change.
func Preset(name string) (Naming, bool) {
	switch name {
	case PresetReleased:
		products := make(map[schema.GroupKind]Rule, len(releasedOperators))
		for gk, r := range releasedOperators {
			products[gk] = r
		}
		return Naming{Products: products, Fallback: Rule{Kind: Derived}}, true
	case PresetDerived:
		return Naming{Fallback: Rule{Kind: Derived}}, true
	}
	return Naming{}, false
}
