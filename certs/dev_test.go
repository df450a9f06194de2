package certs

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// readPEM reads the single PEM block of the given type in path.
func readPEM(t *testing.T, path, typ string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	if block.Type != typ {
		t.Fatalf("%s: PEM type %q, want %q", path, block.Type, typ)
	}
	if len(strings.TrimSpace(string(rest))) != 0 {
		t.Fatalf("%s: trailing data after the PEM block: %q", path, rest)
	}
	return block.Bytes
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(readPEM(t, path, "CERTIFICATE"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func TestDevFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "certs")
	b, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatalf("Dev() error = %v", err)
	}
	want := DevBundle{
		Dir:      dir,
		CertFile: filepath.Join(dir, "tls.crt"),
		KeyFile:  filepath.Join(dir, "tls.key"),
		CAFile:   filepath.Join(dir, "ca.crt"),
	}
	if b != want {
		t.Errorf("Dev() = %+v, want %+v", b, want)
	}

	// Exactly the three files, no temporary files left behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if wantNames := []string{"ca.crt", "tls.crt", "tls.key"}; !slices.Equal(names, wantNames) {
		t.Errorf("files in dir = %v, want %v", names, wantNames)
	}

	modes := []struct {
		path string
		mode os.FileMode
	}{
		{dir, os.ModeDir | 0o700},
		{b.KeyFile, 0o600},
		{b.CertFile, 0o644},
		{b.CAFile, 0o644},
	}
	for _, m := range modes {
		fi, err := os.Stat(m.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != m.mode {
			t.Errorf("mode of %s = %v, want %v", m.path, got, m.mode)
		}
	}

	readPEM(t, b.KeyFile, "PRIVATE KEY")
	readPEM(t, b.CertFile, "CERTIFICATE")
	readPEM(t, b.CAFile, "CERTIFICATE")
}

func TestDevCertificates(t *testing.T) {
	dir := t.TempDir()
	before := time.Now()
	b, err := Dev(dir, devHosts, 24*time.Hour)
	if err != nil {
		t.Fatalf("Dev() error = %v", err)
	}
	after := time.Now()

	ca := readCert(t, b.CAFile)
	leaf := readCert(t, b.CertFile)

	t.Run("CA", func(t *testing.T) {
		if !ca.IsCA || !ca.BasicConstraintsValid {
			t.Errorf("CA: IsCA = %v, BasicConstraintsValid = %v; want both true", ca.IsCA, ca.BasicConstraintsValid)
		}
		if ca.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Errorf("CA KeyUsage = %b, want CertSign", ca.KeyUsage)
		}
		if err := ca.CheckSignatureFrom(ca); err != nil {
			t.Errorf("CA is not self-signed: %v", err)
		}
	})

	t.Run("serving certificate", func(t *testing.T) {
		if leaf.IsCA {
			t.Errorf("serving certificate IsCA = true")
		}
		if err := leaf.CheckSignatureFrom(ca); err != nil {
			t.Errorf("serving certificate not signed by the CA: %v", err)
		}
		if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
			t.Errorf("ExtKeyUsage = %v, want [ServerAuth]", leaf.ExtKeyUsage)
		}
		if !slices.Equal(leaf.DNSNames, []string{"localhost"}) {
			t.Errorf("DNSNames = %v, want [localhost]", leaf.DNSNames)
		}
		var ips []string
		for _, ip := range leaf.IPAddresses {
			ips = append(ips, ip.String())
		}
		if !slices.Equal(ips, []string{"127.0.0.1", "::1"}) {
			t.Errorf("IPAddresses = %v, want [127.0.0.1 ::1]", ips)
		}
		if leaf.Subject.CommonName != "localhost" {
			t.Errorf("CommonName = %q, want localhost", leaf.Subject.CommonName)
		}
		if leaf.SerialNumber.Cmp(ca.SerialNumber) == 0 {
			t.Errorf("serving certificate and CA share serial %v", leaf.SerialNumber)
		}
	})

	t.Run("validity", func(t *testing.T) {
		// Certificate times have a resolution of one second.
		for _, c := range []*x509.Certificate{ca, leaf} {
			lo := before.Add(24 * time.Hour).Truncate(time.Second)
			hi := after.Add(24 * time.Hour)
			if c.NotAfter.Before(lo) || c.NotAfter.After(hi) {
				t.Errorf("%s NotAfter = %v, want between %v and %v", c.Subject.CommonName, c.NotAfter, lo, hi)
			}
			if !c.NotBefore.Before(before) {
				t.Errorf("%s NotBefore = %v, want before %v", c.Subject.CommonName, c.NotBefore, before)
			}
		}
	})

	t.Run("verify", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		tests := []struct {
			host   string
			wantOK bool
		}{
			{"localhost", true},
			{"127.0.0.1", true},
			{"::1", true},
			{"example.com", false},
			{"127.0.0.2", false},
			{"gatehouse.default.svc", false},
		}
		for _, tt := range tests {
			t.Run(tt.host, func(t *testing.T) {
				_, err := leaf.Verify(x509.VerifyOptions{
					DNSName:   tt.host,
					Roots:     roots,
					KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				})
				if (err == nil) != tt.wantOK {
					t.Errorf("Verify(%q) error = %v, want ok = %v", tt.host, err, tt.wantOK)
				}
			})
		}
		// Not for client authentication.
		if _, err := leaf.Verify(x509.VerifyOptions{
			DNSName:   "localhost",
			Roots:     roots,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}); err == nil {
			t.Errorf("Verify(ClientAuth) = nil, want error")
		}
		// Not against the system roots or an empty pool.
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: x509.NewCertPool()}); err == nil {
			t.Errorf("Verify with an empty root pool = nil, want error")
		}
	})

	t.Run("key pair", func(t *testing.T) {
		certPEM, err := os.ReadFile(b.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		keyPEM, err := os.ReadFile(b.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatalf("tls.X509KeyPair() error = %v", err)
		}
		if !reflect.DeepEqual(pair.Certificate, [][]byte{leaf.Raw}) {
			t.Errorf("key pair chain is not just the serving certificate")
		}
		// The CA certificate does not go with the serving key.
		caPEM, err := os.ReadFile(b.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tls.X509KeyPair(caPEM, keyPEM); err == nil {
			t.Errorf("tls.X509KeyPair(ca.crt, tls.key) = nil error, want mismatch")
		}
	})
}

func TestDevHosts(t *testing.T) {
	tests := []struct {
		name     string
		hosts    []string
		wantCN   string
		wantDNS  []string
		wantIPs  []string
		verifies []string
	}{
		{
			name:     "service names",
			hosts:    []string{"gatehouse.gatehouse.svc", "gatehouse.gatehouse.svc.cluster.local"},
			wantCN:   "gatehouse.gatehouse.svc",
			wantDNS:  []string{"gatehouse.gatehouse.svc", "gatehouse.gatehouse.svc.cluster.local"},
			verifies: []string{"gatehouse.gatehouse.svc", "gatehouse.gatehouse.svc.cluster.local"},
		},
		{
			name:     "IP first",
			hosts:    []string{"10.0.0.1", "webhook.local"},
			wantCN:   "10.0.0.1",
			wantDNS:  []string{"webhook.local"},
			wantIPs:  []string{"10.0.0.1"},
			verifies: []string{"10.0.0.1", "webhook.local"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Dev(t.TempDir(), tt.hosts, time.Hour)
			if err != nil {
				t.Fatalf("Dev() error = %v", err)
			}
			leaf := readCert(t, b.CertFile)
			var ips []string
			for _, ip := range leaf.IPAddresses {
				ips = append(ips, ip.String())
			}
			if leaf.Subject.CommonName != tt.wantCN || !slices.Equal(leaf.DNSNames, tt.wantDNS) || !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("CN, DNSNames, IPs = %q %v %v; want %q %v %v", leaf.Subject.CommonName, leaf.DNSNames, ips, tt.wantCN, tt.wantDNS, tt.wantIPs)
			}
			roots := x509.NewCertPool()
			roots.AddCert(readCert(t, b.CAFile))
			for _, h := range tt.verifies {
				if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
					t.Errorf("Verify(%q) = %v", h, err)
				}
			}
		})
	}
}

