package overrides

import (
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// FuzzValidate feeds random data values to Validate for panics, stack
// overflows and nondeterminism, and checks the allowlist's central property:
// a rejected key injected anywhere into a valid patch is denied, at the path
// it was injected at (see injectRejected).
func FuzzValidate(f *testing.F) {
	for i, raw := range golden.ReadFixtures(f, filepath.Join("testdata", "*", "*.yaml")) {
		var cm struct{ Data map[string]string }
		if err := yaml.Unmarshal(raw, &cm); err != nil {
			f.Fatal(err)
		}
		for _, value := range cm.Data {
			f.Add([]byte(value), uint16(i), uint16(7*i), "x")
		}
	}
	f.Add([]byte(apiLine+"overrides: &x [*x]\n"), uint16(1), uint16(2), "")
	f.Add([]byte(aliasBomb()), uint16(3), uint16(4), "null")
	f.Add([]byte("a: !!binary '@'\n"), uint16(5), uint16(6), "~")
	f.Add([]byte("\xef\xbb\xbf"+apiLine), uint16(7), uint16(8), "$patch")
	f.Add([]byte(apiLine+"overrides: "+strings.Repeat("[", 11000)+strings.Repeat("]", 11000)+"\n"), uint16(9), uint16(10), "")
	for _, e := range orderEntries {
		f.Add([]byte(apiLine+"overrides:\n- {"+e.head+", "+e.rest+"}\n- {"+e.head+", "+e.rest+"}\n"), uint16(11), uint16(12), "x")
	}

	f.Fuzz(func(t *testing.T, data []byte, choice, position uint16, value string) {
		for _, live := range []Live{typicalLive(), nil} {
			in := map[string]string{"fuzz.yaml": string(data), "other.yaml": string(data) + "\n"}
			first := Validate(anyTable, in, live)
			checkFuzzFindings(t, first)
			if again := Validate(anyTable, in, live); !reflect.DeepEqual(first, again) {
				t.Fatalf("Validate is not deterministic:\n%v\n%v", results(first), results(again))
			}
		}
		// The verdict never depends on the order Live lists workloads in.
		live, reversed := typicalLive(), typicalLive()
		for _, ws := range reversed {
			slices.Reverse(ws)
		}
		in := map[string]string{"fuzz.yaml": string(data)}
		if a, b := Validate(anyTable, in, live), Validate(anyTable, in, reversed); !reflect.DeepEqual(a, b) {
			t.Fatalf("Validate depends on the order of the live workloads:\n%v\n%v", results(a), results(b))
		}
		injectRejected(t, int(choice), int(position), value)
	})
}

// checkFuzzFindings checks what every finding list must be.
func checkFuzzFindings(t *testing.T, findings []policies.Finding) {
	t.Helper()
	sorted := slices.Clone(findings)
	policies.Sort(sorted)
	if !slices.Equal(findings, sorted) {
		t.Fatal("findings are not sorted")
	}
	for _, f := range findings {
		if f.Field == "" || f.Message == "" || !knownCodes[f.Code] || warnCodes[f.Code] != (f.Severity == policies.Warn) {
			t.Fatalf("malformed finding %+v", f)
		}
	}
}

// fuzzBasePatch is a valid patch of the storage DaemonSet that reaches
// into every kind of permitted subtree.
func fuzzBasePatch() map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{"team": "platform"},
			"annotations": map[string]any{"example.com/owner": "platform"},
		},
		"spec": map[string]any{
			"minReadySeconds": 5,
			"updateStrategy":  map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": 1}},
			"template": map[string]any{
				"metadata": map[string]any{
					"labels":      map[string]any{"tier": "node"},
					"annotations": map[string]any{"example.com/scrape": "true"},
				},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"name":            "run",
						"resources":       map[string]any{"limits": map[string]any{"memory": "1Gi"}},
						"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"NET_ADMIN"}}},
						"env": []any{map[string]any{"name": "A", "valueFrom": map[string]any{
							"configMapKeyRef": map[string]any{"name": "extra", "key": "a"},
						}}},
						"envFrom":        []any{map[string]any{"configMapRef": map[string]any{"name": "extra"}}},
						"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}},
						"lifecycle":      map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": []any{"sleep"}}}},
						"volumeMounts":   []any{map[string]any{"name": "scratch", "mountPath": "/scratch"}},
						"ports":          []any{map[string]any{"containerPort": 9090}},
						"readinessProbe": map[string]any{"periodSeconds": 5},
					}},
					"initContainers":   []any{map[string]any{"name": "init-perms", "resources": map[string]any{}}},
					"volumes":          []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{"sizeLimit": "1Gi"}}},
					"imagePullSecrets": []any{map[string]any{"name": "registry"}},
					"nodeSelector":     map[string]any{"kubernetes.io/arch": "amd64"},
					"tolerations":      []any{map[string]any{"operator": "Exists"}},
					"affinity": map[string]any{"podAntiAffinity": map[string]any{
						"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
							"weight": 1,
							"podAffinityTerm": map[string]any{
								"topologyKey":   "kubernetes.io/hostname",
								"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "storage"}},
							},
						}},
					}},
					"topologySpreadConstraints": []any{map[string]any{"topologyKey": "zone", "maxSkew": 1}},
					"dnsConfig":                 map[string]any{"options": []any{map[string]any{"name": "ndots", "value": "2"}}},
					"securityContext":           map[string]any{"fsGroup": 2000},
				},
			},
		},
	}
}

