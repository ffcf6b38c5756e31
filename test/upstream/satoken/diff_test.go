package satoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	core "k8s.io/kubernetes/pkg/apis/core"
	theirs "k8s.io/kubernetes/pkg/serviceaccount"

	ours "github.com/admitd/admitd/internal/serviceaccount"
)

const issuer = "https://kubernetes.default.svc.cluster.local"

// The cluster both sides read: one service account, its pod on a node.
var (
	sa   = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bot", UID: "sa-1"}}
	pod  = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "pod-1"}}
	node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-1"}}
)

// world serves the cluster to both sides: upstream's
// ServiceAccountTokenGetter and admitd's Getter.
type world struct{}

func notFound(kind, name string) error { return fmt.Errorf("%s %q not found", kind, name) }

func (world) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if ns == sa.Namespace && name == sa.Name {
		return sa, nil
	}
	return nil, notFound("serviceaccount", name)
}

func (world) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if ns == pod.Namespace && name == pod.Name {
		return pod, nil
	}
	return nil, notFound("pod", name)
}

func (world) GetSecret(_ context.Context, _, name string) (*corev1.Secret, error) {
	return nil, notFound("secret", name)
}

func (world) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	if name == node.Name {
		return node, nil
	}
	return nil, notFound("node", name)
}

func (world) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, notFound("validatingwebhookconfiguration", name)
}

func (world) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, notFound("mutatingwebhookconfiguration", name)
}

func (g world) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return g.GetServiceAccount(ctx, ns, name)
}
func (g world) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return g.GetPod(ctx, ns, name)
}
func (g world) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return g.GetSecret(ctx, ns, name)
}
func (g world) Node(ctx context.Context, name string) (*corev1.Node, error) {
	return g.GetNode(ctx, name)
}

// signingKey is a key and the algorithm upstream signs with it.
type signingKey struct {
	alg string
	key crypto.Signer
}

// keys are one signing key of each kind, in the order of their algorithms.
func keys(t *testing.T) []signingKey {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	out := []signingKey{{"RS256", rsaKey}}
	for _, c := range []struct {
		alg   string
		curve elliptic.Curve
	}{{"ES256", elliptic.P256()}, {"ES384", elliptic.P384()}, {"ES512", elliptic.P521()}} {
		k, err := ecdsa.GenerateKey(c.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, signingKey{c.alg, k})
	}
	return out
}

// bindings are the tokens issued: for the service account alone, and bound
// to its pod and the pod's node.
var bindings = []struct {
	name     string
	pod      bool
	oursBind ours.Bound
}{
	{"service account", false, ours.Bound{}},
	{"pod-bound", true, ours.Bound{Pod: pod, Node: node}},
}

