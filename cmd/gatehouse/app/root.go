// Package app is gatehouse's command tree: serve, check, manifests, version.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Exit codes shared by every command: denied wins over undecided, so a CI
// job that fails on 1 fails on every denial, and one that also fails on 3
// fails on everything check could not vouch for.
const (
	exitOK     = 0
	exitDenied = 1
	exitUsage  = 2
	// exitUndecided: nothing denied, and a webhook could not decide some
	// object for want of state check was not given (check only).
	exitUndecided = 3
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(context.Background(), args, stdin, stdout, stderr)
}

// Run is Main with a context: cancelling it stops `serve` as SIGTERM does.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != exitDenied && ee.code != exitUndecided {
			printError(stderr, ee.err)
		}
		return ee.code
	}
	printError(stderr, err)
	return exitUsage
}

// printError writes err to stderr after "gatehouse:"; an error of lines
// (a configuration's) is one problem a line, each led by "gatehouse:".
func printError(stderr io.Writer, err error) {
	var each errorLines
	if !errors.As(err, &each) {
		each = errorLines{err.Error()}
	}
	for _, line := range each {
		fmt.Fprintln(stderr, "gatehouse:", line)
	}
}

// errorLines is an error of one problem a line.
type errorLines []string

func (l errorLines) Error() string { return strings.Join(l, "\n") }

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "gatehouse",
		Short: "Admission webhooks for the platform's security and ownership contracts",
		Example: `  gatehouse check -f deploy/examples/        # admit manifests offline, as the server would
  gatehouse audit --context staging          # review what a cluster stores
  gatehouse serve --dev                      # serve the webhooks on a laptop
  gatehouse manifests > webhooks.yaml        # the webhook configurations`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServe(), newCheck(), newAudit(), newManifests(), newVersion())
	return root
}

// loadConfig reads the configuration file, or the defaults when path is empty.
func loadConfig(path string) (configv1alpha1.ServerConfig, error) {
	cfg := configv1alpha1.Default()
	if path != "" {
		var err error
		if cfg, err = configv1alpha1.Load(path); err != nil {
			// Load's errors are one a line, each naming the file.
			return cfg, &exitError{code: exitUsage, err: errorLines(strings.Split(err.Error(), "\n"))}
		}
	}
	if errs := route.ValidateConfig(cfg); len(errs) > 0 {
		return cfg, invalidConfig(path, false, errs)
	}
	return cfg, nil
}

// validateWithFlags validates cfg once the flags of cmd are laid over the
// configuration file, which loadConfig validated alone.
func validateWithFlags(cmd *cobra.Command, cfg configv1alpha1.ServerConfig) error {
	if errs := route.ValidateConfig(cfg); len(errs) > 0 {
		var path string
		if f := cmd.Flags().Lookup("config"); f != nil {
			path = f.Value.String()
		}
		return invalidConfig(path, true, errs)
	}
	return nil
}

// invalidConfig is the usage error of a configuration that does not
// validate: one line per error, each naming where the configuration came
// from (the file, and whether flags were laid over it) and the field:
//
//	invalid configuration config.yaml: webhooks[secret-scope].mode: Unsupported value: "Dryrun": supported values: "Enforce", "Warn", "Audit"
//	invalid configuration config.yaml with flags: serving.port: Invalid value: 0: must be between 1 and 65535
//	invalid configuration with flags: defaultMode: Invalid value: "Warn": mutating webhooks have no Warn mode; ...
func invalidConfig(path string, flags bool, errs field.ErrorList) error {
	source := "invalid configuration"
	if path != "" {
		source += " " + path
	}
	if flags {
		source += " with flags"
	}
	each := make(errorLines, len(errs))
	for i, e := range errs {
		each[i] = source + ": " + e.Error()
	}
	return &exitError{code: exitUsage, err: each}
}

// Version and Commit are set at link time by `make build` and the Dockerfile
// (-ldflags "-X .../app.Version=... -X .../app.Commit=..."). Unset, the
// version is the module's (a `go install` of a tag) and the commit the one
// the go command stamped into the binary.
var (
	Version = ""
	Commit  = ""
)

// versionLine is what `gatehouse version` prints: the release, the commit
// (marked "-dirty" when the tree had changes) and the Go version.
func versionLine() string {
	version, commit, modified := Version, Commit, false
	goVersion := runtime.Version()
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "(devel)"
	}
	if commit == "" {
		commit = "unknown"
	} else if modified && !strings.HasSuffix(commit, "-dirty") {
		commit += "-dirty"
	}
	return fmt.Sprintf("gatehouse %s (commit %s, %s)", version, commit, goVersion)
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the release, commit and Go version",
		Example: "  $ gatehouse version\n  gatehouse 0.1.0 (commit 9d3d8aa, go1.26.8)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}
