package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// FileSource serves the certificate in a directory (tls.crt, tls.key) and
// reloads it when the files change, without a restart: on file events and,
// for Secret volumes whose symlink swaps file watches can miss, by polling.
// Until the files exist and hold a valid pair, the source has no
// certificate: handshakes fail and Ready reports the reason.
type FileSource struct {
	certPath, keyPath string
	poll              time.Duration
	log               logr.Logger
	watcher           atomic.Pointer[certwatcher.CertWatcher]
	lastErr           atomic.Pointer[error]
}

// NewFileSource watches dir; poll is how often the files are re-read.
func NewFileSource(dir string, poll time.Duration, log logr.Logger) *FileSource {
	return &FileSource{
		certPath: filepath.Join(dir, CertFile),
		keyPath:  filepath.Join(dir, KeyFile),
		poll:     poll,
		log:      log,
	}
}

// errNotLoaded is returned until the first certificate is loaded.
var errNotLoaded = errors.New("serving certificate not loaded yet")

// Start waits for a valid certificate pair, then watches it until ctx ends.
func (s *FileSource) Start(ctx context.Context) error {
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	for {
		w, err := certwatcher.New(s.certPath, s.keyPath)
		if err == nil {
			s.watcher.Store(w.WithWatchInterval(s.poll))
			s.log.Info("serving certificate loaded", "cert", s.certPath)
			return w.Start(ctx)
		}
		s.lastErr.Store(&err)
		s.log.Info("waiting for the serving certificate", "cert", s.certPath, "reason", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// GetCertificate is a tls.Config.GetCertificate.
func (s *FileSource) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	w := s.watcher.Load()
	if w == nil {
		return nil, errNotLoaded
	}
	return w.GetCertificate(hello)
}

// Ready is a readiness check: it fails until a certificate is loaded.
func (s *FileSource) Ready(*http.Request) error {
	if s.watcher.Load() != nil {
		return nil
	}
	if err := s.lastErr.Load(); err != nil {
		return errors.Join(errNotLoaded, *err)
	}
	return errNotLoaded
}
