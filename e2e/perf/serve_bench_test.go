package perf

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// BenchmarkServeHTTPS is one review of the corpus through `gatehouse serve`
// over loopback HTTPS with keep-alive, in this process (so -cpuprofile
// shows the server's TLS, HTTP, decode, evaluation and logging next to each
// other; the client's share is in the profile too). Without a cluster,
// `serve --dev` serves no state webhook, so the corpus leaves them out.
func BenchmarkServeHTTPS(b *testing.B) {
	srv := startServeOnce(b)
	if srv.err != nil {
		b.Fatal(srv.err)
	}
	b.ResetTimer()
	benchSend(b, srv.client, srv.base, srv.reviews)
}

// servedGatehouse is the one `gatehouse serve` of the test binary: the
// benchmark function runs several times, and controller-runtime's global
// logger keeps the first server's log.
type servedGatehouse struct {
	base    string
	client  *http.Client
	reviews []Review
	err     error
}

var (
	serveOnce sync.Once
	served    servedGatehouse
)

// startServeOnce starts `gatehouse serve --dev` in this process for the rest
// of the test binary's life, logging to an unlinked file (real writes, no
// leftovers).
func startServeOnce(b *testing.B) *servedGatehouse {
	serveOnce.Do(func() {
		served.err = func() error {
			fixtures, err := ReadFixtures(repoRoot(b))
			if err != nil {
				return err
			}
			// serve --dev reads no cluster, so it serves no cluster-state webhook.
			registry := slices.DeleteFunc(slices.Clone(route.Registry()), func(d route.Definition) bool { return !app.ServedWithoutCluster(d.Name) })
			corpus, err := Build(fixtures, registry, route.OptionsFromConfig(configv1alpha1.Default()))
			if err != nil {
				return err
			}
			served.reviews = corpus.Reviews
			dir, err := os.MkdirTemp("", "gatehouse-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir) // the server has read its certificate by the time this runs
			port, err := FreePort()
			if err != nil {
				return err
			}
			probe, err := FreePort()
			if err != nil {
				return err
			}
			logFile, err := os.Create(filepath.Join(dir, "gatehouse.log"))
			if err != nil {
				return err
			}
			go app.Run(context.Background(), []string{"serve", "--dev", "--dev-dir", filepath.Join(dir, "dev"), "--port", strconv.Itoa(port),
				"--probe-address", "127.0.0.1:" + strconv.Itoa(probe), "--metrics-address", "0", "--shutdown-delay", "0s"},
				strings.NewReader(""), logFile, logFile)
			ready := HTTPReady("http://127.0.0.1:" + strconv.Itoa(probe) + "/readyz")
			for deadline := time.Now().Add(30 * time.Second); !ready(); {
				if time.Now().After(deadline) {
					return errors.New("gatehouse serve not ready after 30s")
				}
				time.Sleep(50 * time.Millisecond)
			}
			served.client, err = NewClient(filepath.Join(dir, "dev", "ca.crt"), 4)
			served.base = "https://127.0.0.1:" + strconv.Itoa(port)
			return err
		}()
	})
	return &served
}

func benchSend(b *testing.B, client *http.Client, base string, reviews []Review) {
	b.ReportAllocs()
	b.SetParallelism(2) // 2 x GOMAXPROCS requests in flight
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := reviews[i%len(reviews)]
			i++
			if _, kind := send(context.Background(), client, base, r); kind != "" {
				b.Errorf("%s: %s", r.Fixture, kind)
				return
			}
		}
	})
}
