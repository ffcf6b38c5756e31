package server

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/util/keyutil"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// ServiceAccountOptions configure service-account tokens as
// kube-apiserver's flags of the same names.
type ServiceAccountOptions struct {
	// Issuers is --service-account-issuer: the first is the "iss" of the
	// tokens the server signs, all are accepted. Default
	// [https://kubernetes.default.svc.cluster.local] (kind, kubeadm).
	Issuers []string
	// KeyFiles is --service-account-key-file: PEM files of public or
	// private keys (or certificates) that verify tokens. Default: the
	// signing key alone.
	KeyFiles []string
	// SigningKeyFile is --service-account-signing-key-file. Default
	// <DataDir>/pki/sa.key, generated (ECDSA P-256) on first start.
	SigningKeyFile string
	// APIAudiences is --api-audiences: the audiences of the API server,
	// those of a TokenRequest without any. Default: Issuers.
	APIAudiences []string
	// JWKSURI is --service-account-jwks-uri, the jwks_uri of the discovery
	// document. Default https://<the server's address>/openid/v1/jwks.
	JWKSURI string
	// MaxTokenExpiration is --service-account-max-token-expiration: longer
	// TokenRequests are shortened to it. Default 0: no limit.
	MaxTokenExpiration time.Duration
	// DisableLookup is --service-account-lookup=false: legacy tokens are
	// accepted without checking that their Secret and ServiceAccount still
	// exist. Default false (lookup on, as upstream). Bound tokens are
	// always checked.
	DisableLookup bool
	// DisableExtendExpiration is --service-account-extend-token-expiration
	// =false: kubelet's pod-bound tokens keep their hour instead of a year.
	// Default false (extended, as upstream).
	DisableExtendExpiration bool
}

// validate checks the options as kube-apiserver does, in its words.
func (o ServiceAccountOptions) validate() error {
	var errs []error
	seen := map[string]bool{}
	for _, iss := range o.Issuers {
		switch {
		case iss == "":
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
		case seen[iss]:
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", iss))
		case strings.Contains(iss, ":"):
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", iss, err))
			}
		}
		seen[iss] = true
	}
	if o.JWKSURI != "" {
		if u, err := url.Parse(o.JWKSURI); err != nil {
			errs = append(errs, fmt.Errorf("service-account-jwks-uri must be a valid URL: %v", err))
		} else if u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("service-account-jwks-uri requires https scheme, parsed as: %v", u.String()))
		}
	}
	if m := o.MaxTokenExpiration; m != 0 && (m < time.Hour || m > time.Duration(1<<32)*time.Second) {
		errs = append(errs, errors.New("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"))
	}
	return errors.Join(errs...)
}

func (o ServiceAccountOptions) issuers() []string {
	if len(o.Issuers) == 0 {
		return []string{serviceaccount.DefaultIssuer}
	}
	return o.Issuers
}

func (o ServiceAccountOptions) audiences() []string {
	if len(o.APIAudiences) == 0 {
		return o.issuers()
	}
	return o.APIAudiences
}

// saTokens is the server's service-account token set-up: the issuer that
// signs, the keys and issuers that verify.
type saTokens struct {
	issuer  *serviceaccount.Issuer
	keys    serviceaccount.Keys
	opts    ServiceAccountOptions
	tracker *legacyTracker
}

// newSATokens reads (or generates) the signing key and the verification
// keys.
func newSATokens(o Options) (*saTokens, error) {
	sa := o.ServiceAccounts
	if err := sa.validate(); err != nil {
		return nil, err
	}
	issuer, err := signingIssuer(o)
	if err != nil {
		return nil, err
	}
	issuer.Audiences = sa.audiences()
	issuer.MaxExpirationSeconds = int64(sa.MaxTokenExpiration / time.Second)
	issuer.NoExtendedExpiration = sa.DisableExtendExpiration
	keys, err := serviceaccount.NewKeys(issuer.PublicKey())
	if len(sa.KeyFiles) > 0 {
		keys, err = serviceaccount.ReadKeyFiles(sa.KeyFiles...)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to set up public service account keys: %w", err)
	}
	tracker := &legacyTracker{now: time.Now, log: o.Logger}
	return &saTokens{issuer: issuer, keys: keys, opts: sa, tracker: tracker}, nil
}

// signingIssuer signs with --service-account-signing-key-file, or with
// <DataDir>/pki/sa.key, generated on first start.
func signingIssuer(o Options) (*serviceaccount.Issuer, error) {
	iss := o.ServiceAccounts.issuers()[0]
	path := o.ServiceAccounts.SigningKeyFile
	if path == "" {
		key, err := serviceaccount.LoadOrCreateKey(filepath.Join(o.DataDir, "pki", serviceaccount.KeyFile))
		if err != nil {
			return nil, err
		}
		return serviceaccount.NewIssuer(key, iss)
	}
	key, err := keyutil.PrivateKeyFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to parse service-account-issuer-key-file: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("failed to build token generator: unsupported key %T", key)
	}
	return serviceaccount.NewIssuer(signer, iss)
}

// authenticators are the token authenticators of service accounts, legacy
// then bound, as upstream orders them, reading objects through objects.
func (t *saTokens) authenticators(objects serviceaccount.Getter) []auth.AudienceTokenAuthenticator {
	auds := t.issuer.Audiences
	legacy := &serviceaccount.LegacyAuthenticator{Keys: t.keys, Audiences: auds, Lookup: !t.opts.DisableLookup, Objects: objects,
		Tracker: t.tracker}
	bound := &serviceaccount.Authenticator{Issuers: t.opts.issuers(), Keys: t.keys, Audiences: auds, Objects: objects}
	return []auth.AudienceTokenAuthenticator{legacy, bound}
}

// withServiceAccountTokens appends the service-account authenticators to
// the bearer tokens of request authentication (tokens may be nil).
func withServiceAccountTokens(tokens auth.TokenAuthenticator, sa []auth.AudienceTokenAuthenticator) auth.TokenAuthenticator {
	var all []auth.TokenAuthenticator
	if tokens != nil {
		all = append(all, tokens)
	}
	for _, a := range sa {
		all = append(all, auth.ForAPIAudiences(a))
	}
	if len(all) == 0 {
		return nil
	}
	return auth.TokenUnion(all...)
}

// startTokens runs the legacy token controller (kube-controller-manager's
// serviceaccount-token): it signs with the server's signing key and fills
// ca.crt with the CA clients trust.
func (s *Server) startTokens(ctx context.Context, p *apiParts, log *slog.Logger) error {
	client, err := controllers.NewClient(p.api.Loopback(controllers.TokensUser))
	if err != nil {
		return err
	}
	go controllers.NewTokens(s.store, p.cat, client, p.sa.issuer, s.CAPEM, log.With("controller", "serviceaccount-token")).Run(ctx)
	return nil
}
