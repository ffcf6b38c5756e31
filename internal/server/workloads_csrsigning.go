package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/csrapproving"
	"github.com/admitd/admitd/internal/controllers/csrcleaner"
	"github.com/admitd/admitd/internal/controllers/csrsigning"
	"github.com/admitd/admitd/internal/pki"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// CSRSigningOptions configure the CSR signer
// (certificatesigningrequest-signing-controller) as
// kube-controller-manager's flags of the same names: one CA for every
// kubernetes.io signer (--cluster-signing-cert-file and -key-file), or
// one per signer (then a signer without files signs nothing). Without any
// of them, admitd's own CA (the one in <data-dir>/pki that client
// certificates are verified with) signs for the two client signers
// (kube-apiserver-client, kube-apiserver-client-kubelet), where
// kube-controller-manager would sign nothing. It does not sign
// kubelet-serving certificates by default: that CA also issued admitd's
// serving certificate, which its kubeconfigs trust, so a node's serving
// certificate naming 127.0.0.1 could impersonate the server to them.
type CSRSigningOptions struct {
	ClusterSigningCertFile, ClusterSigningKeyFile           string
	KubeletServingCertFile, KubeletServingKeyFile           string
	KubeletClientCertFile, KubeletClientKeyFile             string
	KubeAPIServerClientCertFile, KubeAPIServerClientKeyFile string
	LegacyUnknownCertFile, LegacyUnknownKeyFile             string
	// Duration is --cluster-signing-duration, the longest certificate
	// issued; zero means its default, 8760h.
	Duration time.Duration
}

// signerFiles are the certificate and key files of each signer, by
// signer name, as the options give them (empty: none).
func (o CSRSigningOptions) signerFiles() map[string][2]string {
	return map[string][2]string{
		csrsigning.KubeletServing:             {o.KubeletServingCertFile, o.KubeletServingKeyFile},
		csrsigning.KubeAPIServerClientKubelet: {o.KubeletClientCertFile, o.KubeletClientKeyFile},
		csrsigning.KubeAPIServerClient:        {o.KubeAPIServerClientCertFile, o.KubeAPIServerClientKeyFile},
		csrsigning.LegacyUnknown:              {o.LegacyUnknownCertFile, o.LegacyUnknownKeyFile},
	}
}

// signerCAs are the CAs of the signers that sign, by signer name, as
// kube-controller-manager chooses them from its flags (pkiDir's CA
// without any).
func (o CSRSigningOptions) signerCAs(pkiDir string, log *slog.Logger) (map[string]csrsigning.CA, error) {
	specific := false
	for _, files := range o.signerFiles() {
		specific = specific || files[0] != "" || files[1] != ""
	}
	cluster := o.ClusterSigningCertFile != "" || o.ClusterSigningKeyFile != ""
	clusterComplete := o.ClusterSigningCertFile != "" && o.ClusterSigningKeyFile != ""
	switch {
	case clusterComplete && specific:
		return nil, errors.New("cannot specify default and per controller certs at the same time")
	case !cluster && !specific:
		ca, err := csrsigning.FileCA(filepath.Join(pkiDir, pki.CACertFile), filepath.Join(pkiDir, pki.CAKeyFile))
		if err != nil {
			return nil, err
		}
		log.Info("Signing kube-apiserver-client and kube-apiserver-client-kubelet certificates with the server's CA; " +
			"kubelet-serving certificates only with --cluster-signing-kubelet-serving-{cert,key}-file")
		return map[string]csrsigning.CA{csrsigning.KubeAPIServerClientKubelet: ca, csrsigning.KubeAPIServerClient: ca}, nil
	case !clusterComplete && !specific:
		log.Info("Skipping CSR signer controller because no csr cert/key was specified")
		return nil, nil
	}
	cas := map[string]csrsigning.CA{}
	for _, signer := range csrsigning.Signers {
		files := o.signerFiles()[signer]
		if !specific {
			files = [2]string{o.ClusterSigningCertFile, o.ClusterSigningKeyFile}
		}
		if files[0] == "" && files[1] == "" {
			log.Info("Skipping CSR signer controller because specific files were specified for other signers and not this one", "signer", signer)
			continue
		}
		ca, err := csrsigning.FileCA(files[0], files[1])
		if err != nil {
			return nil, fmt.Errorf("failed to init %s certificate controller: %w", signer, err)
		}
		cas[signer] = ca
	}
	return cas, nil
}

