// Server configuration: where the harness proxy listens and which ConfigMap
// holds its CA.
//
// Reads: nothing from objects. Allows: a non-empty host, a port in 1..65535
// and a non-empty ConfigMap name.

package proxy

import "fmt"

// Config is the proxy service the harnessed pods are sent to.
type Config struct {
	// Host becomes KUBERNETES_SERVICE_HOST.
	Host string
	// Port becomes KUBERNETES_SERVICE_PORT.
	Port int32
	// CAConfigMap is the ConfigMap whose key ca.crt holds the proxy's CA.
	CAConfigMap string
}

// BuiltinConfig returns the defaults the contract names.
func BuiltinConfig() Config {
	return Config{Host: "proxy-service.proxy-namespace.svc", Port: 443, CAConfigMap: "proxy-root-ca.crt"}
}

// Validate reports a configuration Inject cannot produce a valid pod from.
func (c Config) Validate() error {
	switch {
	case c.Host == "":
		return fmt.Errorf("proxy host is empty")
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("proxy port %d is outside 1..65535", c.Port)
	case c.CAConfigMap == "":
		return fmt.Errorf("proxy CA ConfigMap name is empty")
	}
	return nil
}
