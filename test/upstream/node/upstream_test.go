package node

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	certsinformers "k8s.io/client-go/informers/certificates/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	upstream "k8s.io/kubernetes/plugin/pkg/auth/authorizer/node"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/node"
)

// recorder stands in for a shared informer: it keeps the event handler that
// upstream's graph populator registers, so that the test delivers events
// synchronously, in its own order. Only AddEventHandler is implemented.
type recorder struct {
	cache.SharedIndexInformer
	handler cache.ResourceEventHandler
}

func (r *recorder) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	r.handler = h
	return synced{}, nil
}

type synced struct {
	cache.ResourceEventHandlerRegistration
}

func (synced) HasSynced() bool { return true }

// The typed informers hand out their recorder; listers are never used.
type (
	podInformer struct {
		coreinformers.PodInformer
		r *recorder
	}
	pvInformer struct {
		coreinformers.PersistentVolumeInformer
		r *recorder
	}
	vaInformer struct {
		storageinformers.VolumeAttachmentInformer
		r *recorder
	}
	sliceInformer struct {
		resourceinformers.ResourceSliceInformer
		r *recorder
	}
	pcrInformer struct {
		certsinformers.PodCertificateRequestInformer
		r *recorder
	}
)

func (i podInformer) Informer() cache.SharedIndexInformer   { return i.r }
func (i pvInformer) Informer() cache.SharedIndexInformer    { return i.r }
func (i vaInformer) Informer() cache.SharedIndexInformer    { return i.r }
func (i sliceInformer) Informer() cache.SharedIndexInformer { return i.r }
func (i pcrInformer) Informer() cache.SharedIndexInformer   { return i.r }

// pair is one cluster seen by both authorizers: every event goes to
// upstream's populator handlers and to our Graph.
type pair struct {
	ours                         *node.Graph
	oursAuthz                    *node.Authorizer
	upAuthz                      *upstream.NodeAuthorizer
	pods, pvs, vas, slices, pcrs *recorder
}

func newPair(t testing.TB) *pair {
	t.Helper()
	p := &pair{ours: node.NewGraph(nil), pods: &recorder{}, pvs: &recorder{}, vas: &recorder{}, slices: &recorder{}, pcrs: &recorder{}}
	g := upstream.NewGraph()
	upstream.AddGraphEventHandlers(g, nil, podInformer{r: p.pods}, pvInformer{r: p.pvs}, vaInformer{r: p.vas},
		sliceInformer{r: p.slices}, pcrInformer{r: p.pcrs})
	p.upAuthz = upstream.NewAuthorizer(g, nodeidentifier.NewDefaultNodeIdentifier(), bootstrappolicy.NodeRules())
	rules, err := node.BootstrapRules()
	if err != nil {
		t.Fatal(err)
	}
	p.oursAuthz = node.New(p.ours, rules)
	return p
}

func (p *pair) addPod(o *corev1.Pod) { p.ours.AddPod(o); p.pods.handler.OnAdd(o, false) }
func (p *pair) updatePod(old, o *corev1.Pod) {
	p.ours.UpdatePod(old, o)
	p.pods.handler.OnUpdate(old, o)
}
func (p *pair) deletePod(o *corev1.Pod)          { p.ours.DeletePod(o); p.pods.handler.OnDelete(o) }
func (p *pair) addPV(o *corev1.PersistentVolume) { p.ours.AddPV(o); p.pvs.handler.OnAdd(o, false) }
func (p *pair) updatePV(old, o *corev1.PersistentVolume) {
	p.ours.UpdatePV(old, o)
	p.pvs.handler.OnUpdate(old, o)
}
func (p *pair) deletePV(o *corev1.PersistentVolume) { p.ours.DeletePV(o); p.pvs.handler.OnDelete(o) }
func (p *pair) addVA(o *storagev1.VolumeAttachment) {
	p.ours.AddVolumeAttachment(o)
	p.vas.handler.OnAdd(o, false)
}
func (p *pair) updateVA(old, o *storagev1.VolumeAttachment) {
	p.ours.UpdateVolumeAttachment(old, o)
	p.vas.handler.OnUpdate(old, o)
}
func (p *pair) deleteVA(o *storagev1.VolumeAttachment) {
	p.ours.DeleteVolumeAttachment(o)
	p.vas.handler.OnDelete(o)
}
func (p *pair) addSlice(o *resourcev1.ResourceSlice) {
	p.ours.AddResourceSlice(o)
	p.slices.handler.OnAdd(o, false)
}
func (p *pair) deleteSlice(o *resourcev1.ResourceSlice) {
	p.ours.DeleteResourceSlice(o)
	p.slices.handler.OnDelete(o)
}
func (p *pair) addPCR(o *certificatesv1.PodCertificateRequest) {
	p.ours.AddPodCertificateRequest(o)
	p.pcrs.handler.OnAdd(o, false)
}
func (p *pair) deletePCR(o *certificatesv1.PodCertificateRequest) {
	p.ours.DeletePodCertificateRequest(o)
	p.pcrs.handler.OnDelete(o)
}

// verdict is a decision with its reason and whether there was an error.
type verdict struct {
	decision int
	reason   string
	err      bool
}

func (p *pair) decide(t testing.TB, a auth.Attributes) (ours, theirs verdict) {
	t.Helper()
	d, reason, err := p.oursAuthz.Authorize(context.Background(), a)
	ours = verdict{int(d), reason, err != nil}
	ud, ureason, uerr := p.upAuthz.Authorize(context.Background(), upstreamAttributes(a))
	theirs = verdict{int(ud), ureason, uerr != nil}
	return ours, theirs
}

func upstreamAttributes(a auth.Attributes) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: upstreamUser(a.User), Verb: a.Verb, Namespace: a.Namespace, APIGroup: a.APIGroup,
		APIVersion: a.APIVersion, Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
		ResourceRequest: a.ResourceRequest, Path: a.Path,
		FieldSelectorRequirements: a.FieldSelector, LabelSelectorRequirements: a.LabelSelector,
	}
}

func upstreamUser(u authenticationv1.UserInfo) user.Info {
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups}
}

func nodeBootstrapRules() ([]rbacv1.PolicyRule, error) { return node.BootstrapRules() }

func upstreamNodeRules() []rbacv1.PolicyRule { return bootstrappolicy.NodeRules() }

// TestRulesFor compares what both answer a rules review with.
func TestRulesFor(t *testing.T) {
	p := newPair(t)
	for _, u := range []authenticationv1.UserInfo{
		{Username: "system:node:n1", Groups: []string{"system:nodes"}},
		{Username: "system:node:", Groups: []string{"system:nodes"}},
		{Username: "system:node:n1"},
		{Username: "alice", Groups: []string{"system:nodes"}},
	} {
		_, _, incomplete, err := p.oursAuthz.RulesReview(u, "ns1")
		_, _, uincomplete, uerr := p.upAuthz.RulesFor(context.Background(), upstreamUser(u), "ns1")
		if incomplete != uincomplete || (err == nil) != (uerr == nil) || (err != nil && err.Error() != uerr.Error()) {
			t.Errorf("RulesFor(%s) = incomplete %v, err %v; upstream %v, %v", u.Username, incomplete, err, uincomplete, uerr)
		}
	}
}
