package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/pki"
)

func newCertsCommand() *cobra.Command {
	var out string
	var hosts []string
	cmd := &cobra.Command{
		Use:   "certs --out DIR --hosts HOST[,HOST...]",
		Short: "Write a CA and a serving certificate for a webhook",
		Long: `Write ca.crt, tls.crt and tls.key into DIR: a CA and a serving certificate
signed by it, valid for every host given (DNS names, "*." wildcards or IP
addresses). A CA already in DIR (ca.crt and ca.key) is reused, so the
caBundle that clients trust does not change; otherwise a new one is created
and its key written to ca.key (mode 0600). Keep ca.key out of Secrets.`,
		Example: `  # certificates for the webhook Service "hook" in namespace "tools"
  admitd certs --out ./certs --hosts hook.tools.svc,hook.tools.svc.cluster.local
  kubectl -n tools create secret generic hook-tls \
    --from-file=certs/ca.crt --from-file=certs/tls.crt --from-file=certs/tls.key
  # then annotate the webhook configuration, and admitd serve fills its caBundle:
  #   metadata.annotations: {admitd.io/inject-ca-from: tools/hook-tls}

  # a webhook on this host
  admitd certs --out ./certs --hosts localhost,127.0.0.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := pki.WriteServingFiles(out, hosts)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.CAReused {
				fmt.Fprintf(w, "reused the CA in %s\n", filepath.Join(out, pki.CACertFile))
			}
			for _, name := range f.Written {
				fmt.Fprintf(w, "wrote %s\n", filepath.Join(out, name))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory to write ca.crt, ca.key, tls.crt and tls.key into (created if missing)")
	fl.StringSliceVar(&hosts, "hosts", nil, "DNS names and IP addresses the serving certificate is valid for, e.g. <service>.<namespace>.svc")
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("hosts")
	return cmd
}
