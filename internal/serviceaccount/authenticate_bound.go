package serviceaccount

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// validate checks the time claims and the objects the token names, and
// returns its user.
func (a *Authenticator) validate(ctx context.Context, c *verifiedClaims) (authenticationv1.UserInfo, error) {
	now := a.now()
	if err := checkTimes(c, now); err != nil {
		return authenticationv1.UserInfo{}, err
	}
	k := c.Kubernetes
	ns, ref := k.Namespace, k.ServiceAccount
	sa, err := a.Objects.ServiceAccount(ctx, ns, ref.Name)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	if sa.UID != ref.UID {
		return authenticationv1.UserInfo{}, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, ref.UID)
	}
	if gone(sa.DeletionTimestamp, now) {
		return authenticationv1.UserInfo{}, fmt.Errorf("service account %s/%s has been deleted", ns, ref.Name)
	}
	extra := map[string]authenticationv1.ExtraValue{}
	if err := a.checkSecret(ctx, ns, k.Secret, now); err != nil {
		return authenticationv1.UserInfo{}, err
	}
	if err := a.checkPod(ctx, ns, k.Pod, now, extra); err != nil {
		return authenticationv1.UserInfo{}, err
	}
	if err := a.checkNode(ctx, k, now, extra); err != nil {
		return authenticationv1.UserInfo{}, err
	}
	if c.ID != "" {
		extra[credentialIDKey] = authenticationv1.ExtraValue{"JTI=" + c.ID}
	}
	user := authenticationv1.UserInfo{Username: "system:serviceaccount:" + ns + ":" + ref.Name, UID: string(ref.UID),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}}
	if len(extra) > 0 {
		user.Extra = extra
	}
	return user, nil
}

func (a *Authenticator) checkSecret(ctx context.Context, ns string, ref *Ref, now time.Time) error {
	if ref == nil {
		return nil
	}
	secret, err := a.Objects.Secret(ctx, ns, ref.Name)
	if err != nil {
		return errInvalidated
	}
	if secret.UID != ref.UID {
		return fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", secret.UID, ref.UID)
	}
	if gone(secret.DeletionTimestamp, now) {
		return errInvalidated
	}
	return nil
}

func (a *Authenticator) checkPod(ctx context.Context, ns string, ref *Ref, now time.Time, extra map[string]authenticationv1.ExtraValue) error {
	if ref == nil {
		return nil
	}
	pod, err := a.Objects.Pod(ctx, ns, ref.Name)
	if err != nil {
		return errInvalidated
	}
	if pod.UID != ref.UID {
		return fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", pod.UID, ref.UID)
	}
	if gone(pod.DeletionTimestamp, now) {
		return errInvalidated
	}
	if ref.Name != "" && ref.UID != "" {
		extra[PodNameKey] = authenticationv1.ExtraValue{ref.Name}
		extra[PodUIDKey] = authenticationv1.ExtraValue{string(ref.UID)}
	}
	return nil
}

// checkNode records the node of a pod-bound token as it is, and checks
// the node a token is bound to directly.
func (a *Authenticator) checkNode(ctx context.Context, k KubernetesClaim, now time.Time, extra map[string]authenticationv1.ExtraValue) error {
	ref := k.Node
	if ref == nil {
		return nil
	}
	if k.Pod == nil {
		node, err := a.Objects.Node(ctx, ref.Name)
		if err != nil {
			return errInvalidated
		}
		if node.UID != ref.UID {
			return fmt.Errorf("node UID (%s) does not match service account node ref claim (%s)", node.UID, ref.UID)
		}
		if gone(node.DeletionTimestamp, now) {
			return errInvalidated
		}
	}
	if ref.Name != "" {
		extra[NodeNameKey] = authenticationv1.ExtraValue{ref.Name}
		if ref.UID != "" {
			extra[NodeUIDKey] = authenticationv1.ExtraValue{string(ref.UID)}
		}
	}
	return nil
}
