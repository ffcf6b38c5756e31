package backgroundaudit

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/internal/registry"
)

// The wg-policy report API (wgpolicyk8s.io/v1alpha2), as Kyverno,
// Kubewarden and Policy Reporter read and write it.
const (
	reportGroup   = "wgpolicyk8s.io"
	reportVersion = "v1alpha2"
	// ReportName is the name of the reports the scan writes, one per
	// namespace with findings, and of the ClusterPolicyReport.
	ReportName = "admitd-background-audit"
	// managedByLabel marks the reports as the scan's (Kyverno sets it to
	// kyverno on its own).
	managedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "admitd"
	reportSource   = "admitd"
)

var (
	policyReports        = schema.GroupVersionResource{Group: reportGroup, Version: reportVersion, Resource: "policyreports"}
	clusterPolicyReports = schema.GroupVersionResource{Group: reportGroup, Version: reportVersion, Resource: "clusterpolicyreports"}
)

// ReportPublisher writes a scan's findings as PolicyReports (one per
// namespace with findings) and a ClusterPolicyReport (the cluster-scoped
// objects'), through the API, when the wg-policy CRDs are installed; it
// deletes its reports of namespaces that no longer have findings. Without
// the CRDs it writes nothing: the results stay in memory, for the
// dashboard. Only violations (fail) and errors (error) are reported.
//
// A report the last Publish wrote unchanged is not written again, and
// stale reports are looked for only when a namespace's report goes, so
// that results republished after a followed change write only the
// namespaces whose findings changed (a new scan's timestamp changes
// them all).
type ReportPublisher struct {
	Client    dynamic.Interface
	Catalogue *registry.Catalogue

	// written are the reports the last Publish wrote, by namespace (nil
	// before the first, or after one failed).
	written map[string]*unstructured.Unstructured
}

// Publish writes r's reports.
func (p *ReportPublisher) Publish(ctx context.Context, r *Results) error {
	if _, ok := p.Catalogue.Lookup(policyReports); !ok {
		p.written = nil
		return nil
	}
	reports := reportsOf(r)
	var errs []error
	if p.written == nil || !containsAll(reports, p.written) {
		errs = append(errs, p.deleteStale(ctx, reports))
	}
	for _, ns := range sortedKeys(reports) {
		if ns == "" {
			if _, ok := p.Catalogue.Lookup(clusterPolicyReports); !ok {
				continue
			}
		}
		if prev, ok := p.written[ns]; ok && equality.Semantic.DeepEqual(prev.Object, reports[ns].Object) {
			continue
		}
		// one report failing (its namespace is being deleted) does not
		// keep the others from being written
		errs = append(errs, p.write(ctx, reports[ns].DeepCopy()))
	}
	p.written = reports
	if err := errors.Join(errs...); err != nil {
		p.written = nil // everything is written again next time
		return err
	}
	return nil
}

// containsAll says every namespace of old has a report in reports.
func containsAll(reports, old map[string]*unstructured.Unstructured) bool {
	for ns := range old {
		if _, ok := reports[ns]; !ok {
			return false
		}
	}
	return true
}

func (p *ReportPublisher) resource(ns string) dynamic.ResourceInterface {
	if ns == "" {
		return p.Client.Resource(clusterPolicyReports)
	}
	return p.Client.Resource(policyReports).Namespace(ns)
}

// write creates or replaces one report.
func (p *ReportPublisher) write(ctx context.Context, rep *unstructured.Unstructured) error {
	client := p.resource(rep.GetNamespace())
	cur, err := client.Get(ctx, rep.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = client.Create(ctx, rep, metav1.CreateOptions{FieldManager: ReportName})
	case err == nil:
		rep.SetResourceVersion(cur.GetResourceVersion())
		_, err = client.Update(ctx, rep, metav1.UpdateOptions{FieldManager: ReportName})
	}
	if err != nil {
		return fmt.Errorf("writing %s %s/%s: %w", rep.GetKind(), rep.GetNamespace(), rep.GetName(), err)
	}
	return nil
}

// deleteStale deletes the scan's reports that keep is without.
func (p *ReportPublisher) deleteStale(ctx context.Context, keep map[string]*unstructured.Unstructured) error {
	sel := metav1.ListOptions{LabelSelector: managedByLabel + "=" + managedBy}
	for _, gvr := range []schema.GroupVersionResource{policyReports, clusterPolicyReports} {
		if _, ok := p.Catalogue.Lookup(gvr); !ok {
			continue
		}
		list, err := p.Client.Resource(gvr).List(ctx, sel)
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if _, ok := keep[item.GetNamespace()]; ok || item.GetName() != ReportName {
				continue
			}
			err := p.resource(item.GetNamespace()).Delete(ctx, item.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s/%s: %w", item.GetKind(), item.GetNamespace(), item.GetName(), err)
			}
		}
	}
	return nil
}

// reportsOf are r's findings as reports, by namespace ("" for the
// ClusterPolicyReport).
func reportsOf(r *Results) map[string]*unstructured.Unstructured {
	ts := map[string]any{"seconds": r.Finished.Unix(), "nanos": int64(0)}
	byNS := map[string]*unstructured.Unstructured{}
	add := func(br *BindingResult, f Finding, result string) {
		rep, ok := byNS[f.Object.Namespace]
		if !ok {
			rep = newReport(f.Object.Namespace)
			byNS[f.Object.Namespace] = rep
		}
		for _, msg := range f.Messages {
			entry := map[string]any{"policy": br.Policy, "rule": br.Binding, "result": result, "message": msg,
				"source": reportSource, "scored": true, "timestamp": ts, "resources": []any{resourceOf(f.Object)},
				"properties": map[string]any{"plugin": "ValidatingAdmissionPolicy", "action": "audit"}}
			results, _, _ := unstructured.NestedSlice(rep.Object, "results")
			rep.Object["results"] = append(results, entry)
			n, _, _ := unstructured.NestedInt64(rep.Object, "summary", result)
			_ = unstructured.SetNestedField(rep.Object, n+1, "summary", result)
		}
	}
	for _, br := range r.Bindings {
		for _, f := range br.Violations {
			add(br, f, "fail")
		}
		for _, f := range br.Errors {
			add(br, f, "error")
		}
	}
	return byNS
}

func newReport(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"summary": map[string]any{"pass": int64(0), "fail": int64(0), "warn": int64(0), "error": int64(0), "skip": int64(0)},
		"results": []any{},
	}}
	u.SetAPIVersion(reportGroup + "/" + reportVersion)
	u.SetKind("PolicyReport")
	if ns == "" {
		u.SetKind("ClusterPolicyReport")
	}
	u.SetName(ReportName)
	u.SetNamespace(ns)
	u.SetLabels(map[string]string{managedByLabel: managedBy})
	return u
}

func resourceOf(o ObjectRef) map[string]any {
	ref := map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name}
	if o.Namespace != "" {
		ref["namespace"] = o.Namespace
	}
	if o.UID != "" {
		ref["uid"] = o.UID
	}
	return ref
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
