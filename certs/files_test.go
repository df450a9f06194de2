package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

const (
	// waitFor bounds every wait; the machine may be slow, so it is generous.
	waitFor = 20 * time.Second
	// poll is both the source's re-read interval and the tests' check interval.
	poll = 50 * time.Millisecond
)

// eventually polls cond until it returns true or waitFor passes. cond returns
// a description of the current state for the failure message.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; last state: %s", what, state)
		}
		time.Sleep(poll)
	}
}

// startSource runs s.Start until the test ends, then checks that it returns.
func startSource(t *testing.T, s *FileSource) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Start() = %v after cancel, want nil", err)
			}
		case <-time.After(waitFor):
			t.Errorf("Start() did not return within %v of cancel", waitFor)
		}
	})
}

// servedLeaf returns the DER of the certificate s currently serves.
func servedLeaf(s *FileSource) ([]byte, error) {
	c, err := s.GetCertificate(nil)
	if err != nil {
		return nil, err
	}
	if c == nil || len(c.Certificate) == 0 {
		return nil, errors.New("no certificate")
	}
	return c.Certificate[0], nil
}

func caPool(t *testing.T, b DevBundle) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	p.AddCert(readCert(t, b.CAFile))
	return p
}

func TestFileSourceNotLoaded(t *testing.T) {
	s := NewFileSource(t.TempDir(), poll, logr.Discard())

	c, err := s.GetCertificate(nil)
	if c != nil || !errors.Is(err, errNotLoaded) {
		t.Errorf("GetCertificate() = %v, %v; want nil, %v", c, err, errNotLoaded)
	}
	err = s.Ready(nil)
	if !errors.Is(err, errNotLoaded) {
		t.Errorf("Ready() = %v, want %v", err, errNotLoaded)
	}
	if err == nil || !strings.Contains(err.Error(), "not loaded") {
		t.Errorf("Ready() = %v, want it to say the certificate is not loaded", err)
	}
	// Handshakes fail rather than serve nothing.
	if _, err := handshake(t, s.GetCertificate, x509.NewCertPool(), "localhost"); err == nil {
		t.Errorf("handshake without a certificate succeeded")
	}
}

func TestFileSourceLoadAndReload(t *testing.T) {
	dir := t.TempDir()
	s := NewFileSource(dir, poll, logr.Discard())
	startSource(t, s)

	// While the directory is empty, Ready reports why.
	eventually(t, "Ready to report the missing files", func() (bool, string) {
		err := s.Ready(nil)
		return errors.Is(err, errNotLoaded) && errors.Is(err, fs.ErrNotExist), "Ready() = " + errString(err)
	})
	if err := s.Ready(nil); !strings.Contains(err.Error(), "not loaded") {
		t.Errorf("Ready() = %v, want it to say the certificate is not loaded", err)
	}
	if _, err := s.GetCertificate(nil); !errors.Is(err, errNotLoaded) {
		t.Errorf("GetCertificate() error = %v, want %v", err, errNotLoaded)
	}

	// The files appear.
	b1, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want1 := readPEM(t, b1.CertFile, "CERTIFICATE")
	serial1 := readCert(t, b1.CertFile).SerialNumber
	eventually(t, "the first certificate to load", func() (bool, string) {
		return s.Ready(nil) == nil, "Ready() = " + errString(s.Ready(nil))
	})
	got1, err := servedLeaf(s)
	if err != nil {
		t.Fatalf("GetCertificate() after Ready: %v", err)
	}
	if !bytes.Equal(got1, want1) {
		t.Fatalf("served certificate is not the one in %s", b1.CertFile)
	}
	roots1 := caPool(t, b1)
	leaf, err := handshake(t, s.GetCertificate, roots1, "localhost")
	if err != nil {
		t.Fatalf("handshake with the first certificate: %v", err)
	}
	if !bytes.Equal(leaf, want1) {
		t.Errorf("handshake presented another certificate than %s", b1.CertFile)
	}

	// The files are replaced: the new certificate is served without a restart.
	b2, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want2 := readPEM(t, b2.CertFile, "CERTIFICATE")
	if readCert(t, b2.CertFile).SerialNumber.Cmp(serial1) == 0 {
		t.Fatalf("second Dev() produced the same serial")
	}
	eventually(t, "the second certificate to load", func() (bool, string) {
		got, err := servedLeaf(s)
		if err != nil {
			return false, "GetCertificate() error = " + err.Error()
		}
		return bytes.Equal(got, want2), "still serving the first certificate"
	})
	if err := s.Ready(nil); err != nil {
		t.Errorf("Ready() after reload = %v, want nil", err)
	}
	leaf, err = handshake(t, s.GetCertificate, caPool(t, b2), "localhost")
	if err != nil {
		t.Fatalf("handshake with the second certificate: %v", err)
	}
	if !bytes.Equal(leaf, want2) {
		t.Errorf("handshake presented another certificate than %s", b2.CertFile)
	}
	if _, err := handshake(t, s.GetCertificate, roots1, "localhost"); err == nil {
		t.Errorf("handshake trusting only the first CA succeeded after the reload")
	}
}