// position is a mapping of the base patch and its path.
type position struct {
	m    map[string]any
	path *field.Path
	// keyed is set for maps whose keys are data (labels and the like).
	keyed bool
	// labels is set for labels and annotations maps.
	labels bool
	// open is set for mappings inside a permitted subtree, where field names
	// are data for the allowlist: only directives, nulls and reserved label
	// keys are rejected there (positions, not names).
	open bool
}

// positionsOf lists the mappings below m (at path, under the key owner,
// checked against the allowlist rule r, nil inside a permitted subtree) in a
// fixed order.
func positionsOf(m map[string]any, path *field.Path, owner string, r *rule) []position {
	open := r == nil || r.open
	out := []position{{m: m, path: path, keyed: dataKeyed[owner], labels: owner == "labels" || owner == "annotations", open: open}}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		childPath := pathOf(path, k, dataKeyed[owner])
		var sub *rule
		if !open {
			sub = r.fields[k]
		}
		switch v := m[k].(type) {
		case map[string]any:
			out = append(out, positionsOf(v, childPath, k, sub)...)
		case []any:
			var items *rule
			if sub != nil {
				items = sub.items
			}
			for i, item := range v {
				if im, ok := item.(map[string]any); ok {
					out = append(out, positionsOf(im, childPath.Index(i), "", items)...)
				}
			}
		}
	}
	return out
}

// rejectedKeys are injected as keys: the names of the always-rejected
// fields (dotted ones as a nested mapping) and directives. A name is
// rejected at its position and wherever the allowlist does not permit it;
// inside a permitted subtree it is an ordinary field.
var rejectedKeys = []string{
	"apiVersion", "kind", "serviceAccountName", "serviceAccount", "hostNetwork", "hostPID", "hostIPC", "status",
	"metadata.name", "metadata.namespace", "metadata.ownerReferences", "metadata.finalizers", "metadata.resourceVersion",
	"spec.selector",
	"$patch", "$retainKeys", "$setElementOrder/containers", "$deleteFromPrimitiveList/args",
}

