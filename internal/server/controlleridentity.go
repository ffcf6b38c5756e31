package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"

	"github.com/google/uuid"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/transport"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth/rbac/bootstrap"
	"github.com/admitd/admitd/internal/controllers"
)

// credentialIDKey is the user extra a service-account token's requests
// carry: the token's id (JTI=...).
const credentialIDKey = "authentication.kubernetes.io/credential-id"

// controllerServiceAccountPrefix starts the user name of a
// kube-controller-manager controller that uses its own service account.
const controllerServiceAccountPrefix = "system:serviceaccount:kube-system:"

// controllerLoopback is the loopback transport of a kube-controller-manager
// controller acting as user, as kcm's client builder makes it with
// --use-service-account-credentials: the controller's service account is
// created in kube-system when missing (as kube-controller-manager itself);
// the requests carry the account's uid and a credential id as a token of
// it would, and kcm's User-Agent ending in the account's user name (what
// traces and audit events show of which controller sent a request). A user
// that is not such an account (kcm's own) is used as it is. If the account
// cannot be read or made, the controller still runs, without uid.
func controllerLoopback(ctx context.Context, api *apiserver.Server, user authenticationv1.UserInfo, log *slog.Logger) http.RoundTripper {
	if name, ok := strings.CutPrefix(user.Username, controllerServiceAccountPrefix); ok {
		sa, err := ensureControllerServiceAccount(ctx, api, name)
		if err != nil {
			log.Warn("the controller's service account could not be read or created; its requests carry no uid", "serviceaccount", name, "err", err)
		} else {
			user.UID = string(sa.UID)
			user.Extra = map[string]authenticationv1.ExtraValue{credentialIDKey: {"JTI=" + uuid.NewString()}}
		}
	}
	return transport.NewUserAgentRoundTripper(controllerUserAgent(user.Username), api.Loopback(user))
}

// controllerUserAgent is kube-controller-manager's User-Agent for a
// client of user: its first word names the managedFields entries of the
// controller's writes.
func controllerUserAgent(username string) string {
	return fmt.Sprintf("kube-controller-manager/%s (%s/%s) kubernetes/admitd/%s", bootstrap.KubernetesVersion, runtime.GOOS, runtime.GOARCH, username)
}

// ensureControllerServiceAccount returns kube-system's service account
// name, created (as system:kube-controller-manager) when missing.
func ensureControllerServiceAccount(ctx context.Context, api *apiserver.Server, name string) (*corev1.ServiceAccount, error) {
	core, err := controllers.NewCoreClient(api.Loopback(controllers.TokensUser))
	if err != nil {
		return nil, err
	}
	accounts := core.ServiceAccounts(metav1.NamespaceSystem)
	sa, err := accounts.Get(ctx, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return sa, err
	}
	sa, err = accounts.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return accounts.Get(ctx, name, metav1.GetOptions{})
	}
	return sa, err
}