func TestFileSourceAlreadyPresent(t *testing.T) {
	dir := t.TempDir()
	b, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := readPEM(t, b.CertFile, "CERTIFICATE")
	s := NewFileSource(dir, poll, logr.Discard())
	startSource(t, s)
	eventually(t, "the certificate to load", func() (bool, string) {
		return s.Ready(nil) == nil, "Ready() = " + errString(s.Ready(nil))
	})
	got, err := servedLeaf(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("served certificate is not the one in %s", b.CertFile)
	}
}

// TestFileSourceMismatchedPair checks that a certificate and a key that do
// not belong together are not served, that Ready says why, and that the
// source recovers once the pair is fixed.
func TestFileSourceMismatchedPair(t *testing.T) {
	a, err := Dev(t.TempDir(), devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Dev(t.TempDir(), devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyFile(t, a.CertFile, filepath.Join(dir, CertFile))
	copyFile(t, other.KeyFile, filepath.Join(dir, KeyFile))

	s := NewFileSource(dir, poll, logr.Discard())
	startSource(t, s)
	eventually(t, "Ready to report the mismatch", func() (bool, string) {
		err := s.Ready(nil)
		return errors.Is(err, errNotLoaded) && err != nil && strings.Contains(err.Error(), "private key does not match public key"),
			"Ready() = " + errString(err)
	})
	if _, err := s.GetCertificate(nil); !errors.Is(err, errNotLoaded) {
		t.Errorf("GetCertificate() with a mismatched pair: error = %v, want %v", err, errNotLoaded)
	}

	// Fix the pair: put the matching key in place.
	copyFile(t, a.KeyFile, filepath.Join(dir, KeyFile))
	want := readPEM(t, a.CertFile, "CERTIFICATE")
	eventually(t, "the fixed pair to load", func() (bool, string) {
		got, err := servedLeaf(s)
		if err != nil {
			return false, "GetCertificate() error = " + err.Error()
		}
		return bytes.Equal(got, want), "serving another certificate"
	})
	if err := s.Ready(nil); err != nil {
		t.Errorf("Ready() = %v, want nil", err)
	}
}

// TestFileSourceStopWhileWaiting checks that Start returns nil when its
// context ends before any certificate appeared.
func TestFileSourceStopWhileWaiting(t *testing.T) {
	s := NewFileSource(t.TempDir(), poll, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Start(ctx) }()
	eventually(t, "the first load attempt", func() (bool, string) {
		err := s.Ready(nil)
		return errors.Is(err, fs.ErrNotExist), "Ready() = " + errString(err)
	})
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Start() = %v, want nil", err)
		}
	case <-time.After(waitFor):
		t.Fatalf("Start() did not return within %v of cancel", waitFor)
	}
	if err := s.Ready(nil); !errors.Is(err, errNotLoaded) {
		t.Errorf("Ready() after stop = %v, want %v", err, errNotLoaded)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
