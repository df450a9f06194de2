package scope

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

const scopeField = "metadata.annotations[secrets.kubedoop.dev/scope]"

func scopePath() *field.Path {
	return field.NewPath("metadata", "annotations").Key(annotationScope)
}

func TestParseScope(t *testing.T) {
	tests := []struct {
		value   string
		entries []Entry
		want    []result
	}{
		{value: "node", entries: []Entry{{"node", ""}}},
		{value: "pod,node", entries: []Entry{{"pod", ""}, {"node", ""}}},
		{value: "pod,node,service=web,listener-volume=listener", entries: []Entry{{"pod", ""}, {"node", ""}, {"service", "web"}, {"listener-volume", "listener"}}},
		{value: "", entries: []Entry{{"", ""}}, want: []result{warn(ScopeEmpty, scopeField)}},
		{value: "pod,,node", entries: []Entry{{"pod", ""}, {"", ""}, {"node", ""}}, want: []result{deny(ScopeEntryEmpty, scopeField)}},
		{value: ",pod", entries: []Entry{{"", ""}, {"pod", ""}}, want: []result{deny(ScopeEntryEmpty, scopeField)}},
		{value: "pod,", entries: []Entry{{"pod", ""}, {"", ""}}, want: []result{deny(ScopeEntryEmpty, scopeField)}},
		{value: ",", entries: []Entry{{"", ""}, {"", ""}}, want: []result{deny(ScopeEntryEmpty, scopeField), deny(ScopeEntryEmpty, scopeField)}},
		{value: "service", entries: []Entry{{"service", ""}}, want: []result{deny(ScopeValueMissing, scopeField)}},
		{value: "service=", entries: []Entry{{"service", ""}}, want: []result{deny(ScopeValueMissing, scopeField)}},
		{value: "pod,listener-volume", entries: []Entry{{"pod", ""}, {"listener-volume", ""}}, want: []result{deny(ScopeValueMissing, scopeField)}},
		{value: "service==b", entries: []Entry{{"service", ""}}, want: []result{deny(ScopeValueMissing, scopeField)}},
		{value: "service=a=b", entries: []Entry{{"service", "a"}}, want: []result{deny(ScopeValueHasDelimiter, scopeField)}},
		{value: "listener-volume=a=", entries: []Entry{{"listener-volume", "a"}}, want: []result{deny(ScopeValueHasDelimiter, scopeField)}},
		{value: "node=x", entries: []Entry{{"node", "x"}}, want: []result{deny(ScopeUnexpectedValue, scopeField)}},
		{value: "node=", entries: []Entry{{"node", ""}}, want: []result{deny(ScopeUnexpectedValue, scopeField)}},
		{value: "pod=a=b", entries: []Entry{{"pod", "a"}}, want: []result{deny(ScopeUnexpectedValue, scopeField)}},
		{value: "pod,zone=eu", entries: []Entry{{"pod", ""}, {"zone", "eu"}}, want: []result{warn(ScopeUnknownKey, scopeField)}},
		{value: "Node", entries: []Entry{{"Node", ""}}, want: []result{warn(ScopeUnknownKey, scopeField)}},
		{value: " pod", entries: []Entry{{" pod", ""}}, want: []result{warn(ScopeUnknownKey, scopeField)}},
		{value: "=x", entries: []Entry{{"", "x"}}, want: []result{deny(ScopeKeyMissing, scopeField)}},
		{value: "=", entries: []Entry{{"", ""}}, want: []result{deny(ScopeKeyMissing, scopeField)}},
		{value: "pod,==x", entries: []Entry{{"pod", ""}, {"", ""}}, want: []result{deny(ScopeKeyMissing, scopeField)}},
		{value: "service=*", entries: []Entry{{"service", "*"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=*.web", entries: []Entry{{"service", "*.web"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=web.other", entries: []Entry{{"service", "web.other"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=Web", entries: []Entry{{"service", "Web"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=1web", entries: []Entry{{"service", "1web"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=web-", entries: []Entry{{"service", "web-"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service= web", entries: []Entry{{"service", " web"}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "service=" + strings.Repeat("a", 63), entries: []Entry{{"service", strings.Repeat("a", 63)}}},
		{value: "service=" + strings.Repeat("a", 64), entries: []Entry{{"service", strings.Repeat("a", 64)}}, want: []result{deny(ScopeServiceNameInvalid, scopeField)}},
		{value: "listener-volume=1lb", entries: []Entry{{"listener-volume", "1lb"}}},
		{value: "listener-volume=*", entries: []Entry{{"listener-volume", "*"}}, want: []result{deny(ScopeListenerVolumeNameInvalid, scopeField)}},
		{value: "listener-volume=lb.x", entries: []Entry{{"listener-volume", "lb.x"}}, want: []result{deny(ScopeListenerVolumeNameInvalid, scopeField)}},
		{value: "listener-volume=LB", entries: []Entry{{"listener-volume", "LB"}}, want: []result{deny(ScopeListenerVolumeNameInvalid, scopeField)}},
		{value: "zone=*", entries: []Entry{{"zone", "*"}}, want: []result{warn(ScopeUnknownKey, scopeField)}},
		{value: "node=x,,service", entries: []Entry{{"node", "x"}, {"", ""}, {"service", ""}}, want: []result{
			deny(ScopeUnexpectedValue, scopeField), deny(ScopeEntryEmpty, scopeField), deny(ScopeValueMissing, scopeField),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			entries, findings := ParseScope(tt.value, scopePath())
			if !slices.Equal(entries, tt.entries) {
				t.Errorf("entries = %q, want %q", entries, tt.entries)
			}
			if got := results(findings); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v, want %v", got, tt.want)
			}
			for _, f := range findings {
				if f.Evidence != policies.Fingerprint(tt.value) {
					t.Errorf("%s: evidence is not the annotation value", f.Code)
				}
			}
		})
	}
}

func TestParseScopeNamesEntriesByPosition(t *testing.T) {
	_, findings := ParseScope("pod,,node", scopePath())
	if len(findings) != 1 || !strings.Contains(findings[0].Message, "entry 2 ") {
		t.Fatalf("want one finding naming entry 2, got %+v", findings)
	}
}

func TestRenderScope(t *testing.T) {
	tests := []struct {
		node, pod                 bool
		services, listenerVolumes []string
		want                      string
	}{
		{want: ""},
		{node: true, want: "node"},
		{node: true, pod: true, want: "node,pod"},
		{services: []string{"minio", "gateway"}, listenerVolumes: []string{"listener"}, want: "service=minio,service=gateway,listener-volume=listener"},
		{node: true, pod: true, services: []string{"web"}, listenerVolumes: []string{"lb"}, want: "node,pod,service=web,listener-volume=lb"},
		// Invalid names are rendered as they are: that is the point.
		{services: []string{"mysvc,node"}, want: "service=mysvc,node"},
		{services: []string{""}, want: "service="},
	}
	for _, tt := range tests {
		if got := RenderScope(tt.node, tt.pod, tt.services, tt.listenerVolumes); got != tt.want {
			t.Errorf("RenderScope(%v, %v, %q, %q) = %q, want %q", tt.node, tt.pod, tt.services, tt.listenerVolumes, got, tt.want)
		}
	}
}

// TestRenderParseRoundTrip: valid names survive rendering and parsing.
func TestRenderParseRoundTrip(t *testing.T) {
	services := []string{"web", "web-headless", "hdfs-2", "a"}
	listeners := []string{"listener", "listener-broker", "0lb"}
	rendered := RenderScope(true, true, services, listeners)
	entries, findings := ParseScope(rendered, scopePath())
	if len(findings) != 0 {
		t.Fatalf("valid scope %q has findings %+v", rendered, findings)
	}
	want := []Entry{{"node", ""}, {"pod", ""}}
	for _, s := range services {
		want = append(want, Entry{"service", s})
	}
	for _, l := range listeners {
		want = append(want, Entry{"listener-volume", l})
	}
	if !slices.Equal(entries, want) {
		t.Errorf("entries = %q, want %q", entries, want)
	}
}

// TestSpliceMessageNamesExtraScopes: a name with "," is described by the
// kinds of scope it splices in.
func TestSpliceMessageNamesExtraScopes(t *testing.T) {
	tests := []struct {
		name     string
		contains []string
	}{
		{"mysvc,node", []string{"2 scope entries", "a node scope", "widens the certificate"}},
		{"mysvc,pod,node", []string{"3 scope entries", "a pod scope and a node scope", "widens"}},
		{"mysvc,service=other", []string{"a service scope", "widens"}},
		{"mysvc,listener-volume=lb", []string{"a listener-volume scope", "widens"}},
		{"mysvc,", []string{"an empty entry", "separate entries"}},
		{"mysvc,zone=eu", []string{"an entry with an unknown key", "separate entries"}},
		{"mysvc,node,,x", []string{"4 scope entries", "a node scope, an empty entry and an entry with an unknown key", "widens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings := Validate(gkHdfsCluster, map[string]any{"spec": credentialsHolder(tt.name)})
			if got, want := results(findings), []result{deny(ScopeNameHasDelimiter, "spec.scope.services[0]")}; !slices.Equal(got, want) {
				t.Fatalf("findings = %v, want %v", got, want)
			}
			msg := findings[0].Message
			for _, c := range tt.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("message %q does not say %q", msg, c)
				}
			}
			if strings.Contains(msg, "mysvc") {
				t.Errorf("message %q repeats the name", msg)
			}
		})
	}
}

func FuzzParseScope(f *testing.F) {
	for _, seed := range []string{
		"", "node", "pod,node", "pod,node,service=web", "listener-volume=lb", "pod,,node", ",", "service", "service=",
		"service=a=b", "node=x", "zone=eu", "=", "==", "service=a,b", "\x00,\xff=",
		"service=*", "service=*.web", "service=web.other", "listener-volume=0lb", "listener-volume=LB", "=x,pod",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		path := scopePath()
		entries, findings := ParseScope(value, path)
		if want := strings.Count(value, ",") + 1; len(entries) != want {
			t.Fatalf("%d entries for %d comma-separated parts", len(entries), want)
		}
		for _, f := range findings {
			if f.Field != path.String() {
				t.Fatalf("finding at %s, want %s", f.Field, path)
			}
			if f.Evidence != policies.Fingerprint(value) {
				t.Fatalf("%s: evidence is not the value", f.Code)
			}
		}
		// A scope with no finding at all is exactly what its entries render to.
		if len(findings) == 0 {
			var node, pod bool
			var services, listeners []string
			var rebuilt []string
			for _, e := range entries {
				switch e.Key {
				case scopeNode:
					node = true
					rebuilt = append(rebuilt, e.Key)
				case scopePod:
					pod = true
					rebuilt = append(rebuilt, e.Key)
				case scopeService:
					services = append(services, e.Value)
					rebuilt = append(rebuilt, e.Key+"="+e.Value)
				case scopeListenerVolume:
					listeners = append(listeners, e.Value)
					rebuilt = append(rebuilt, e.Key+"="+e.Value)
				default:
					t.Fatalf("entry with key %q passed without a finding", e.Key)
				}
			}
			if got := strings.Join(rebuilt, ","); got != value {
				t.Fatalf("clean scope %q re-renders as %q", value, got)
			}
			_ = RenderScope(node, pod, services, listeners)
		}
		// secret-operator and operator-go read the value as written, with
		// only Service names in the certificate, exactly when it is allowed
		// (differential_test.go); an empty scope is stricter by contract.
		if harm := scopeHarm(value); value != "" && policies.Denied(findings) != (harm != "") {
			t.Fatalf("scope %q: denied %v, upstream harm %q", value, policies.Denied(findings), harm)
		}
		// Treated as a name, value either round-trips or is denied in a CR.
		checkNameProperty(t, value)
	})
}

// checkNameProperty asserts, for one CredentialsScope name, the property SCOPE
// exists for: if the rendered annotation would not read back as exactly one
// entry carrying that name, the CR walk denies it; if it would, the walk
// reports nothing exactly when the name is a valid Service (or volume) name,
// as the rule is written in Kubernetes' API conventions (nameOracle), and
// denies it otherwise.
func checkNameProperty(t *testing.T, name string) {
	t.Helper()
	for _, list := range scopeLists {
		var rendered string
		if list.field == "services" {
			rendered = RenderScope(false, false, []string{name}, nil)
		} else {
			rendered = RenderScope(false, false, nil, []string{name})
		}
		entries, _ := ParseScope(rendered, scopePath())
		cr := map[string]any{"spec": map[string]any{
			"secretClass": "tls",
			"scope":       map[string]any{list.field: []any{name}},
		}}
		findings := Validate(gkHdfsCluster, cr)
		spliced := len(entries) != 1 || entries[0].Key != list.key || entries[0].Value != name
		if spliced && !policies.Denied(findings) {
			t.Fatalf("%s name renders as %d entries (first %+v) but the CR walk does not deny", list.field, len(entries), entries[0])
		}
		valid := nameOracle(list.key, name)
		if !spliced && valid && len(findings) != 0 {
			t.Fatalf("%s name round-trips and is valid but the CR walk reports %+v", list.field, findings)
		}
		if !valid && !policies.Denied(findings) {
			t.Fatalf("%s name is not a valid name but the CR walk does not deny", list.field)
		}
	}
}

// Kubernetes' name rules, written out independently of the validation
// package the policy uses: a DNS-1035 label (Service names) starts with a
// letter, a DNS-1123 label (volume names) with a letter or digit; both are
// at most 63 characters of [a-z0-9-] ending in a letter or digit.
var (
	dns1035 = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

func nameOracle(key, name string) bool {
	if len(name) > 63 {
		return false
	}
	if key == scopeService {
		return dns1035.MatchString(name)
	}
	return dns1123.MatchString(name)
}
