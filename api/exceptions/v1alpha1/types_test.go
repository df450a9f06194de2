package v1alpha1_test

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
)

// docExample is the Exception of doc.go, which policies/exception's tests
// read too.
func docExample(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/exception.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestDocExampleIsTheTestdata: doc.go shows the example the tests decode.
func TestDocExampleIsTheTestdata(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(docExample(t), "\n"), "\n") {
		shown.WriteString("//\t" + line)
	}
	if !strings.Contains(string(doc), shown.String()+"\n") {
		t.Errorf("doc.go does not show testdata/exception.yaml as its example")
	}
}

// TestDocExampleDecodesStrictly: every key of the documented example is a
// field of the types, with the value the documentation means.
func TestDocExampleDecodesStrictly(t *testing.T) {
	var e exceptionsv1alpha1.Exception
	if err := yaml.UnmarshalStrict([]byte(docExample(t)), &e); err != nil {
		t.Fatal(err)
	}
	want := exceptionsv1alpha1.ExceptionSpec{
		Match: []exceptionsv1alpha1.ObjectSelector{{
			Kinds: []exceptionsv1alpha1.GroupKind{{Group: "apps", Kind: "StatefulSet"}},
			Names: []string{"hdfs-namenode"},
		}},
		Webhooks: []string{"secret-scope"},
		Codes:    []string{"ScopeNameHasDelimiter"},
		Reason:   "migrating to per-service scopes, PLAT-1234, owner team-a",
		Expires:  metav1.NewTime(time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)),
	}
	// metav1.Time decodes into the local zone; the instant is what counts.
	if !e.Spec.Expires.Equal(&want.Expires) {
		t.Errorf("expires %v, want %v", e.Spec.Expires, want.Expires)
	}
	e.Spec.Expires = want.Expires
	if !reflect.DeepEqual(e.Spec, want) || e.Namespace != "team-a" {
		t.Errorf("decoded %+v, want %+v", e.Spec, want)
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	original := &exceptionsv1alpha1.ClusterException{Spec: exceptionsv1alpha1.ExceptionSpec{
		Match: []exceptionsv1alpha1.ObjectSelector{{
			Namespaces:    []string{"team-a"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hdfs"}},
		}},
		Webhooks: []string{"*"},
	}}
	copied := original.DeepCopy()
	copied.Spec.Match[0].Namespaces[0] = "team-b"
	copied.Spec.Match[0].LabelSelector.MatchLabels["app"] = "hbase"
	copied.Spec.Webhooks[0] = "secret-scope"
	if original.Spec.Match[0].Namespaces[0] != "team-a" || original.Spec.Match[0].LabelSelector.MatchLabels["app"] != "hdfs" ||
		original.Spec.Webhooks[0] != "*" {
		t.Errorf("DeepCopy shares memory with the original: %+v", original.Spec)
	}
}

// TestSchemeKnowsTheKinds: both kinds and their lists are registered under
// gatehouse.dev/v1alpha1.
func TestSchemeKnowsTheKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := exceptionsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Exception", "ExceptionList", "ClusterException", "ClusterExceptionList"} {
		if !scheme.Recognizes(exceptionsv1alpha1.SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("the scheme does not know %s", kind)
		}
	}
}
