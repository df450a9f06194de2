package scope

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/celtext"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// The annotation grammar as CEL, for the webhook's narrowing and the
// in-process layout (webhooks/render/inprocess.go), over a list of
// annotation maps (a CEL expression): where these predicates hold, the
// evaluator allows with nothing to say. The soundness test of the
// in-process layout (webhooks TestInProcessNarrowingIsSound) runs both over
// the fixtures and generated objects.

// DecidableCEL is the predicate over a list of annotation maps that CEL
// decides all of them: known keys only, a format CEL knows, and scope
// values whose every entry has an empty or known key.
func DecidableCEL(maps string) string {
	known := []string{"class", "scope", "format", "kerberosServiceNames", "pod-info"}
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = fmt.Sprintf("%q", AnnotationPrefix+k)
	}
	format, scopeKey := AnnotationPrefix+"format", AnnotationPrefix+"scope"
	entry := "(node|pod|service|listener-volume)?(=[^,]*)?"
	return fmt.Sprintf("%s.all(a, a.all(k, !k.startsWith(%q) || k in [%s]) && "+
		"(!(%q in a) || a[%q] in ['tls-pem', 'kerberos']) && "+
		"(!(%q in a) || a[%q] != '' && a[%q].matches(%q)))",
		maps, AnnotationPrefix, strings.Join(quoted, ", "),
		format, format, scopeKey, scopeKey, scopeKey, "^"+entry+"(,"+entry+")*$")
}

// AllowsCEL is the predicate over annotation maps, for maps that
// DecidableCEL decides, that SCOPE finds nothing in them.
func AllowsCEL(maps string) string {
	name := func(first string) string { return first + "([-a-z0-9]{0,61}[a-z0-9])?" }
	entry := "(node|pod|service=" + name("[a-z]") + "|listener-volume=" + name("[a-z0-9]") + ")"
	class, format, scopeKey := annotationClass, AnnotationPrefix+"format", AnnotationPrefix+"scope"
	return fmt.Sprintf("%s.all(a, !a.exists(k, k.startsWith(%q)) || ("+
		"%q in a && a[%q] != '' && (!(%q in a) || a[%q] in ['tls-pem', 'tls-p12', 'kerberos']) && (!(%q in a) || a[%q].matches(%q))))",
		maps, AnnotationPrefix, class, class, format, format, scopeKey, scopeKey, "^"+entry+"(,"+entry+")*$")
}

// Location is, for one built-in resource, the CEL list of the annotation
// maps SCOPE reads (standard CEL only, so that it also serves the webhook's
// matchCondition) and the CEL list of their field paths, in the same order.
type Location struct {
	Resource    schema.GroupVersionResource
	Kind        string
	Maps, Paths string
}

// pvcs is the PersistentVolumeClaim resource, whose own annotations SCOPE
// reads.
var pvcs = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

// Locations are where SCOPE reads annotation maps on built-in kinds: a
// PVC's own, the ephemeral volume templates of a Pod or any pod template,
// and a StatefulSet's volumeClaimTemplates.
func Locations() []Location {
	out := []Location{{
		Resource: pvcs, Kind: "PersistentVolumeClaim",
		Maps:  "(has(object.metadata) && has(object.metadata.annotations) ? [object.metadata.annotations] : [])",
		Paths: "(has(object.metadata) && has(object.metadata.annotations) ? ['metadata.annotations'] : [])",
	}}
	for _, k := range workload.Kinds() {
		spec := k.SpecPath()
		volumes := append(append([]string{}, spec...), "volumes")
		guard := celtext.HasPath(volumes)
		list := "object." + strings.Join(volumes, ".")
		ephemeral := "has(v.ephemeral) && has(v.ephemeral.volumeClaimTemplate) && has(v.ephemeral.volumeClaimTemplate.metadata) && " +
			"has(v.ephemeral.volumeClaimTemplate.metadata.annotations)"
		maps := fmt.Sprintf("(%s ? %s.filter(v, %s).map(v, v.ephemeral.volumeClaimTemplate.metadata.annotations) : [])", guard, list, ephemeral)
		paths := fmt.Sprintf("(%s ? %s.transformList(i, v, %s, %q + string(i) + %q) : [])", guard, list, ephemeral,
			strings.Join(volumes, ".")+"[", "].ephemeral.volumeClaimTemplate.metadata.annotations")
		if k.Kind == "StatefulSet" {
			templates := "has(object.spec) && has(object.spec.volumeClaimTemplates)"
			annotated := "has(t.metadata) && has(t.metadata.annotations)"
			maps += fmt.Sprintf(" + (%s ? object.spec.volumeClaimTemplates.filter(t, %s).map(t, t.metadata.annotations) : [])", templates, annotated)
			paths += fmt.Sprintf(" + (%s ? object.spec.volumeClaimTemplates.transformList(i, t, %s, 'spec.volumeClaimTemplates[' + string(i) + '].metadata.annotations') : [])", templates, annotated)
		}
		out = append(out, Location{Resource: k.Resource, Kind: k.Kind, Maps: maps, Paths: paths})
	}
	return out
}

