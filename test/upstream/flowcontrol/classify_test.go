package flowcontrol

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	upstream "k8s.io/apiserver/pkg/util/flowcontrol"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/apiserver/pkg/util/shufflesharding"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/admitd/admitd/internal/flowcontrol"
)

var (
	users      = []string{"alice", "system:anonymous", "system:node:n1", "system:kube-controller-manager", "system:kube-scheduler", "system:serviceaccount:kube-system:job-controller", "system:serviceaccount:team:builder", "system:serviceaccount:teamx:a", "admin"}
	groupSets  = [][]string{{"system:authenticated"}, {"system:unauthenticated"}, {"system:masters", "system:authenticated"}, {"system:nodes", "system:authenticated"}, {"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"}, {"devs"}, nil}
	verbs      = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	groups     = []string{"", "apps", "coordination.k8s.io", "batch"}
	resources  = []string{"pods", "configmaps", "leases", "events", "nodes", "jobs"}
	subs       = []string{"", "", "status", "log"}
	namespaces = []string{"", "default", "kube-system", "kube-node-lease", "team"}
	paths      = []string{"/healthz", "/livez", "/readyz", "/readyz/etcd", "/version", "/api", "/apis/apps", "/openapi/v2", "/metrics", "/healthzz"}
)

func randomDigest(r *rand.Rand) flowcontrol.Digest {
	d := flowcontrol.Digest{User: users[r.IntN(len(users))], Groups: groupSets[r.IntN(len(groupSets))]}
	if r.IntN(4) == 0 {
		d.Verb, d.Path = []string{"get", "post", "put"}[r.IntN(3)], paths[r.IntN(len(paths))]
		return d
	}
	d.IsResource = true
	d.Verb, d.APIGroup, d.Resource = verbs[r.IntN(len(verbs))], groups[r.IntN(len(groups))], resources[r.IntN(len(resources))]
	d.Subresource, d.Namespace = subs[r.IntN(len(subs))], namespaces[r.IntN(len(namespaces))]
	return d
}

func pick(r *rand.Rand, from []string, n int) []string {
	if r.IntN(4) == 0 {
		return []string{"*"}
	}
	var out []string
	for range 1 + r.IntN(n) {
		out = append(out, from[r.IntN(len(from))])
	}
	return out
}

// randomSchema is a FlowSchema with random subjects and rules, at a
// random precedence among the bootstrap ones.
func randomSchema(r *rand.Rand, i int, levels []string) *flowcontrolv1.FlowSchema {
	var subjects []flowcontrolv1.Subject
	for range 1 + r.IntN(2) {
		switch r.IntN(3) {
		case 0:
			subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: pick(r, users, 1)[0]}})
		case 1:
			g := pick(r, []string{"system:authenticated", "devs", "system:nodes", "system:serviceaccounts:team"}, 1)[0]
			subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: g}})
		default:
			ns := []string{"kube-system", "team", "teamx", "tea"}[r.IntN(4)]
			subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: pick(r, []string{"builder", "job-controller", "a"}, 1)[0]}})
		}
	}
	rule := flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects}
	if r.IntN(2) == 0 {
		res := resources
		res = append(res, "pods/status", "pods/log")
		ns := pick(r, []string{"default", "kube-system", "team"}, 2)
		rule.ResourceRules = []flowcontrolv1.ResourcePolicyRule{{Verbs: pick(r, verbs, 3), APIGroups: pick(r, groups, 2), Resources: pick(r, res, 3),
			ClusterScope: r.IntN(2) == 0, Namespaces: ns}}
	}
	if r.IntN(2) == 0 {
		rule.NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{{Verbs: pick(r, []string{"get", "post"}, 2),
			NonResourceURLs: pick(r, []string{"/healthz", "/readyz", "/apis/*", "/api", "/version"}, 2)}}
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("random-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: int32(1 + r.IntN(10000)),
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: levels[r.IntN(len(levels))]},
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rule}}}
	switch r.IntN(3) {
	case 0:
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	case 1:
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}
	}
	return fs
}

// upstreamClassifier runs upstream's controller over the objects and
// returns a function classifying one digest.
func upstreamClassifier(t *testing.T, pls []*flowcontrolv1.PriorityLevelConfiguration, fss []*flowcontrolv1.FlowSchema) func(flowcontrol.Digest) [3]string {
	t.Helper()
	var objs []runtime.Object
	for _, pl := range pls {
		objs = append(objs, pl.DeepCopy())
	}
	for _, fs := range fss {
		objs = append(objs, fs.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	factory := kubeinformers.NewSharedInformerFactory(client, 0)
	ctl := upstream.New(factory, client.FlowcontrolV1(), 600)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	go func() { _ = ctl.Run(stop) }()
	classify := func(d flowcontrol.Digest) [3]string {
		ri := &request.RequestInfo{IsResourceRequest: d.IsResource, Path: d.Path, Verb: d.Verb, APIGroup: d.APIGroup,
			Resource: d.Resource, Subresource: d.Subresource, Namespace: d.Namespace, Name: d.Name}
		u := &user.DefaultInfo{Name: d.User, Groups: d.Groups}
		var got [3]string
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		ctl.Handle(ctx, upstream.RequestDigest{RequestInfo: ri, User: u},
			func(fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration, distinguisher string) {
				got = [3]string{fs.Name, pl.Name, distinguisher}
			},
			func() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 1} },
			func(bool) {}, func() {})
		return got
	}
	// its worker digests the configuration in the background: wait until
	// a plain user is no longer classified under the imagined catch-all
	probe := flowcontrol.Digest{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/version"}
	for deadline := time.Now().Add(10 * time.Second); classify(probe)[0] == "catch-all"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("upstream's controller never took the configuration")
		}
	}
	return classify
}

func TestClassificationAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 37))
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	pls = append(pls, bootstrap.MandatoryPriorityLevelConfigurations...)
	pls = append(pls, bootstrap.SuggestedPriorityLevelConfigurations...)
	var levels []string
	for _, pl := range pls {
		levels = append(levels, pl.Name)
	}
	levels = append(levels, "missing") // dangling schemas are skipped
	var fss []*flowcontrolv1.FlowSchema
	fss = append(fss, bootstrap.MandatoryFlowSchemas...)
	fss = append(fss, bootstrap.SuggestedFlowSchemas...)
	for i := range 30 {
		fss = append(fss, randomSchema(r, i, levels))
	}
	theirs := upstreamClassifier(t, pls, fss)
	ours := flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 600})
	ours.Configure(pls, fss)
	differ := 0
	for i := range 4000 {
		d := randomDigest(r)
		cl := ours.Classify(&d)
		got, want := [3]string{cl.FlowSchema, cl.PriorityLevel, cl.FlowDistinguisher}, theirs(d)
		if got != want {
			differ++
			if differ <= 10 {
				t.Errorf("request %d %+v: admitd %v, upstream %v", i, d, got, want)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of 4000 requests classified differently", differ)
	}
}

func TestDealerAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 37))
	for range 20000 {
		deck := 1 + r.IntN(512)
		hand := 1 + r.IntN(min(deck, 8))
		dealer, err := shufflesharding.NewDealer(deck, hand)
		if err != nil {
			continue
		}
		hash := r.Uint64()
		want := dealer.DealIntoHand(hash, make([]int, 0, hand))
		got := make([]int, hand)
		flowcontrol.DealHand(hash, deck, got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("deck %d hand %d hash %d: admitd %v, upstream %v", deck, hand, hash, got, want)
		}
	}
}