// startCSRSigning runs the CSR signer with the signers' CAs (none when the
// selection turns it off: it does not run), until ctx ends, as
// kube-controller-manager's certificatesigningrequest-signing-controller.
func startCSRSigning(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, o Options, cas map[string]csrsigning.CA) error {
	if len(cas) == 0 {
		return nil
	}
	log := o.Logger.With("controller", csrsigning.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, api, csrsigning.User, log))
	if err != nil {
		return err
	}
	c, err := csrsigning.New(csrsigning.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Log: log, CAs: cas, Duration: o.CSRSigning.Duration})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// Validate checks the files as kube-controller-manager does: a signer's
// certificate and key go together, and the cluster-wide files exclude the
// per-signer ones.
func (o CSRSigningOptions) Validate() error {
	var errs []error
	for _, s := range []struct {
		label     string
		cert, key string
	}{ // kube-controller-manager's labels
		{"cluster-signing-kubelet-serving", o.KubeletServingCertFile, o.KubeletServingKeyFile},
		{"cluster-signing-kube-apiserver-client", o.KubeletClientCertFile, o.KubeletClientKeyFile},
		{"cluster-signing-kube-apiserver", o.KubeAPIServerClientCertFile, o.KubeAPIServerClientKeyFile},
		{"cluster-signing-legacy-unknown", o.LegacyUnknownCertFile, o.LegacyUnknownKeyFile},
	} {
		switch {
		case s.cert == "" && s.key != "":
			errs = append(errs, fmt.Errorf("%q: cannot specify key without cert", s.label))
		case s.cert != "" && s.key == "":
			errs = append(errs, fmt.Errorf("%q: cannot specify cert without key", s.label))
		}
	}
	specific := false
	for _, files := range o.signerFiles() {
		specific = specific || files[0] != "" || files[1] != ""
	}
	if (o.ClusterSigningCertFile != "" || o.ClusterSigningKeyFile != "") && specific {
		errs = append(errs, errors.New("cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"))
	}
	return errors.Join(errs...)
}

// startCSRCleaner runs the CSR cleaner, if the selection turns it on,
// until ctx ends, as kube-controller-manager's
// certificatesigningrequest-cleaner-controller.
func startCSRCleaner(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(csrcleaner.Name) {
		return nil
	}
	log = log.With("controller", csrcleaner.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, api, csrcleaner.User, log))
	if err != nil {
		return err
	}
	c, err := csrcleaner.New(csrcleaner.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}

// startCSRApproving runs the CSR approver, if the selection turns it on,
// until ctx ends, as kube-controller-manager's
// certificatesigningrequest-approving-controller.
func startCSRApproving(ctx context.Context, api *apiserver.Server, store storage.Store, cat *registry.Catalogue, caches *controllers.Caches, sel controllers.ControllerSelection, log *slog.Logger) error {
	if !sel.Enabled(csrapproving.Name) {
		return nil
	}
	log = log.With("controller", csrapproving.Name)
	client, err := controllers.NewClientset(controllerLoopback(ctx, api, csrapproving.User, log))
	if err != nil {
		return err
	}
	c, err := csrapproving.New(csrapproving.Config{Store: store, Catalogue: cat, Caches: caches, Client: client, Log: log})
	if err != nil {
		return err
	}
	go c.Run(ctx)
	return nil
}
