package cli

import (
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/registry"
)

// runtimeConfigUsage is kube-apiserver's help text of --runtime-config.
const runtimeConfigUsage = "A set of key=value pairs that enable or disable built-in APIs. Supported options are:\n" +
	"v1=true|false for the core API group\n" +
	"<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\n" +
	"api/all=true|false controls all API versions\n" +
	"api/ga=true|false controls all API versions of the form v[0-9]+\n" +
	"api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\n" +
	"api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+\n" +
	"api/legacy is deprecated, and will be removed in a future version"

// addRuntimeConfigFlag adds --runtime-config, whose pairs (repeated flags
// add up, as kube-apiserver's) go to *pairs.
func addRuntimeConfigFlag(fs *pflag.FlagSet, pairs *map[string]string) {
	fs.Var(&runtimeConfigValue{pairs}, "runtime-config", runtimeConfigUsage)
}

type runtimeConfigValue struct{ pairs *map[string]string }

func (v *runtimeConfigValue) String() string {
	if v.pairs == nil || len(*v.pairs) == 0 {
		return ""
	}
	items := make([]string, 0, len(*v.pairs))
	for k, val := range *v.pairs {
		items = append(items, k+"="+val)
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

func (v *runtimeConfigValue) Set(value string) error {
	if *v.pairs == nil {
		*v.pairs = map[string]string{}
	}
	registry.ParseRuntimeConfigMap(*v.pairs, value)
	return nil
}

func (v *runtimeConfigValue) Type() string { return "mapStringString" }
