package serviceaccount

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// The tests in this file are differential: the reader that matters is
// kubedoop operator-go, which decodes podOverrides with encoding/json into a
// corev1.PodTemplateSpec. They decode the same JSON with encoding/json into
// that very type and check that rule 1 reports exactly the keys that reach
// the ServiceAccount fields (docs/service-account.md, "Edges").
//
// Neither the operator nor the webhook reads what the user wrote: both read
// the object as the API server stored it, which asStored reproduces.

// asStored is a podOverrides document as the API server hands it on after
// storing a custom resource: decoded by the Kubernetes JSON decoder into a
// map (of keys that are exactly equal, the last one stays) and encoded again
// with encoding/json (keys sorted bytewise). So "serviceAccountName":"admin"
// followed by "serviceAccountName":null is stored as null, while
// "ServiceAccountName" and "serviceAccountName" both stay, in that order.
func asStored(t testing.TB, doc []byte) []byte {
	t.Helper()
	var v any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(doc, &v); err != nil {
		t.Fatalf("the API server refuses %s: %v", doc, err)
	}
	stored, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// operatorReads decodes a podOverrides document as operator-go does. ok is
// false when encoding/json reports an error: operator-go then drops the
// whole layer.
func operatorReads(t testing.TB, doc []byte) (pts corev1.PodTemplateSpec, ok bool) {
	t.Helper()
	return pts, json.Unmarshal(doc, &pts) == nil
}

// gatehouseReads evaluates an HdfsCluster "prod" whose name node podOverrides
// is doc, decoded as the webhook decodes a review's object.
func gatehouseReads(t testing.TB, doc []byte) []policies.Finding {
	t.Helper()
	var override any
	if err := json.Unmarshal(doc, &override); err != nil {
		t.Fatalf("podOverrides does not decode: %v", err)
	}
	obj := hdfsCluster()
	getMap(obj, "spec", "nameNode")["podOverrides"] = override
	return Validate(hdfsGK, obj, policies.DefaultProducts(), derivedNaming)
}

// foldOrbit returns the runes that Unicode simple case folding makes equal
// to r, r first.
func foldOrbit(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	return orbit
}

// lookalikes are runes that look like or are near an ASCII letter but are
// not in its simple folding orbit, plus separators that other decoders
// ignore: keys built with them must not count.
var lookalikes = map[rune][]rune{
	's': {'ѕ', 'ｓ', 'ś', 'ß'}, 'e': {'е', 'ｅ', 'é'}, 'i': {'ı', 'İ', 'ｉ', 'í'}, 'c': {'с', 'ç'},
	'o': {'о', '0', 'ο'}, 'a': {'а', 'α', 'ª'}, 'p': {'р', 'ρ'}, 'n': {'ո', 'ñ'}, 'k': {'κ', 'к'},
	'v': {'ν'}, 'u': {'υ', 'ü'}, 't': {'т'}, 'm': {'м'}, 'r': {'г'},
}

// spellings returns keys that encoding/json may or may not read as the
// field name: every letter through its whole folding orbit one at a time,
// random mixtures of orbits, and near misses (lookalikes, a letter dropped
// or doubled, separators, spaces, a zero-width joiner). The set is the same
// on every run.
func spellings(name string, rng *rand.Rand, mixtures int) []string {
	runes := []rune(name)
	set := map[string]bool{name: true, strings.ToUpper(name): true, strings.ToLower(name): true}
	with := func(i int, r rune) string {
		c := slices.Clone(runes)
		c[i] = r
		return string(c)
	}
	for i, r := range runes {
		for _, f := range foldOrbit(r) {
			set[with(i, f)] = true
		}
		for _, l := range lookalikes[unicode.ToLower(r)] {
			set[with(i, l)] = true
		}
		set[string(runes[:i])+string(runes[i+1:])] = true
		set[string(runes[:i+1])+string(runes[i:])] = true
		for _, sep := range []string{"_", "-", " ", "\u200d", "."} {
			set[string(runes[:i])+sep+string(runes[i:])] = true
		}
	}
	set[name+" "] = true
	set[" "+name] = true
	for range mixtures {
		c := slices.Clone(runes)
		for i, r := range c {
			orbit := foldOrbit(r)
			c[i] = orbit[rng.IntN(len(orbit))]
		}
		set[string(c)] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestKeySpellingsAsTheOperatorReadsThem puts every generated spelling of
// "spec" together with every generated spelling of "serviceAccountName" and
// "serviceAccount" into a podOverrides, decodes it into a
// corev1.PodTemplateSpec with encoding/json, and requires rule 1 to report
// a denial at exactly that key when the ServiceAccount was set, and no
// finding at all when it was not.
func TestKeySpellingsAsTheOperatorReadsThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	specKeys := spellings("spec", rng, 0)
	var saKeys []string
	for _, name := range serviceAccountFields {
		saKeys = append(saKeys, spellings(name, rng, 200)...)
	}
	// Every spelling of "spec" against a few of the field, and every
	// spelling of the field against a few of "spec", keeps the product small.
	type pair struct{ spec, sa string }
	var pairs []pair
	for _, s := range specKeys {
		for _, sa := range []string{"serviceAccountName", "SERVICEACCOUNT", "ſerviceAccountName", "serviceAccountNamе"} {
			pairs = append(pairs, pair{s, sa})
		}
	}
	for _, sa := range saKeys {
		for _, s := range []string{"spec", "SPEC", "ſpec", "ѕpec", "spec_"} {
			pairs = append(pairs, pair{s, sa})
		}
	}

	var set, notSet int
	for _, p := range pairs {
		doc, err := json.Marshal(map[string]any{p.spec: map[string]any{p.sa: "admin"}})
		if err != nil {
			t.Fatal(err)
		}
		pts, ok := operatorReads(t, doc)
		if !ok {
			t.Fatalf("%q/%q: encoding/json refused the document", p.spec, p.sa)
		}
		operatorSets := pts.Spec.ServiceAccountName == "admin" || pts.Spec.DeprecatedServiceAccount == "admin"
		got := summarize(gatehouseReads(t, doc))
		var want []want
		if operatorSets {
			set++
			want = append(want, deny(ServiceAccountOverridden, "spec.nameNode.podOverrides."+p.spec+"."+p.sa))
		} else {
			notSet++
		}
		if !slices.Equal(got, want) {
			t.Errorf("spec key %q, field key %q: the operator sets the ServiceAccount: %v; gatehouse reports %v",
				p.spec, p.sa, operatorSets, got)
		}
	}
	// The generator must produce both kinds in bulk, or the test proves little.
	if set < 100 || notSet < 100 {
		t.Fatalf("%d spellings set the ServiceAccount and %d did not; want at least 100 of each", set, notSet)
	}
	t.Logf("%d key pairs: %d set the ServiceAccount, %d did not", len(pairs), set, notSet)
}

// TestKeySpellingsInOneDocument writes several spellings of the fields into
// one podOverrides, in every order, as raw JSON (exact duplicates included),
// and lets the API server store it: encoding/json then decodes each
// remaining spelling in document order into the same field, so the last
// string wins and objects under several spellings of "spec" merge. Whatever
// the operator ends up with, a ServiceAccount other than the derived name
// must be denied; and gatehouse denies exactly when some stored spelling
// holds another value, whichever the API server puts last.
func TestKeySpellingsInOneDocument(t *testing.T) {
	entries := []string{
		`"serviceAccountName":"hdfscluster-prod"`,
		`"ServiceAccountName":"admin"`,
		`"ſerviceAccountName":"root"`,
		`"serviceAccountName":"admin"`,
		`"serviceAccount":"hdfscluster-prod"`,
		`"SERVICEACCOUNT":"admin"`,
		`"serviceAccountName":null`,
	}
	wrappers := []string{`{"spec":{%s}}`, `{"SPEC":{%s}}`, `{"spec":{},"ſpec":{%s},"Spec":{}}`, `{"ſpec":{%s},"spec":{"nodeSelector":{}}}`}
	checked := 0
	for _, wrapper := range wrappers {
		for i := range entries {
			for j := range entries {
				for k := range entries {
					body := strings.Join([]string{entries[i], entries[j], entries[k]}, ",")
					doc := asStored(t, []byte(fmt.Sprintf(wrapper, body)))
					pts, ok := operatorReads(t, doc)
					if !ok {
						t.Fatalf("encoding/json refused %s", doc)
					}
					findings := gatehouseReads(t, doc)
					anyOther := strings.Contains(string(doc), `"admin"`) || strings.Contains(string(doc), `"root"`)
					for _, sa := range []string{pts.Spec.ServiceAccountName, pts.Spec.DeprecatedServiceAccount} {
						if sa != "" && sa != derivedProd && !policies.Denied(findings) {
							t.Errorf("%s: the operator runs the pods as another ServiceAccount, gatehouse allows: %v", doc, summarize(findings))
						}
					}
					if policies.Denied(findings) != anyOther {
						t.Errorf("%s: denied %v, but a value other than the derived name is present: %v", doc, policies.Denied(findings), anyOther)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d documents", checked)
}

// FuzzKeyFolding checks rule 1 against encoding/json for arbitrary keys in
// place of "spec" and of the ServiceAccount field, and arbitrary values: a
// value the operator takes as the ServiceAccount is judged, and a finding is
// only ever reported for a value the operator takes.
func FuzzKeyFolding(f *testing.F) {
	for _, seed := range [][3]string{
		{"spec", "serviceAccountName", "admin"},
		{"SPEC", "ServiceAccountName", "admin"},
		{"ſpec", "ſerviceAccountName", "admin"},
		{"Spec", "serviceaccount", derivedProd},
		{"spec", "serviceAccountNamе", "admin"},
		{"spec", "ｓerviceAccountName", "admin"},
		{"metadata", "serviceAccountName", "admin"},
		{"spec", "service_account_name", "admin"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, specKey, saKey, value string) {
		doc, err := json.Marshal(map[string]any{specKey: map[string]any{saKey: value}})
		if err != nil {
			t.Skip()
		}
		findings := gatehouseReads(t, doc)
		pts, ok := operatorReads(t, doc)
		operatorSets := ok && (pts.Spec.ServiceAccountName != "" || pts.Spec.DeprecatedServiceAccount != "")
		if operatorSets && value != derivedProd && !policies.Denied(findings) {
			t.Fatalf("%s: the operator sets the ServiceAccount, gatehouse allows: %v", doc, summarize(findings))
		}
		if value != "" && len(findings) > 0 && !operatorSets {
			t.Fatalf("%s: gatehouse reports a key the operator does not read: %v", doc, summarize(findings))
		}
	})
}

// FuzzPodOverridesAsStored decodes arbitrary podOverrides documents, as the
// API server stores them, both as operator-go does and as gatehouse does:
// whenever the operator would run the pods as a ServiceAccount other than
// the derived name, gatehouse must deny.
func FuzzPodOverridesAsStored(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"serviceAccountName":"admin"}}`,
		`{"SPEC":{"ServiceAccountName":"admin","serviceAccountName":"hdfscluster-prod"}}`,
		`{"ſpec":{"ſerviceAccountName":"admin"},"spec":{"serviceAccount":"hdfscluster-prod"}}`,
		`{"spec":{"serviceAccountName":"admin","serviceAccountName":null}}`,
		`{"spec":{"serviceAccountName":null,"serviceAccountName":"admin"}}`,
		`{"Spec":{"serviceaccount":"admin"},"spec":{"containers":[]}}`,
		`{"metadata":{"name":"x"},"spec":{"serviceAccountNamе":"admin"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if kjson.UnmarshalCaseSensitivePreserveInts(data, &v) != nil {
			return
		}
		if _, isObject := v.(map[string]any); !isObject {
			return
		}
		doc := asStored(t, data)
		pts, ok := operatorReads(t, doc)
		if !ok {
			return // operator-go drops a layer that does not decode
		}
		findings := gatehouseReads(t, doc)
		for _, sa := range []string{pts.Spec.ServiceAccountName, pts.Spec.DeprecatedServiceAccount} {
			if sa != "" && sa != derivedProd && !policies.Denied(findings) {
				t.Fatalf("%s: the operator runs the pods as another ServiceAccount, gatehouse allows: %v", doc, summarize(findings))
			}
		}
	})
}
