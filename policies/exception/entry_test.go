package exception

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docExample is the Exception of api/exceptions/v1alpha1's package
// documentation, as that package's tests hold it.
var docExample = func() string {
	raw, err := os.ReadFile("../../api/exceptions/v1alpha1/testdata/exception.yaml")
	if err != nil {
		panic(err)
	}
	return string(raw)
}()

func decodeYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestFromObject(t *testing.T) {
	e, err := FromObject(decodeYAML(t, docExample))
	if err != nil {
		t.Fatal(err)
	}
	if e.Key() != "team-a/hdfs-legacy-scope" || !e.Namespaced() || e.Spec.Match[0].Kinds[0].Group != "apps" ||
		e.Spec.Expires.UTC().Format("2006-01-02") != "2027-01-15" || e.Spec.Reason == "" {
		t.Errorf("FromObject() = %+v", e)
	}
	if findings := Validate(e, e.Spec.Expires.Add(-24*3600e9), rules()); len(findings) != 0 {
		t.Errorf("the documented example draws %v", findings)
	}

	clusterDoc := strings.Replace(strings.Replace(docExample, "kind: Exception", "kind: ClusterException", 1), "  namespace: team-a\n", "", 1)
	c, err := FromObject(decodeYAML(t, clusterDoc))
	if err != nil {
		t.Fatal(err)
	}
	if c.Key() != "hdfs-legacy-scope" || c.Namespaced() || !reflect.DeepEqual(c.Spec, e.Spec) {
		t.Errorf("FromObject(ClusterException) = %+v", c)
	}
}

// TestFromObjectRefuses: what is no exception, or does not decode into
// one, is an error that quotes nothing of the object.
func TestFromObjectRefuses(t *testing.T) {
	const marker = "MARKERfr0m"
	for name, doc := range map[string]string{
		"another group":                   strings.Replace(docExample, "gatehouse.dev/v1alpha1", "example.com/v1alpha1", 1),
		"another version":                 strings.Replace(docExample, "v1alpha1", "v1", 1),
		"another kind":                    strings.Replace(docExample, "kind: Exception", "kind: "+marker, 1),
		"an Exception without namespace":  strings.Replace(docExample, "  namespace: team-a\n", "", 1),
		"a ClusterException in namespace": strings.Replace(docExample, "kind: Exception", "kind: ClusterException", 1),
		"an expiry that is no time":       strings.Replace(docExample, `"2027-01-15T00:00:00Z"`, marker, 1),
		"match that is no list":           strings.Replace(docExample, "  match:\n", "  match: "+marker+"\n  x:\n", 1),
	} {
		_, err := FromObject(decodeYAML(t, doc))
		if err == nil {
			t.Errorf("%s: FromObject() = nil error", name)
		} else if strings.Contains(err.Error(), marker) {
			t.Errorf("%s: the error quotes the object: %v", name, err)
		}
	}
}
