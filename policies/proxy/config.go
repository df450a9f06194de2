// Server configuration: where the harness proxy listens and which ConfigMap
// holds its CA.
//
// Reads: nothing from objects. Allows: a non-empty host, a port in 1..65535
// and a non-empty ConfigMap name.

package proxy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// Validate reports a configuration Inject cannot produce a valid pod from,
// each problem attributed to its field below at, the path of c (nil: the
// paths are the field names, "port"). The field names are those of the
// configuration's harness.proxy: host, port, caConfigMap.
func (c Config) Validate(at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Host == "" {
		errs = append(errs, field.Required(at.Child("host"), ""))
	}
	if c.Port < 1 || c.Port > 65535 {
		errs = append(errs, field.Invalid(at.Child("port"), field.OmitValueType{}, fmt.Sprintf("%d is outside 1..65535", c.Port)))
	}
	if c.CAConfigMap == "" {
		errs = append(errs, field.Required(at.Child("caConfigMap"), ""))
	}
	return errs
}
