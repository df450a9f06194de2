package app

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// modeFlags set the webhooks' modes over the configuration file
// (docs/rollout.md): serve, check and manifests take the same ones, so a
// rollout step is one flag on each.
type modeFlags struct {
	defaultMode string
	modes       []string
}

func (m *modeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&m.defaultMode, "default-mode", "", "mode of every webhook without one of its own: Enforce, Warn or Audit (defaultMode)")
	fl.StringArrayVar(&m.modes, "mode", nil, "NAME=MODE: the mode of one webhook (webhooks.NAME.mode; repeatable)")
}

// modeNames are the modes the flags take.
var modeNames = []string{string(configv1alpha1.ModeEnforce), string(configv1alpha1.ModeWarn), string(configv1alpha1.ModeAudit)}

// apply lays the flags that were set over cfg and validates the result.
func (m *modeFlags) apply(cmd *cobra.Command, cfg *configv1alpha1.ServerConfig) error {
	if !cmd.Flags().Changed("default-mode") && len(m.modes) == 0 {
		return nil
	}
	if cmd.Flags().Changed("default-mode") {
		if !slices.Contains(modeNames, m.defaultMode) {
			return usageError("%v", configv1alpha1.OneOf("--default-mode", m.defaultMode, modeNames...))
		}
		cfg.DefaultMode = configv1alpha1.Mode(m.defaultMode)
	}
	for _, nm := range m.modes {
		name, mode, ok := strings.Cut(nm, "=")
		if !ok || name == "" {
			return usageError("--mode %q: must be NAME=MODE, e.g. secret-scope=Warn", nm)
		}
		if _, known := route.Lookup(name); !known {
			return usageError("%v", configv1alpha1.OneOf("--mode NAME", name, route.Names()...))
		}
		if !slices.Contains(modeNames, mode) {
			return usageError("%v", configv1alpha1.OneOf("--mode "+name, mode, modeNames...))
		}
		if cfg.Webhooks == nil {
			cfg.Webhooks = map[string]configv1alpha1.Webhook{}
		}
		w := cfg.Webhooks[name]
		w.Mode = configv1alpha1.Mode(mode)
		cfg.Webhooks[name] = w
	}
	return validateWithFlags(cmd, *cfg)
}
