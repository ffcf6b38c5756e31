// Package replay is `admitd replay`: the create, update, patch and delete
// requests of an audit log (audit.k8s.io/v1 Events at level
// RequestResponse, from kube-apiserver or admitd serve), sent again, as
// dry runs, through a candidate admission configuration in an in-process
// admitd (internal/evaluate's Session, as `admitd audit`), and compared
// with what the cluster decided then, or with what a baseline
// configuration decides: the requests that would now be denied, now be
// allowed, get a different object (with the JSON patch from the recorded
// object to the replayed one) or different admission audit annotations.
//
// The in-process server follows the cluster: before a request, the
// object it acts on is there as the cluster stored it (the responseObject
// of the log's last successful request on it, or the --objects dump), and
// after a successful recorded request, the object the cluster stored
// replaces it (a recorded DELETE removes it). The replayed requests
// themselves are dry runs, so a candidate's different decision does not
// change what later requests see. Nothing is sent to a cluster.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/evaluate"
)

// Options are a replay's configuration.
type Options struct {
	// Candidate is the configuration the requests are replayed through,
	// with whatever it needs (params), created as `admitd eval` creates
	// its files.
	Candidate []evaluate.Object
	// Baseline, when not nil, is a configuration the requests are also
	// replayed through, compared with instead of the recorded decisions.
	Baseline []evaluate.Object
	// Objects are the objects there before the log begins (kubectl get -o
	// yaml dumps): namespaces with their labels, the objects updated or
	// deleted whose earlier state the log does not have.
	Objects   []evaluate.Object
	Responses evaluate.Responses
	Server    evaluate.ServerConfig
	// Since, when set, is when the replay begins: requests received
	// before it are not replayed, only followed (what the cluster stored
	// is put in), as the state later requests find.
	Since time.Time
}

// Run replays the log's requests through o's configuration, one event at
// a time.
func Run(ctx context.Context, log *Log, o Options) (*Report, error) {
	if o.Server.Controllers == nil {
		o.Server.Controllers = withoutServiceAccounts(evaluate.DefaultControllers)
	}
	seed := seedOf(log, o.Objects)
	cand, err := startSide(ctx, seed, o.Candidate, o)
	if err != nil {
		return nil, err
	}
	defer cand.Close()
	r := &replayer{cand: cand, report: newReport(log.Requests, o.Baseline != nil), present: map[string]bool{}, followed: map[string]bool{},
		since: o.Since, createdLater: log.createdLater}
	for _, line := range log.Incomplete {
		r.report.skip("incomplete last line of a log being written (" + line + ")")
	}
	for _, obj := range seed {
		r.present[presentKey(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())] = true
	}
	for _, obj := range o.Objects {
		k := presentKey(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())
		r.present[k], r.followed[k] = true, true
	}
	if o.Baseline != nil {
		if r.base, err = startSide(ctx, seed, o.Baseline, o); err != nil {
			return nil, err
		}
		defer r.base.Close()
	}
	err = log.each(func(ev *Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return r.one(ctx, ev)
	})
	if err != nil {
		return nil, err
	}
	r.report.finish(cand.SetupWarnings())
	return r.report, nil
}

// startSide starts a session with the configuration and the objects there
// before the log.
func startSide(ctx context.Context, seed, config []evaluate.Object, o Options) (*evaluate.Session, error) {
	s, err := evaluate.StartSession(ctx, evaluate.SessionInput{Objects: append(append([]evaluate.Object{}, seed...), config...),
		Responses: o.Responses, Server: o.Server})
	if err != nil {
		return nil, err
	}
	for _, obj := range o.Objects {
		if seeded(obj.GroupVersionKind()) || configuration(obj.GroupVersionKind().Group) {
			continue
		}
		if _, err := s.Preload(ctx, obj.Unstructured); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("%s: %s %s: %w", obj.Source, obj.GetKind(), obj.GetName(), err)
		}
	}
	return s, nil
}

// withoutServiceAccounts is the controllers without the service account
// controller: the log has the default ServiceAccounts the cluster's
// created (its creates are replayed and followed), and one of the
// in-process server's own would make them conflict.
func withoutServiceAccounts(list []string) []string {
	return append(append([]string{}, list...), "-"+controllers.ServiceAccountControllerName)
}

// seeded are the kinds created before the configuration.
func seeded(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && gvk.Kind == "Namespace" || gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// configuration reports whether group is that of admission
// configurations: the candidate's stand, the log's are not followed.
func configuration(group string) bool { return group == "admissionregistration.k8s.io" }

// seedOf are the namespaces and CRDs of objects, and a namespace with its
// default ServiceAccount for each other namespace the log's requests are
// in before it creates it: as the log's later create made it, else
// without labels.
func seedOf(log *Log, objects []evaluate.Object) []evaluate.Object {
	var out []evaluate.Object
	have := map[string]bool{}
	for _, o := range objects {
		if seeded(o.GroupVersionKind()) {
			out = append(out, o)
			if o.GetKind() == "Namespace" {
				have[o.GetName()] = true
			}
		}
	}
	for _, ns := range log.uncreated {
		if have[ns] {
			continue
		}
		seed := namespace(ns)
		if later := log.createdLater[ns]; later != nil {
			seed = evaluate.Object{Unstructured: later.DeepCopy(), Source: "a namespace of the audit log, as its create later in the log made it"}
		}
		out = append(out, seed, defaultServiceAccount(ns))
	}
	return out
}

func defaultServiceAccount(ns string) evaluate.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": "default", "namespace": ns}}}
	return evaluate.Object{Unstructured: u, Source: "the default ServiceAccount of a namespace of the audit log"}
}

func namespace(name string) evaluate.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	return evaluate.Object{Unstructured: u, Source: "a namespace of the audit log"}
}

// decode is raw as an object, nil when it is none (absent, a Status).
func decode(raw json.RawMessage) *unstructured.Unstructured {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" || u.GetKind() == "Status" && u.GetAPIVersion() == "v1" {
		return nil
	}
	return u
}
