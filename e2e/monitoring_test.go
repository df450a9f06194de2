package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	cmmetrics "github.com/cert-manager/cert-manager/pkg/metrics"
	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// renderMonitoring renders deploy/default with the deploy/monitoring
// component, as an overlay that opts in does.
func renderMonitoring(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return renderDefaultWith(t, "monitoring")
}

// renderDefaultWith renders deploy/default with the named components
// (directories of deploy/), as a user's overlay that adds them does.
func renderDefaultWith(t *testing.T, components ...string) []*unstructured.Unstructured {
	t.Helper()
	abs, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// kustomize takes directories by relative path only.
	rel, err := filepath.Rel(dir, filepath.Join(abs, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := fmt.Sprintf("resources:\n- %s\ncomponents:\n", filepath.Join(rel, "default"))
	for _, c := range components {
		overlay += fmt.Sprintf("- %s\n", filepath.Join(rel, c))
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.Render(dir)
	if err != nil {
		t.Fatalf("rendering deploy/default with the components %v: %v", components, err)
	}
	return objs
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the render", kind, name)
	return nil
}

// alertRule is one rule of the PrometheusRule.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// TestMonitoringComponent renders deploy/monitoring onto deploy/default and
// checks that the ServiceMonitor scrapes gatehouse's metrics port and that
// every alert expression names metrics and labels that exist: gatehouse's
// own and controller-runtime's read from the running gatehouse after
// allowed, denied and errored reviews; cert-manager's from cert-manager's
// certificate collector fed the live Certificates; the API server's from
// the local kube-apiserver after a webhook call failed both open and closed.
func TestMonitoringComponent(t *testing.T) {
	objs := renderMonitoring(t)
	rule := findObject(t, objs, "PrometheusRule", "gatehouse")
	if rule.GetNamespace() != localcluster.Namespace {
		t.Errorf("%s %s is in namespace %q, want %s", rule.GetKind(), rule.GetName(), rule.GetNamespace(), localcluster.Namespace)
	}
	// The webhooks' metrics and the audit's (its own Deployment), each
	// scraped on the metrics port of its own Service.
	for _, name := range []string{"gatehouse", "gatehouse-audit"} {
		checkServiceMonitor(t, findObject(t, objs, "ServiceMonitor", name), findObject(t, objs, "Service", name))
	}

	var rules []alertRule
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		raw, _ := json.Marshal(g.(map[string]any)["rules"])
		var rs []alertRule
		if err := json.Unmarshal(raw, &rs); err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
	}
	operations, err := os.ReadFile(filepath.Join(repo, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("rule %q needs alert, a severity label, a summary and a description", r.Alert)
		}
		anchor := "docs/operations.md#" + strings.ToLower(r.Alert)
		if r.Annotations["runbook"] != anchor || !bytes.Contains(operations, []byte("\n#### "+r.Alert+"\n")) {
			t.Errorf("rule %s: its runbook must be %s, a '#### %s' section of docs/operations.md", r.Alert, anchor, r.Alert)
		}
	}
	// The four alerts every admission webhook needs, by the metric each reads.
	for _, metric := range []string{"controller_runtime_webhook_latency_seconds_bucket", "gatehouse_webhook_decisions_total",
		"certmanager_certificate_expiration_timestamp_seconds", "apiserver_admission_webhook_fail_open_count"} {
		if !slices.ContainsFunc(rules, func(r alertRule) bool { return strings.Contains(r.Expr, metric) }) {
			t.Errorf("no alert reads %s", metric)
		}
	}
	// The background audit's failed passes and refused report writes, an
	// audit that completes no pass (a pod killed for its memory counts no
	// failed pass), and exceptions gatehouse cannot evaluate (they excuse
	// nothing), each alerted on the audit's own job.
	for _, metric := range []string{`gatehouse_audit_passes_total{job="gatehouse-audit", result="failed"}`,
		`gatehouse_audit_report_writes_total{job="gatehouse-audit", result="failed"}`, `gatehouse_audit_last_completed_pass_timestamp_seconds{job="gatehouse-audit"}`,
		`gatehouse_audit_exceptions{job="gatehouse-audit", state="Invalid"}`} {
		if !slices.ContainsFunc(rules, func(r alertRule) bool { return strings.Contains(r.Expr, metric) }) {
			t.Errorf("no alert reads %s", metric)
		}
	}

	e := requireCluster(t)
	if e.local == nil {
		t.Skip("the metric check needs the local control plane: it reads gatehouse's metrics on the host")
	}
	exposed := map[string]*dto.MetricFamily{}
	for _, fams := range []map[string]*dto.MetricFamily{gatehouseMetricsAfterTraffic(t, e), certManagerMetrics(t, e), apiServerMetricsAfterFailures(t, e)} {
		for name, f := range fams {
			exposed[name] = f
		}
	}
	// Every alert, except the series the suite's cluster never produces
	// (pendingMetrics, pendingLabels: each names the test that reads it).
	for _, r := range rules {
		sels, byLabels, err := promSelectors(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		if len(sels) == 0 {
			t.Errorf("%s: the expression reads no metric", r.Alert)
		}
		for _, s := range sels {
			s, byLabels, pending := withoutPending(s, byLabels)
			if pending != "" {
				t.Logf("%s: not checked against the scrape: %s", r.Alert, pending)
			}
			if s.metric == "" {
				continue
			}
			if msg := s.check(exposed, byLabels); msg != "" {
				t.Errorf("%s: %s", r.Alert, msg)
			}
		}
	}
	// The dashboard's queries, likewise.
	for _, q := range dashboardQueries(t, objs) {
		sels, byLabels, err := promSelectors(q.expr)
		if err != nil {
			t.Fatalf("dashboard %s: %v", q.where, err)
		}
		for _, s := range sels {
			var pending string
			s, byLabels, pending = withoutPending(s, byLabels)
			if pending != "" {
				t.Logf("dashboard %s: not checked against the scrape: %s", q.where, pending)
			}
			if s.metric == "" {
				continue
			}
			if msg := s.check(exposed, byLabels); msg != "" {
				t.Errorf("dashboard %s: %s", q.where, msg)
			}
		}
	}
}

// checkServiceMonitor: sm is in gatehouse's namespace and scrapes svc's
// metrics port: its selector matches svc's labels, and its one endpoint
// names a port of svc.
func checkServiceMonitor(t *testing.T, sm, svc *unstructured.Unstructured) {
	t.Helper()
	if sm.GetNamespace() != localcluster.Namespace {
		t.Errorf("ServiceMonitor %s is in namespace %q, want %s", sm.GetName(), sm.GetNamespace(), localcluster.Namespace)
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(selector) == 0 {
		t.Errorf("ServiceMonitor %s selects by no label", sm.GetName())
	}
	for k, v := range selector {
		if svc.GetLabels()[k] != v {
			t.Errorf("ServiceMonitor %s selects %s=%s, which Service %s does not carry", sm.GetName(), k, v, svc.GetName())
		}
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor %s: want one endpoint, got %d", sm.GetName(), len(endpoints))
	}
	port, _ := endpoints[0].(map[string]any)["port"].(string)
	found := false
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		found = found || pm["name"] == port
	}
	if !found {
		t.Errorf("ServiceMonitor %s scrapes port %q, which Service %s does not have", sm.GetName(), port, svc.GetName())
	}
}

// pendingMetrics and pendingLabels are series the server exports only after
// an event the suite's cluster never produces, so the live scrape cannot show
// them; each names the test that proves the server exports it.
var (
	pendingMetrics = map[string]string{
		"gatehouse_audit_findings": "a gauge per finding of the last audit pass, absent while the cluster stores no violation; TestTallyPublish (webhooks/audit) reads it",
		// The scraped process serves the webhooks and never audits.
		"gatehouse_audit_exceptions": "a gauge per exception state set by an audit pass, which the scraped webhook process never runs; TestPublishExceptions (webhooks/audit) reads every state",
	}
	// metric -> label -> the value ("" for the label itself) -> why the
	// scrape cannot show it.
	pendingLabels = map[string]map[string]map[string]string{
		"gatehouse_webhook_decisions_total": {"decision": {
			"exempt": "the API server never sends an exempt request the rendered configurations leave out; " +
				"TestExemptionsAreNeverJudged (webhooks) sends one to the server and reads the counter",
			"excused": "no review the suite sends the scraped gatehouse is excused; TestExceptionsWalk excuses a denial and reads " +
				`gatehouse_webhook_decisions_total{decision="excused"} from its own gatehouse`,
		}},
	}
)

// withoutPending drops from s what the server does not export yet: a
// pending metric entirely (metric ""), a pending label or label value from
// the matchers and the aggregation labels.
func withoutPending(s selector, byLabels []string) (selector, []string, string) {
	if why, ok := pendingMetrics[s.metric]; ok {
		return selector{}, byLabels, s.metric + " (" + why + ")"
	}
	pending := pendingLabels[s.metric]
	if pending == nil {
		return s, byLabels, ""
	}
	var dropped []string
	out := selector{metric: s.metric}
	for _, m := range s.matchers {
		values := pending[m.label]
		why, ok := values[""]
		if !ok {
			why, ok = values[m.value]
		}
		if ok {
			dropped = append(dropped, m.label+m.op+m.value+" ("+why+")")
			continue
		}
		out.matchers = append(out.matchers, m)
	}
	var labels []string
	for _, l := range byLabels {
		if why, ok := pending[l][""]; ok {
			dropped = append(dropped, "by "+l+" ("+why+")")
			continue
		}
		labels = append(labels, l)
	}
	if len(dropped) == 0 {
		return s, byLabels, ""
	}
	return out, labels, s.metric + " " + strings.Join(dropped, ", ")
}

// dashboardQuery is one PromQL expression of the Grafana dashboard.
type dashboardQuery struct{ where, expr string }

// grafanaVariables are replaced by values PromQL reads the same way: the
// rate window Grafana computes, and the webhook variable's "All".
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "${webhook}", ".*", "$webhook", ".*")

// dashboardQueries reads the dashboard ConfigMap of the render: every
// panel's targets and every query variable, with Grafana's variables
// replaced.
func dashboardQueries(t *testing.T, objs []*unstructured.Unstructured) []dashboardQuery {
	t.Helper()
	cm := findObject(t, objs, "ConfigMap", "gatehouse-dashboard")
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "gatehouse.json")
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal([]byte(raw), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard has no uid or no panels")
	}
	var out []dashboardQuery
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for i, target := range p.Targets {
			out = append(out, dashboardQuery{fmt.Sprintf("panel %q query %d", p.Title, i+1), grafanaVariables.Replace(target.Expr)})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_]+\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		text, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("dashboard variable %s: query %q is not label_values(SELECTOR, LABEL)", v.Name, text)
			continue
		}
		out = append(out, dashboardQuery{"variable " + v.Name, m[1]})
	}
	return out
}