// injectRejected injects one rejected thing, chosen by choice, into the
// base patch at the mapping chosen by at, and checks that Validate denies
// it at the injected path:
//
//   - a rejected key (rejectedKeys) with value, into a mapping of fields;
//   - an unbounded-cloud.io/ key, into a labels or annotations map;
//   - a null, replacing the value of a key of any mapping.
func injectRejected(t *testing.T, choice, at int, value string) {
	t.Helper()
	base := fuzzBasePatch()
	// The value goes through a YAML encoder that refuses control characters.
	value = strings.Map(printable, strings.ToValidUTF8(value, ""))
	patchPath := field.NewPath("data").Key(key).Child("overrides").Index(0).Child(fieldPatch)
	all := positionsOf(base, patchPath, "", patchRule)
	var fieldPositions, labelPositions, nonEmpty []position
	for _, p := range all {
		if len(p.m) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
		if !p.keyed {
			fieldPositions = append(fieldPositions, p)
		}
		if p.labels {
			labelPositions = append(labelPositions, p)
		}
	}

	var injected *field.Path
	// ordinary is set when the injected key is an ordinary field where it
	// lands: a protected name inside a permitted subtree.
	ordinary := false
	switch choice % 3 {
	case 0:
		p := fieldPositions[at%len(fieldPositions)]
		name := rejectedKeys[(choice/3)%len(rejectedKeys)]
		ordinary = p.open && !strings.HasPrefix(name, directivePrefix)
		outer, inner, dotted := strings.Cut(name, ".")
		if !dotted {
			p.m[name] = value
			injected = pathOf(p.path, name, false)
			break
		}
		if m, ok := p.m[outer].(map[string]any); ok {
			m[inner] = value
		} else {
			p.m[outer] = map[string]any{inner: value}
		}
		injected = pathOf(p.path, outer, false)
	case 1:
		p := labelPositions[at%len(labelPositions)]
		name := reservedDomain + "/" + strings.Map(labelRune, value)
		p.m[name] = "x"
		injected = p.path.Key(name)
	default:
		p := nonEmpty[at%len(nonEmpty)]
		keys := make([]string, 0, len(p.m))
		for k := range p.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		k := keys[(choice/3)%len(keys)]
		p.m[k] = nil
		injected = pathOf(p.path, k, p.keyed)
	}

	findings := Validate(anyTable, overrides(storageEntry(base)), typicalLive())
	if ordinary {
		// Positions, not names: apiVersion, kind, selector, hostNetwork
		// and the others are ordinary fields inside a permitted subtree.
		if len(findings) != 0 {
			t.Fatalf("injected %s inside a permitted subtree, denied: %v\n%s", injected, results(findings),
				render(document(storageEntry(base))))
		}
		return
	}
	for _, f := range findings {
		if f.Severity == policies.Deny && strings.HasPrefix(f.Field, injected.String()) {
			return
		}
	}
	t.Fatalf("injected at %s, not denied there: %v\n%s", injected, results(findings), render(document(storageEntry(base))))
}

// TestInjectEverywhere runs the property FuzzValidate checks over every
// rejected key at every mapping of the base patch, every label map, and a
// null at every key of every mapping. The base patch itself is valid, so a
// denial is the injection's; a protected field name injected inside a
// permitted subtree is an ordinary field there and must draw nothing.
func TestInjectEverywhere(t *testing.T) {
	if findings := Validate(anyTable, overrides(storageEntry(fuzzBasePatch())), typicalLive()); len(findings) != 0 {
		t.Fatalf("the base patch has findings: %v", results(findings))
	}
	const positions = 48 // more than the base patch has mappings (47)
	for k := range rejectedKeys {
		for at := 0; at < positions; at++ {
			injectRejected(t, 3*k, at, "x")
		}
	}
	for at := 0; at < positions; at++ {
		injectRejected(t, 1, at, "x")
		for k := 0; k < 12; k++ { // more than any mapping has keys
			injectRejected(t, 2+3*k, at, "x")
		}
	}
}

// printable drops the runes a YAML encoder refuses.
func printable(r rune) rune {
	if unicode.IsPrint(r) {
		return r
	}
	return -1
}

// labelRune keeps the runes a label name may hold.
func labelRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
		return r
	}
	return -1
}
