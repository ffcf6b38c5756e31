package audit

import (
	"io"
	"sort"
	"time"

	"sigs.k8s.io/yaml"
)

// wg-policy's report format (wgpolicyk8s.io/v1alpha2), as Kyverno,
// Kubewarden and Policy Reporter read it: a PolicyReport per namespace,
// a ClusterPolicyReport for cluster-scoped objects.
const (
	policyReportAPIVersion = "wgpolicyk8s.io/v1alpha2"
	policyReportName       = "admitd-audit"
	policyReportSource     = "admitd"
)

// Results of a PolicyReport.
const (
	resultPass  = "pass"
	resultFail  = "fail"
	resultWarn  = "warn"
	resultError = "error"
)

type policyReport struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   map[string]string   `json:"metadata"`
	Summary    map[string]int      `json:"summary"`
	Results    []policyReportEntry `json:"results"`
}

type policyReportEntry struct {
	Policy     string            `json:"policy"`
	Rule       string            `json:"rule,omitempty"`
	Result     string            `json:"result"`
	Message    string            `json:"message,omitempty"`
	Resources  []resourceRef     `json:"resources"`
	Source     string            `json:"source"`
	Scored     bool              `json:"scored"`
	Properties map[string]string `json:"properties,omitempty"`
	Timestamp  timestamp         `json:"timestamp"`
}

type resourceRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

type timestamp struct {
	Seconds int64 `json:"seconds"`
	Nanos   int32 `json:"nanos"`
}

// policyReports are r's results as PolicyReports, namespaces in order,
// then the ClusterPolicyReport; reports without results are left out.
func policyReports(r *Report, now time.Time) []*policyReport {
	byNS := map[string]*policyReport{}
	ts := timestamp{Seconds: now.Unix()}
	for _, p := range r.Policies {
		for _, e := range p.entries(ts) {
			ns := e.Resources[0].Namespace
			rep, ok := byNS[ns]
			if !ok {
				rep = newPolicyReport(ns)
				byNS[ns] = rep
			}
			rep.Results = append(rep.Results, e)
			rep.Summary[e.Result]++
		}
	}
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	sort.Slice(namespaces, func(i, j int) bool {
		// the ClusterPolicyReport ("") last
		if (namespaces[i] == "") != (namespaces[j] == "") {
			return namespaces[j] == ""
		}
		return namespaces[i] < namespaces[j]
	})
	out := make([]*policyReport, len(namespaces))
	for i, ns := range namespaces {
		out[i] = byNS[ns]
	}
	return out
}

func newPolicyReport(ns string) *policyReport {
	rep := &policyReport{APIVersion: policyReportAPIVersion, Kind: "PolicyReport",
		Metadata: map[string]string{"name": policyReportName, "namespace": ns},
		Summary:  map[string]int{resultPass: 0, resultFail: 0, resultWarn: 0, resultError: 0, "skip": 0}}
	if ns == "" {
		rep.Kind, rep.Metadata = "ClusterPolicyReport", map[string]string{"name": policyReportName}
	}
	return rep
}

// entries are p's results: one per object and action; an object it ran
// on and said nothing about passes.
func (p *Policy) entries(ts timestamp) []policyReportEntry {
	policy, rule := p.Name, p.Configuration
	if policy == "" {
		policy = p.Plugin
	}
	props := map[string]string{"plugin": p.Plugin}
	var out []policyReportEntry
	add := func(f Finding, result, action, message string) {
		e := policyReportEntry{Policy: policy, Rule: rule, Result: result, Message: message, Source: policyReportSource,
			Scored: true, Timestamp: ts, Resources: []resourceRef{resourceOf(f.Object)}, Properties: map[string]string{"action": action}}
		for k, v := range props {
			e.Properties[k] = v
		}
		if len(f.Patch) > 0 {
			e.Properties["patch"] = compactJSON(f.Patch)
		}
		out = append(out, e)
	}
	for _, f := range p.Denied {
		add(f, resultFail, "deny", f.Message)
	}
	for _, f := range p.Errors {
		add(f, resultError, "error", f.Message)
	}
	for _, f := range p.Warned {
		add(f, resultWarn, "warn", f.text())
	}
	for _, f := range p.Annotated {
		msg := f.Message
		if msg == "" {
			msg = annotations(f.AuditAnnotations)
		}
		add(f, resultWarn, "audit", msg)
	}
	for _, f := range p.Mutated {
		add(f, resultWarn, "mutate", "would change the object")
	}
	for _, o := range p.Passed {
		add(Finding{Object: *o}, resultPass, "none", "")
	}
	return out
}

func resourceOf(o ObjectRef) resourceRef {
	return resourceRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

func writePolicyReports(w io.Writer, r *Report) error {
	for i, rep := range policyReports(r, time.Now()) {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		b, err := yaml.Marshal(rep)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
