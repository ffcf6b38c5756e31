package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/controllers"
)

// addControllersFlag registers kube-controller-manager's --controllers,
// with its syntax and names: admitd runs the controllers of its own among
// them and accepts (and ignores, with a log line) the others.
func addControllersFlag(fs *pflag.FlagSet, list *[]string) {
	all, off := controllers.KnownControllers()
	*list = []string{"*"}
	fs.StringSliceVar(list, "controllers", *list, fmt.Sprintf(
		"A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller "+
			"named 'foo', '-foo' disables the controller named 'foo' (kube-controller-manager's flag: admitd runs "+
			"the ones it has, e.g. root-ca-certificate-publisher-controller, and ignores the others).\n"+
			"All controllers: %s\nDisabled-by-default controllers: %s",
		strings.Join(all, ", "), strings.Join(off, ", ")))
}