// TestDevTwice checks that a second Dev into the same directory replaces all
// three files with a new CA and serving certificate.
func TestDevTwice(t *testing.T) {
	dir := t.TempDir()
	b1, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ca1, leaf1 := readCert(t, b1.CAFile), readCert(t, b1.CertFile)
	key1 := readPEM(t, b1.KeyFile, "PRIVATE KEY")

	b2, err := Dev(dir, devHosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if b1 != b2 {
		t.Errorf("bundles differ: %+v, %+v", b1, b2)
	}
	ca2, leaf2 := readCert(t, b2.CAFile), readCert(t, b2.CertFile)
	key2 := readPEM(t, b2.KeyFile, "PRIVATE KEY")

	if leaf1.SerialNumber.Cmp(leaf2.SerialNumber) == 0 {
		t.Errorf("serving certificates share serial %v", leaf1.SerialNumber)
	}
	if ca1.Equal(ca2) {
		t.Errorf("CA not replaced")
	}
	if string(key1) == string(key2) {
		t.Errorf("key not replaced")
	}
	if fi, err := os.Stat(b2.KeyFile); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode after rewrite = %v, want 0600", fi.Mode().Perm())
	}
	// The old CA does not vouch for the new serving certificate.
	oldRoots := x509.NewCertPool()
	oldRoots.AddCert(ca1)
	if _, err := leaf2.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: oldRoots}); err == nil {
		t.Errorf("new serving certificate verifies against the old CA")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("dir holds %d entries after a rewrite, want 3", len(entries))
	}
}

func TestDevUnwritableDir(t *testing.T) {
	// A regular file where the directory should be.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Dev(filepath.Join(file, "certs"), devHosts, time.Hour); err == nil {
		t.Errorf("Dev() under a regular file = %+v, nil; want error", b)
	}
}

// handshake runs a TLS handshake over loopback between a server using
// getCert and a client trusting roots, and returns the certificate the server
// presented and the client's error.
func handshake(t *testing.T, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), roots *x509.CertPool, serverName string) ([]byte, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(20 * time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(deadline)
		_ = tls.Server(c, &tls.Config{GetCertificate: getCert, MinVersion: tls.VersionTLS12}).Handshake()
	}()
	raw, err := net.DialTimeout("tcp", ln.Addr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(deadline)
	client := tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12})
	err = client.Handshake()
	var leaf []byte
	if err == nil {
		leaf = client.ConnectionState().PeerCertificates[0].Raw
	}
	raw.Close()
	<-done
	return leaf, err
}

func TestDevRejectsNoHostsAndNoValidity(t *testing.T) {
	if _, err := Dev(t.TempDir(), nil, time.Hour); err == nil {
		t.Error("Dev without hosts succeeded")
	}
	if _, err := Dev(t.TempDir(), devHosts, 0); err == nil {
		t.Error("Dev with zero validity succeeded")
	}
}
