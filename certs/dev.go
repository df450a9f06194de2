// Package certs provides gatehouse's serving certificate: from files that
// cert-manager (or anyone) keeps up to date, reloaded when they change, or,
// for local development, from a self-signed CA it bootstraps itself.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// File names inside a certificate directory, as cert-manager writes them
// into a Secret of type kubernetes.io/tls.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// DevBundle is what Dev wrote.
type DevBundle struct {
	Dir      string
	CertFile string
	KeyFile  string
	// CAFile is the CA bundle a client (or a webhook configuration's caBundle) trusts.
	CAFile string
}

// DevHosts are the names the development serving certificate is valid for.
func DevHosts() []string { return slices.Clone(devHosts) }

var devHosts = []string{"localhost", "127.0.0.1", "::1"}

// Dev creates a self-signed CA and a serving certificate for hosts, signed
// by it, in dir: tls.crt, tls.key and ca.crt. The certificate is valid for
// validity from now. It is for local development and tests only.
func Dev(dir string, hosts []string, validity time.Duration) (DevBundle, error) {
	if len(hosts) == 0 {
		return DevBundle{}, errors.New("the development certificate needs at least one host")
	}
	if validity <= 0 {
		return DevBundle{}, errors.New("the development certificate needs a positive validity")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return DevBundle{}, err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return DevBundle{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "gatehouse development CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return DevBundle{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return DevBundle{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return DevBundle{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return DevBundle{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return DevBundle{}, err
	}
	b := DevBundle{
		Dir:      dir,
		CertFile: filepath.Join(dir, CertFile),
		KeyFile:  filepath.Join(dir, KeyFile),
		CAFile:   filepath.Join(dir, CAFile),
	}
	// The key goes first and the certificate last: a watcher that sees the
	// new certificate finds its key already in place.
	writes := []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{
		{b.CAFile, "CERTIFICATE", caDER, 0o644},
		{b.KeyFile, "PRIVATE KEY", keyDER, 0o600},
		{b.CertFile, "CERTIFICATE", der, 0o644},
	}
	for _, w := range writes {
		if err := writeAtomic(w.path, pem.EncodeToMemory(&pem.Block{Type: w.typ, Bytes: w.der}), w.mode); err != nil {
			return DevBundle{}, err
		}
	}
	return b, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}

// writeAtomic replaces path by renaming a complete temporary file over it, so
// a reader never sees half a PEM file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