// TestMonitoringDashboard checks the Grafana dashboard deploy/monitoring
// ships without a cluster: a ConfigMap Grafana's sidecar collects, in
// gatehouse's namespace, whose every query scans as PromQL, reads a metric,
// and whose panels together read the decisions by webhook, decision, code
// and mode, the exempt and excused requests, the latency, the errors and
// failed calls, the certificates' expiry, the audit findings and the
// exceptions by state. Its panels have unique ids and do not overlap.
// TestMonitoringComponent checks each query against the metrics really
// exported.
func TestMonitoringDashboard(t *testing.T) {
	objs := renderMonitoring(t)
	cm := findObject(t, objs, "ConfigMap", "gatehouse-dashboard")
	if cm.GetNamespace() != localcluster.Namespace || cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap is in %q with labels %v; want %s and grafana_dashboard=1", cm.GetNamespace(), cm.GetLabels(), localcluster.Namespace)
	}
	var all strings.Builder
	for _, q := range dashboardQueries(t, objs) {
		sels, _, err := promSelectors(q.expr)
		if err != nil {
			t.Errorf("dashboard %s: %v", q.where, err)
			continue
		}
		if len(sels) == 0 {
			t.Errorf("dashboard %s reads no metric", q.where)
		}
		all.WriteString(q.expr + "\n")
	}
	for _, want := range []string{
		"by (webhook, decision)", "by (webhook, code)", "by (webhook, mode)", `decision="exempt"`, `decision="errored"`,
		"controller_runtime_webhook_latency_seconds_bucket", "apiserver_admission_webhook_rejection_count",
		"apiserver_admission_webhook_fail_open_count", "certmanager_certificate_expiration_timestamp_seconds", "gatehouse_audit_findings",
		`decision="excused"`, "by (state) (gatehouse_audit_exceptions",
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no dashboard query reads %s", want)
		}
	}
	checkDashboardLayout(t, cm)
}

