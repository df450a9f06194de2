// Command gatehouse serves the admission webhooks that enforce the platform's
// security and ownership contracts, and checks manifests offline with the
// same code.
package main

import (
	"os"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
