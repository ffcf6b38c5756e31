package cli

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/admitd/admitd/internal/samplewebhook"
)

// newWebhookCommand is upstream's `agnhost webhook`: the same texts and
// flags, so manifests written for agnhost run unchanged.
func newWebhookCommand() *cobra.Command {
	var o samplewebhook.Options
	var verbosity int
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Starts an HTTPS server, useful for testing MutatingAdmissionWebhook and ValidatingAdmissionWebhook",
		Long: `Starts an HTTPS server, useful for testing MutatingAdmissionWebhook and ValidatingAdmissionWebhook.
After deploying it to Kubernetes cluster, the Administrator needs to create a ValidatingWebhookConfiguration
in the Kubernetes cluster to register remote webhook admission controllers.`,
		Example: `  # the upstream e2e webhook on 127.0.0.1:8444, with a sidecar image for /mutating-pods-sidecar
  admitd webhook --tls-cert-file=certs/tls.crt --tls-private-key-file=certs/tls.key --port=8444 \
    --sidecar-image=registry.k8s.io/pause:3.10

  # on every interface, as in a Pod behind a Service
  admitd webhook --tls-cert-file=certs/tls.crt --tls-private-key-file=certs/tls.key --bind-address=0.0.0.0`,
		Args: cobra.MaximumNArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			level := slog.LevelInfo
			if verbosity >= 2 {
				level = slog.LevelDebug
			}
			o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return samplewebhook.Run(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.CertFile, "tls-cert-file", "",
		"File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert).")
	f.StringVar(&o.KeyFile, "tls-private-key-file", "",
		"File containing the default x509 private key matching --tls-cert-file.")
	f.IPVar(&o.BindAddress, "bind-address", net.IPv4(127, 0, 0, 1),
		"The IP address to listen on. The default serves this machine only; 0.0.0.0 or :: serve every interface (upstream's agnhost listens on all).")
	f.IntVar(&o.Port, "port", 443, "Secure port that the webhook listens on")
	f.StringVar(&o.SidecarImage, "sidecar-image", "", "Image to be used as the injected sidecar")
	// klog's flags that the upstream e2e and the VPA suite pass.
	f.IntVarP(&verbosity, "v", "v", 0, "number for the log level verbosity (2 and above log every call)")
	f.Bool("alsologtostderr", false, "accepted for agnhost compatibility; logs always go to standard error")
	return cmd
}
