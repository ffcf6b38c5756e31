package pki

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigName names the cluster, the user and the context that
// WriteKubeconfig writes.
const KubeconfigName = "admitd"

// WriteKubeconfig writes a kubeconfig for server to path, with the CA, the
// client certificate and its key embedded (the *-data fields, not file
// paths), and makes its single context current. The file is written with
// mode 0600, through a temporary file and a rename.
func WriteKubeconfig(path, server string, caPEM, clientCertPEM, clientKeyPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[KubeconfigName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos[KubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: clientCertPEM,
		ClientKeyData:         clientKeyPEM,
	}
	cfg.Contexts[KubeconfigName] = &clientcmdapi.Context{
		Cluster:  KubeconfigName,
		AuthInfo: KubeconfigName,
	}
	cfg.CurrentContext = KubeconfigName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
