package localcluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
)

// Gatehouse is `gatehouse serve` running in this process through the same
// command-line entry point as the binary.
type Gatehouse struct {
	// URL is the base URL the API server calls.
	URL string
	// Port is the webhook port; ProbeAddr serves /readyz.
	Port      int
	ProbeAddr string
	// Log is the file its JSON log lines go to.
	Log  string
	done chan int
}

// StartGatehouse serves gatehouse with the certificate in certDir, reading
// cluster state through kubeconfig, and waits until it is ready.
func StartGatehouse(ctx context.Context, certDir, workDir, kubeconfig string) (*Gatehouse, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	probePort, err := freePort()
	if err != nil {
		return nil, err
	}
	g := &Gatehouse{
		URL:       "https://127.0.0.1:" + strconv.Itoa(port),
		Port:      port,
		ProbeAddr: "127.0.0.1:" + strconv.Itoa(probePort),
		Log:       filepath.Join(workDir, "gatehouse.log"),
		done:      make(chan int, 1),
	}
	logFile, err := os.Create(g.Log)
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--cert-dir", certDir, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--probe-address", g.ProbeAddr, "--metrics-address", "0", "--shutdown-delay", "0s", "--cert-poll-interval", "1s",
		"--kubeconfig", kubeconfig, "--reconcile-dependencygroups", "--leader-election-namespace", "default"}
	go func() {
		defer logFile.Close()
		g.done <- app.Run(ctx, args, strings.NewReader(""), logFile, logFile)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + g.ProbeAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		select {
		case code := <-g.done:
			return nil, fmt.Errorf("gatehouse serve exited with %d; see %s", code, g.Log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("gatehouse serve not ready after a minute; see %s", g.Log)
		}
	}
}

// Wait waits up to timeout for gatehouse to exit after its context ended.
func (g *Gatehouse) Wait(timeout time.Duration) {
	select {
	case <-g.done:
	case <-time.After(timeout):
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}