// theirToken is upstream's TokenRequest token for sa, signed with key.
func theirToken(t *testing.T, key crypto.Signer, bindPod bool) string {
	t.Helper()
	gen, err := theirs.JWTTokenGenerator(issuer, key)
	if err != nil {
		t.Fatal(err)
	}
	var p *core.Pod
	var n *core.Node
	if bindPod {
		p = &core.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		n = &core.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: node.UID}}
	}
	internalSA := core.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name, UID: sa.UID}}
	public, private, err := theirs.Claims(internalSA, p, nil, n, nil, nil, 3600, 0, []string{issuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gen.GenerateToken(context.Background(), public, private)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// ourToken is admitd's token for sa, signed with key.
func ourToken(t *testing.T, key crypto.Signer, bound ours.Bound) string {
	t.Helper()
	iss, err := ours.NewIssuer(key, issuer)
	if err != nil {
		t.Fatalf("NewIssuer: %v", err)
	}
	tok, err := iss.Issue(ours.NewClaims(sa, bound, time.Now(), 3600, 0, []string{issuer}))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// theirAuthenticator is upstream's bound-token authenticator with the
// verification keys pubs.
func theirAuthenticator(t *testing.T, pubs ...crypto.PublicKey) authenticator.Token {
	t.Helper()
	var in []any
	for _, p := range pubs {
		in = append(in, p)
	}
	getter, err := theirs.StaticPublicKeysGetter(in)
	if err != nil {
		t.Fatal(err)
	}
	return theirs.JWTTokenAuthenticator([]string{issuer}, getter, authenticator.Audiences{issuer}, theirs.NewValidator(world{}))
}

// ourAuthenticator is admitd's bound-token authenticator with the
// verification keys pubs.
func ourAuthenticator(t *testing.T, pubs ...crypto.PublicKey) *ours.Authenticator {
	t.Helper()
	var in []any
	for _, p := range pubs {
		in = append(in, p)
	}
	k, err := ours.NewKeys(in...)
	if err != nil {
		t.Fatal(err)
	}
	return &ours.Authenticator{Issuers: []string{issuer}, Keys: k, Audiences: []string{issuer}, Objects: world{}}
}

// outcome is what an authenticator made of a token, comparable across
// the two sides (the credential id, a fresh JTI per token, is kept: both
// sides read it from the same token).
type outcome struct {
	OK     bool
	Failed bool
	User   authenticationv1.UserInfo
}

func theirOutcome(t *testing.T, a authenticator.Token, tok string) outcome {
	t.Helper()
	resp, ok, err := a.AuthenticateToken(context.Background(), tok)
	o := outcome{OK: ok, Failed: err != nil}
	if ok {
		u := resp.User
		o.User = authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
		if len(u.GetExtra()) > 0 {
			o.User.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range u.GetExtra() {
				o.User.Extra[k] = v
			}
		}
	}
	return o
}

func ourOutcome(t *testing.T, a *ours.Authenticator, tok string) outcome {
	t.Helper()
	u, _, ok, err := a.AuthenticateToken(context.Background(), tok, nil)
	o := outcome{OK: ok, Failed: err != nil}
	if ok {
		o.User = u
	}
	return o
}

// Tokens signed by either side with any supported key authenticate on
// both sides as the same user; tampered tokens and tokens checked with
// another key fail on both.
func TestTokensVerifyBothWays(t *testing.T) {
	ks := keys(t)
	for i, k := range ks {
		other := ks[(i+1)%len(ks)].key.Public()
		for _, b := range bindings {
			toks := map[string]string{
				"admitd's":   ourToken(t, k.key, b.oursBind),
				"upstream's": theirToken(t, k.key, b.pod),
			}
			for signer, tok := range toks {
				for variant, input := range map[string]string{"": tok, ", tampered": tok[:len(tok)-6] + "AAAAAA"} {
					for keyName, pub := range map[string]crypto.PublicKey{"its key": k.key.Public(), "another key": other} {
						name := fmt.Sprintf("%s %s %s token%s, %s", k.alg, b.name, signer, variant, keyName)
						t.Run(name, func(t *testing.T) {
							got := ourOutcome(t, ourAuthenticator(t, pub), input)
							want := theirOutcome(t, theirAuthenticator(t, pub), input)
							if !reflect.DeepEqual(got, want) {
								t.Errorf("admitd: %+v\nupstream: %+v", got, want)
							}
							if wantOK := variant == "" && keyName == "its key"; want.OK != wantOK {
								t.Errorf("upstream authenticated = %v, want %v", want.OK, wantOK)
							}
						})
					}
				}
			}
		}
	}
}

// Both sides sign with the algorithm of the key, under the same key id.
func TestSameHeader(t *testing.T) {
	for _, k := range keys(t) {
		t.Run(k.alg, func(t *testing.T) {
			got, want := header(t, ourToken(t, k.key, ours.Bound{})), header(t, theirToken(t, k.key, false))
			if got != want {
				t.Errorf("admitd's header %s, upstream's %s", got, want)
			}
			if !containsAlg(want, k.alg) {
				t.Errorf("upstream's header %s, want alg %s", want, k.alg)
			}
		})
	}
}

// The discovery document and key set of the same keys are byte for byte
// upstream's.
func TestOpenIDMetadataSame(t *testing.T) {
	ks := keys(t)
	var pubs []any
	for _, k := range ks {
		pubs = append(pubs, k.key.Public())
	}
	for n := 1; n <= len(pubs); n++ {
		for start := range pubs {
			set := make([]any, 0, n)
			for j := range n {
				set = append(set, pubs[(start+j)%len(pubs)])
			}
			ourKeys, err := ours.NewKeys(set...)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ours.NewOpenIDMetadata(issuer, "", "127.0.0.1:6443", ourKeys)
			if err != nil {
				t.Fatal(err)
			}
			getter, err := theirs.StaticPublicKeysGetter(set)
			if err != nil {
				t.Fatal(err)
			}
			p, err := theirs.NewOpenIDMetadataProvider(issuer, "", "127.0.0.1:6443", getter)
			if err != nil {
				t.Fatal(err)
			}
			config, _ := p.GetConfigJSON()
			keySet, _ := p.GetKeysetJSON()
			if string(m.Config) != string(config) {
				t.Errorf("%d keys from #%d: discovery document\nadmitd:   %s\nupstream: %s", n, start, m.Config, config)
			}
			if string(m.KeySet) != string(keySet) {
				t.Errorf("%d keys from #%d: key set\nadmitd:   %s\nupstream: %s", n, start, m.KeySet, keySet)
			}
		}
	}
}

// header is the decoded JOSE header of tok.
func header(t *testing.T, tok string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(tok[:strings.Index(tok, ".")])
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func containsAlg(header, alg string) bool { return strings.Contains(header, `"alg":"`+alg+`"`) }
