package cli

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

// addServiceAccountFlags registers kube-apiserver's service-account token
// flags on fs.
func addServiceAccountFlags(fs *pflag.FlagSet, o *server.ServiceAccountOptions) {
	fs.StringArrayVar(&o.Issuers, "service-account-issuer", o.Issuers,
		"issuer of service-account tokens (the \"iss\" claim); repeatable: the first signs, all are accepted (default https://kubernetes.default.svc.cluster.local)")
	fs.StringArrayVar(&o.KeyFiles, "service-account-key-file", o.KeyFiles,
		"PEM file of RSA or ECDSA public or private keys that verify service-account tokens; repeatable (default: the signing key)")
	fs.StringVar(&o.SigningKeyFile, "service-account-signing-key-file", o.SigningKeyFile,
		"PEM private key that signs service-account tokens (default <data-dir>/pki/sa.key, generated)")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences,
		"audiences of the API server: tokens must be for one of them (default: the service-account issuers)")
	fs.StringVar(&o.JWKSURI, "service-account-jwks-uri", o.JWKSURI,
		"jwks_uri of /.well-known/openid-configuration (default https://<server address>/openid/v1/jwks)")
	fs.DurationVar(&o.MaxTokenExpiration, "service-account-max-token-expiration", o.MaxTokenExpiration,
		"longest validity of a requested service-account token; longer requests are shortened (0: no limit)")
	fs.Var(newInvertedBool(&o.DisableLookup, !o.DisableLookup), "service-account-lookup",
		"check that legacy service-account tokens' Secret and ServiceAccount still exist")
	fs.Lookup("service-account-lookup").NoOptDefVal = "true"
	fs.Var(newInvertedBool(&o.DisableExtendExpiration, !o.DisableExtendExpiration), "service-account-extend-token-expiration",
		"extend kubelet's pod-bound service-account tokens (3607 s) to a year, warning after an hour, for a safe transition from legacy tokens")
	fs.Lookup("service-account-extend-token-expiration").NoOptDefVal = "true"
}

// invertedBool is a bool flag stored negated (a true default in an option
// whose zero value must be the safe one).
type invertedBool struct{ target *bool }

func newInvertedBool(target *bool, value bool) *invertedBool {
	*target = !value
	return &invertedBool{target: target}
}

func (b *invertedBool) String() string {
	if b.target == nil || !*b.target {
		return "true"
	}
	return "false"
}

func (b *invertedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.target = !v
	return nil
}

func (b *invertedBool) Type() string { return "bool" }