// ActsCEL is SCOPE's narrowing predicate (the matchCondition
// "gatehouse-acts"): SCOPE acts on annotations under secrets.kubedoop.dev/
// at Locations; on product custom resources it walks everything. It never
// acts on an UPDATE that changes nothing it reads (UnchangedCEL).
func ActsCEL() string {
	prefix := fmt.Sprintf("%q", AnnotationPrefix)
	secretKeys := func(annotations string) string {
		return fmt.Sprintf("%s.exists(k, k.startsWith(%s))", annotations, prefix)
	}
	volumes := func(spec []string) string {
		path := "object." + strings.Join(append(spec, "volumes"), ".")
		return fmt.Sprintf("%s && %s.exists(v, has(v.ephemeral) && has(v.ephemeral.volumeClaimTemplate) && "+
			"has(v.ephemeral.volumeClaimTemplate.metadata) && has(v.ephemeral.volumeClaimTemplate.metadata.annotations) && %s)",
			celtext.HasPath(append(spec, "volumes")), path, secretKeys("v.ephemeral.volumeClaimTemplate.metadata.annotations"))
	}
	var cases []string
	cases = append(cases, fmt.Sprintf("%s ? (%s && %s)", celtext.ResourceIs(pvcs), celtext.HasPath([]string{"metadata", "annotations"}), secretKeys("object.metadata.annotations")))
	for _, k := range workload.Kinds() {
		spec := k.SpecPath()
		check := volumes(spec)
		if k.Kind == "StatefulSet" {
			check = fmt.Sprintf("(%s) || (%s && object.spec.volumeClaimTemplates.exists(t, has(t.metadata) && has(t.metadata.annotations) && %s))",
				check, celtext.HasPath([]string{"spec", "volumeClaimTemplates"}), secretKeys("t.metadata.annotations"))
		}
		cases = append(cases, fmt.Sprintf("%s ? (%s)", celtext.ResourceIs(k.Resource), check))
	}
	// Product custom resources: every one is walked.
	acts := strings.Join(cases, " : ") + " : true"
	return fmt.Sprintf("!(request.operation == \"UPDATE\" && %s) && (%s)", UnchangedCEL(), acts)
}

// UnchangedCEL: an UPDATE that leaves every annotation map SCOPE reads of
// a built-in kind (Locations), or every field but metadata of a product
// custom resource (where a CredentialsScope cannot sit: ObjectMeta is
// typed), as it was cannot change SCOPE's verdict. Every finding on it would
// ratchet: its evidence is unchanged, and SCOPE has no finding about the
// view on built-in kinds, while the walk limit of a custom resource depends
// on the unchanged fields alone. So the API server need not call for it: a
// finalizer removal (the PVC protection controller's, while a namespace is
// deleted) or a label edit never waits on gatehouse. What is lost is the
// repetition of warnings the stored object already earned.
func UnchangedCEL() string {
	old := regexp.MustCompile(`\bobject\.`)
	var cases []string
	for _, l := range Locations() {
		cases = append(cases, fmt.Sprintf("%s ? (%s == %s)", celtext.ResourceIs(l.Resource), l.Maps, old.ReplaceAllString(l.Maps, "oldObject.")))
	}
	product := "(object.all(k, k == \"metadata\" || (k in oldObject && object[k] == oldObject[k])) && " +
		"oldObject.all(k, k == \"metadata\" || k in object))"
	return "(" + strings.Join(cases, " : ") + " : " + product + ")"
}
