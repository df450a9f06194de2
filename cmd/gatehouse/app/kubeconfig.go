package app

import (
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
)

// kubeFlags are --kubeconfig and --context, the cluster serve, audit and
// check --cluster read. The cluster is found as controller-runtime's
// config.GetConfig finds it, which every command called before --context
// existed: --kubeconfig; else the files $KUBECONFIG lists; else, when
// $KUBECONFIG is unset, the in-cluster configuration; else
// ~/.kube/config. --context picks a context of the kubeconfig instead of
// its current one; the in-cluster configuration has none, so with
// --context it is never used.
type kubeFlags struct {
	kubeconfig string
	context    string
}

// kubeconfigUsage is --kubeconfig's help, after what the cluster is for.
const kubeconfigUsage = "; without it: the files $KUBECONFIG lists, else (when $KUBECONFIG is unset) the in-cluster configuration, else ~/.kube/config"

func (k *kubeFlags) register(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig of "+what+kubeconfigUsage)
	fl.StringVar(&k.context, "context", "", "kubeconfig context to use (default: the kubeconfig's current context); with it, the in-cluster configuration is never used")
}

// given reports whether either flag was set.
func (k kubeFlags) given(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")
}

// restConfig finds the cluster. An error names the flag that led to it.
func (k kubeFlags) restConfig() (*rest.Config, error) {
	var rules *clientcmd.ClientConfigLoadingRules
	switch {
	case k.kubeconfig != "":
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.kubeconfig}
	case k.context != "":
		rules = clientcmd.NewDefaultClientConfigLoadingRules() // $KUBECONFIG, else ~/.kube/config
	default:
		rc, err := ctrlconfig.GetConfig()
		if err != nil {
			return nil, usageError("no cluster found (give --kubeconfig or --context): %v", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context}).ClientConfig()
	if err != nil {
		var given []string
		if k.kubeconfig != "" {
			given = append(given, "--kubeconfig "+k.kubeconfig)
		}
		if k.context != "" {
			given = append(given, "--context "+k.context)
		}
		return nil, usageError("%s: %v", strings.Join(given, " "), err)
	}
	return rc, nil
}
