package serviceaccount

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestReleasedPreset: each released operator's pods run as the account its
// code names (naming.go cites the file and commit of each).
func TestReleasedPreset(t *testing.T) {
	naming, ok := Preset(PresetReleased)
	if !ok {
		t.Fatal("no Released preset")
	}
	for _, tc := range []struct {
		group, kind, want string
	}{
		{"hdfs.kubedoop.dev", "HdfsCluster", "prod-sa"},
		{"kafka.kubedoop.dev", "KafkaCluster", "prod"},
		{"zookeeper.kubedoop.dev", "ZookeeperCluster", "zookeeper"},
		{"nifi.kubedoop.dev", "NifiCluster", "prod-nifi"},
		{"dolphinscheduler.kubedoop.dev", "DolphinschedulerCluster", "dolphinscheduler"},
		{"trino.kubedoop.dev", "TrinoCluster", "default"},
		{"hive.kubedoop.dev", "HiveMetastore", "default"},
		{"doris.kubedoop.dev", "DorisCluster", "default"},
		{"airflow.kubedoop.dev", "AirflowCluster", "default"},
		{"superset.kubedoop.dev", "SupersetCluster", "default"},
		{"spark.kubedoop.dev", "SparkHistoryServer", "default"},
		{"hbase.kubedoop.dev", "HbaseCluster", "default"},
		// Not in the table: operator-go's derived rule.
		{"example.kubedoop.dev", "ExampleCluster", "examplecluster-prod"},
		// The group decides as much as the kind.
		{"other.kubedoop.dev", "HdfsCluster", "hdfscluster-prod"},
	} {
		if got := naming.ServiceAccount(schema.GroupKind{Group: tc.group, Kind: tc.kind}, "prod"); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.group, tc.kind, got, tc.want)
		}
	}
	// A caller may change the map it is given without changing the preset.
	naming.Products[schema.GroupKind{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster"}] = Rule{Kind: Derived}
	again, _ := Preset(PresetReleased)
	if got := again.ServiceAccount(hdfsGK, "prod"); got != "prod-sa" {
		t.Errorf("the preset changed with a copy: %q", got)
	}
}

func TestDerivedPreset(t *testing.T) {
	naming, _ := Preset(PresetDerived)
	long := strings.Repeat("a", 250)
	for _, gk := range []schema.GroupKind{hdfsGK, {Group: "trino.kubedoop.dev", Kind: "TrinoCluster"}} {
		if got, want := naming.ServiceAccount(gk, long), DerivedServiceAccountName(gk.Kind, long); got != want {
			t.Errorf("%v: %q, want the derived %q", gk, got, want)
		}
	}
	if _, ok := Preset("Latest"); ok {
		t.Error("an unknown preset was found")
	}
}

func TestNamedRule(t *testing.T) {
	for _, tc := range []struct{ name, cluster, want string }{
		{"{name}-sa", "prod", "prod-sa"},
		{"{name}", "prod", "prod"},
		{"fixed", "prod", "fixed"},
		{"{name}-{name}", "a", "a-a"},
		// Never hashed: the operator builds the name as it is.
		{"{name}-sa", strings.Repeat("x", 252), strings.Repeat("x", 252) + "-sa"},
	} {
		if got := (Rule{Kind: Named, Name: tc.name}).ServiceAccount("Kind", tc.cluster); got != tc.want {
			t.Errorf("%q of %q: %q, want %q", tc.name, tc.cluster, got, tc.want)
		}
	}
}