// checkDashboardLayout: every panel of the dashboard ConfigMap has an id of
// its own, reads the dashboard's datasource variable, and sits on Grafana's
// 24 columns without overlapping another.
func checkDashboardLayout(t *testing.T, cm *unstructured.Unstructured) {
	t.Helper()
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "gatehouse.json")
	type grid struct{ X, Y, W, H int }
	var dash struct {
		Panels []struct {
			ID         int    `json:"id"`
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos grid `json:"gridPos"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(raw), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	ids := map[int]string{}
	for i, p := range dash.Panels {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("dashboard panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("dashboard panel %q reads datasource %q, want ${datasource}", p.Title, p.Datasource.UID)
		}
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("dashboard panel %q: gridPos %+v is not within 24 columns", p.Title, g)
		}
		for _, q := range dash.Panels[:i] {
			o := q.GridPos
			if g.X < o.X+o.W && o.X < g.X+g.W && g.Y < o.Y+o.H && o.Y < g.Y+g.H {
				t.Errorf("dashboard panels %q %+v and %q %+v overlap", q.Title, o, p.Title, g)
			}
		}
	}
}

// targetLabels are added by Prometheus and the Prometheus Operator at scrape
// time; the exposition itself does not carry them.
var targetLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "pod": true, "service": true, "endpoint": true, "container": true}

// selector is a metric name with its label matchers, from an expression.
type selector struct {
	metric   string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// check returns why the selector would select no exported series, or "".
func (s selector) check(exposed map[string]*dto.MetricFamily, byLabels []string) string {
	family, ok := exposed[s.metric]
	if !ok {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, cut := strings.CutSuffix(s.metric, suffix); cut {
				if f, ok := exposed[base]; ok && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
					family = f
				}
			}
		}
	}
	if family == nil {
		return fmt.Sprintf("metric %s is not exported", s.metric)
	}
	labels := map[string]bool{"le": family.GetType() == dto.MetricType_HISTOGRAM}
	for _, m := range family.GetMetric() {
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = true
		}
	}
	for _, l := range byLabels {
		if !labels[l] && !targetLabels[l] {
			return fmt.Sprintf("aggregation label %s is neither a label of %s nor a target label", l, s.metric)
		}
	}
	for _, series := range family.GetMetric() {
		if s.matches(series) {
			return ""
		}
	}
	return fmt.Sprintf("%s%v selects none of the %d exported series", s.metric, s.matchers, len(family.GetMetric()))
}

func (s selector) matches(series *dto.Metric) bool {
	got := map[string]string{}
	for _, l := range series.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for _, m := range s.matchers {
		v, has := got[m.label]
		if !has && targetLabels[m.label] {
			continue // set at scrape time
		}
		switch m.op {
		case "=":
			if v != m.value {
				return false
			}
		case "!=":
			if v == m.value {
				return false
			}
		case "=~", "!~":
			re, err := regexp.Compile("^(?:" + m.value + ")$")
			if err != nil || re.MatchString(v) != (m.op == "=~") {
				return false
			}
		}
	}
	return true
}

// promKeywords are PromQL words that are not metric names: operators,
// modifiers and the aggregations (which may be followed by "by" rather
// than a parenthesis).
var promKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "offset": true, "bool": true, "by": true, "without": true,
	"on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true, "count": true,
	"count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true,
}

var promToken = regexp.MustCompile(`^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[a-zA-Z_:][a-zA-Z0-9_:]*|[0-9][0-9a-zA-Z.]*|=~|!~|!=|==|>=|<=|[-+*/%^(){}\[\],<>=])`)

// promSelectors extracts the metric selectors and the by/without label
// names of a PromQL expression. It is a scanner, not a parser: enough for
// the names an alert expression reads, and it checks the brackets balance.
func promSelectors(expr string) ([]selector, []string, error) {
	var toks []string
	for rest := strings.TrimSpace(expr); rest != ""; rest = strings.TrimSpace(rest) {
		tok := promToken.FindString(rest)
		if tok == "" {
			return nil, nil, fmt.Errorf("cannot scan %q", rest[:min(20, len(rest))])
		}
		toks = append(toks, tok)
		rest = rest[len(tok):]
	}
	depth := map[string]int{}
	for _, tok := range toks {
		switch tok {
		case "(", "{", "[":
			depth[tok]++
		case ")":
			depth["("]--
		case "}":
			depth["{"]--
		case "]":
			depth["["]--
		}
	}
	for open, d := range depth {
		if d != 0 {
			return nil, nil, fmt.Errorf("unbalanced %q", open)
		}
	}
	isIdent := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	var sels []selector
	var byLabels []string
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case tok == "[":
			for i < len(toks) && toks[i] != "]" {
				i++
			}
		case (tok == "by" || tok == "without" || tok == "on" || tok == "ignoring" || tok == "group_left" || tok == "group_right") && next == "(":
			for i += 2; i < len(toks) && toks[i] != ")"; i++ {
				if toks[i] != "," {
					byLabels = append(byLabels, toks[i])
				}
			}
		case tok == "offset":
			i++ // the duration
		case tok == "{":
			return nil, nil, fmt.Errorf("a selector without a metric name")
		case isIdent.MatchString(tok) && !promKeywords[tok] && next != "(":
			s := selector{metric: tok}
			if next == "{" {
				for i += 2; i < len(toks) && toks[i] != "}"; i++ {
					if toks[i] == "," {
						continue
					}
					if i+2 >= len(toks) {
						return nil, nil, fmt.Errorf("a truncated matcher in %s", tok)
					}
					value := toks[i+2]
					unquoted, err := unquotePromString(value)
					if err != nil {
						return nil, nil, fmt.Errorf("matcher %s%s%s: %w", toks[i], toks[i+1], value, err)
					}
					s.matchers = append(s.matchers, matcher{label: toks[i], op: toks[i+1], value: unquoted})
					i += 2
				}
			}
			sels = append(sels, s)
		}
	}
	return sels, byLabels, nil
}

func unquotePromString(s string) (string, error) {
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') || s[len(s)-1] != s[0] {
		return "", fmt.Errorf("not a string")
	}
	// PromQL strings escape as Go strings do.
	var out string
	if err := json.Unmarshal([]byte(`"`+strings.ReplaceAll(s[1:len(s)-1], `"`, `\"`)+`"`), &out); err != nil {
		return "", err
	}
	return out, nil
}

// gatehouseMetricsAfterTraffic sends an allowed and a denied review through
// the API server and a misrouted one straight to gatehouse (an errored
// decision), then scrapes gatehouse.
func gatehouseMetricsAfterTraffic(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)
	if err := e.client.Create(ctx, pvc(ns, "allowed", "node"), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Create(ctx, pvc(ns, "denied", "node,,pod"), client.DryRunAll); err == nil {
		t.Fatal("a PVC with an empty scope entry was admitted")
	}
	// A ConfigMap review sent to secret-scope, which does not intercept
	// ConfigMaps: the handler refuses it (400), an errored decision.
	cm, _ := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "misrouted", Namespace: ns}})
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "e2e-misrouted", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: "misrouted",
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: cm},
		},
	}
	body, _ := json.Marshal(review)
	ca, err := os.ReadFile(filepath.Join(e.local.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	resp, err := hc.Post(e.local.Gatehouse.URL+"/validate/secret-scope", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	raw, err := e.local.Gatehouse.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return parseMetrics(t, raw)
}

// certManagerMetrics serves cert-manager's own metrics with its certificate
// collector fed the live gatehouse Certificates, and scrapes them.
func certManagerMetrics(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	var list cmapi.CertificateList
	if err := e.client.List(context.Background(), &list, client.InNamespace(localcluster.Namespace)); err != nil {
		t.Fatal(err)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range list.Items {
		if err := indexer.Add(&list.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	m := cmmetrics.New(logr.Discard(), clock.RealClock{})
	m.SetupCertificateCollector(cmlisters.NewCertificateLister(indexer))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := m.NewServer(ln)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseMetrics(t, raw)
}

// apiServerMetricsAfterFailures registers two probe webhooks that call an
// address where nothing listens, one failing open and one closed, for
// labelled ConfigMaps only, sends one such ConfigMap, and scrapes the API
// server.
func apiServerMetricsAfterFailures(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	ctx := context.Background()
	dead, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	probe := func(name, policy string) map[string]any {
		return map[string]any{
			"name": name + ".gatehouse.dev", "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
			"timeoutSeconds": int64(2), "clientConfig": map[string]any{"url": "https://" + dead + "/validate/" + name},
			"rules":          []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"}}},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"e2e.gatehouse.dev/probe": "monitoring"}},
		}
	}
	wc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "gatehouse-e2e-monitoring-probes"},
		"webhooks": []any{probe("fail-open-probe", "Ignore"), probe("fail-closed-probe", "Fail")},
	}}
	if err := e.client.Create(ctx, wc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), wc) })
	ns := testNamespace(t, e, t.Name()+"/probes", nil, nil)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe", Labels: map[string]string{"e2e.gatehouse.dev/probe": "monitoring"}}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return failedCall.MatchString(fmt.Sprint(e.client.Create(ctx, cm.DeepCopy(), client.DryRunAll))), nil
	})
	if err != nil {
		t.Fatal("the probe webhooks were never called")
	}
	// A managed namespace label stripped through namespaces/status, which
	// the admission policy gatehouse-managed-labels refuses.
	labelled := testNamespace(t, e, t.Name()+"/managed-label", nil, map[string]string{serverOptions().HarnessedNamespaceLabel: "true"})
	got := &corev1.Namespace{}
	if err := e.client.Get(ctx, client.ObjectKey{Name: labelled}, got); err != nil {
		t.Fatal(err)
	}
	delete(got.Labels, serverOptions().HarnessedNamespaceLabel)
	if err := e.client.SubResource("status").Update(ctx, got, client.DryRunAll); !refusedByManagedLabels(err, serverOptions().HarnessedNamespaceLabel) {
		t.Fatalf("the managed label stripped through namespaces/status: want the policy's refusal, got %v", err)
	}
	return apiServerMetrics(t, e)
}
