package audit

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
)

// The background audit's metrics. Labels carry names and codes only.
var (
	findingsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatehouse_audit_findings",
		Help: "Findings on stored objects in the last completed audit pass, by webhook, finding code and the webhook's mode.",
	}, []string{"webhook", "code", "mode"})
	objectsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gatehouse_audit_objects_total",
		Help: "Stored objects reviewed by the background audit.",
	})
	passesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_audit_passes_total",
		Help: "Background audit passes, by result (completed, failed).",
	}, []string{"result"})
	passSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gatehouse_audit_pass_duration_seconds",
		Help: "Wall time of the last completed background audit pass.",
	})
	lastCompleted = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gatehouse_audit_last_completed_pass_timestamp_seconds",
		Help: "When the last background audit pass completed (Unix time; 0 before the first).",
	})
	intervalSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gatehouse_audit_interval_seconds",
		Help: "The background audit's interval (audit.interval); 0 where no audit runs.",
	})
	reportWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_audit_report_writes_total",
		Help: "Report writes and deletions of the background audit, by result (done, skipped: the namespace is Terminating or gone, failed: refused by the API server).",
	}, []string{"result"})
)

// exceptionsGauge counts the exceptions by what the last pass found them to
// do (exception.State): Used, Unused (excused nothing), Expired, Disabled,
// Invalid. No exception's name is a label: the log line of each pass names
// the ones that excused nothing.
var exceptionsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gatehouse_audit_exceptions",
	Help: "Exceptions by what the last completed audit pass found them to do (Used, Unused, Expired, Disabled, Invalid).",
}, []string{"state"})

// PublishExceptions sets gatehouse_audit_exceptions from one pass's
// statuses: every state is a series, zero when no exception is in it.
func PublishExceptions(statuses []exception.Status) {
	counts := map[exception.State]int{}
	for _, s := range statuses {
		counts[s.State]++
	}
	for _, state := range []exception.State{exception.StateUsed, exception.StateUnused, exception.StateExpired, exception.StateDisabled, exception.StateInvalid} {
		exceptionsGauge.WithLabelValues(string(state)).Set(float64(counts[state]))
	}
}

// The results of a report write (gatehouse_audit_report_writes_total).
const (
	WriteDone    = "done"
	WriteSkipped = "skipped"
	WriteFailed  = "failed"
)

func init() {
	metrics.Registry.MustRegister(findingsGauge, objectsTotal, passesTotal, passSeconds, lastCompleted, intervalSeconds, reportWrites, exceptionsGauge)
	// Every series exists from the start, so that increase() sees the
	// first failure.
	for _, result := range []string{"completed", "failed"} {
		passesTotal.WithLabelValues(result)
	}
	for _, result := range []string{WriteDone, WriteSkipped, WriteFailed} {
		reportWrites.WithLabelValues(result)
	}
}

// Started records that the background audit runs here, every interval.
func Started(interval time.Duration) { intervalSeconds.Set(interval.Seconds()) }

// ReportWrite counts one report write or deletion by its result.
func ReportWrite(result string) { reportWrites.WithLabelValues(result).Inc() }

// Tally counts findings by webhook, code and mode over one pass.
type Tally map[[3]string]int

// Add counts the findings of r.
func (t Tally) Add(r Result) {
	for _, d := range r.Decisions {
		mode := d.ModeName()
		for _, f := range d.Findings {
			if f.Severity == policies.Deny && r.Excused[FindingKey{Webhook: d.Webhook, Code: f.Code, Field: f.Field}] == "" {
				t[[3]string{d.Webhook, string(f.Code), mode}]++
			}
		}
	}
}

// Publish replaces the findings gauge with t, and records a completed pass
// of objects in seconds.
func (t Tally) Publish(objects int, seconds float64) {
	findingsGauge.Reset()
	for k, n := range t {
		findingsGauge.WithLabelValues(k[0], k[1], k[2]).Set(float64(n))
	}
	objectsTotal.Add(float64(objects))
	passSeconds.Set(seconds)
	lastCompleted.SetToCurrentTime()
	passesTotal.WithLabelValues("completed").Inc()
}

// PassFailed records a pass that did not complete (its findings are not
// published: a partial count would read as fixed objects).
func PassFailed() { passesTotal.WithLabelValues("failed").Inc() }
