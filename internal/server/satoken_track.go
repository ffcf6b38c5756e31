package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// apiserverUser is the API server's own loopback identity, as upstream's.
var apiserverUser = authenticationv1.UserInfo{Username: "system:apiserver", Groups: []string{"system:masters", "system:authenticated"}}

// legacyTracker records the use of legacy service-account tokens as
// kube-apiserver does: audit annotations and a warning on the request, and
// the day of use in the Secret's kubernetes.io/legacy-token-last-used label
// (written at most once a day, through the loopback client).
type legacyTracker struct {
	client atomic.Pointer[boundClient]
	now    func() time.Time
	log    *slog.Logger
}

var _ serviceaccount.LegacyTracker = (*legacyTracker)(nil)

type boundClient struct{ dynamic.Interface }

// bind lets the tracker write, once the API server exists.
func (t *legacyTracker) bind(api *apiserver.Server) error {
	c, err := controllers.NewClient(api.Loopback(apiserverUser))
	if err != nil {
		return err
	}
	t.client.Store(&boundClient{c})
	return nil
}

func (t *legacyTracker) Annotate(ctx context.Context, key, value string) {
	if rec := apiserver.RequestRecord(ctx); rec != nil {
		_ = rec.AddAnnotation(key, value)
	}
}

func (t *legacyTracker) Warn(ctx context.Context, text string) {
	if rec := apiserver.RequestRecord(ctx); rec != nil {
		rec.AddWarning(text)
	}
}

// Used labels secret with today's date unless it carries today's or
// tomorrow's (a clock a little ahead) already.
func (t *legacyTracker) Used(ctx context.Context, secret *corev1.Secret) {
	now := t.now().UTC()
	today, tomorrow := now.Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly)
	if last := secret.Labels[serviceaccount.LegacyTokenLastUsedLabel]; last == today || last == tomorrow {
		return
	}
	client := t.client.Load()
	if client == nil {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": secret.UID,
		"labels": map[string]string{serviceaccount.LegacyTokenLastUsedLabel: today}}})
	if err != nil {
		return
	}
	_, err = client.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace(secret.Namespace).
		Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.log.Warn("labelling a legacy service account token secret with its last use", "namespace", secret.Namespace, "secret", secret.Name, "err", err)
	}
}
