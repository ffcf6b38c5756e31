package suite

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/evaluate"
)

// CaseResult is how one case went.
type CaseResult struct {
	Suite, Case string
	// Failures are the expectations not met.
	Failures []string
	// Err is set when the case could not run (a file, a setup the server
	// refused).
	Err      error
	Duration time.Duration
	// Result is what the request got (nil when Err is set).
	Result *evaluate.Result
}

// Passed reports whether the case ran and met every expectation.
func (r CaseResult) Passed() bool { return r.Err == nil && len(r.Failures) == 0 }

// Options adjust a run.
type Options struct {
	// Run, when set, runs only the cases whose "suite/case" it matches.
	Run *regexp.Regexp
	// OnCase is called after each case (for progress output).
	OnCase func(CaseResult)
}

// Run runs every case of the suites, one after the other, each on its own
// in-process server.
func Run(ctx context.Context, suites []*Suite, o Options) []CaseResult {
	var out []CaseResult
	for _, s := range suites {
		for _, c := range s.Cases {
			if o.Run != nil && !o.Run.MatchString(s.Name+"/"+c.Name) {
				continue
			}
			if ctx.Err() != nil {
				return out
			}
			r := runCase(ctx, s, c)
			if o.OnCase != nil {
				o.OnCase(r)
			}
			out = append(out, r)
		}
	}
	return out
}

func runCase(ctx context.Context, s *Suite, c Case) CaseResult {
	start := time.Now()
	r := CaseResult{Suite: s.Name, Case: c.Name}
	in, err := s.input(c)
	if err == nil {
		r.Result, err = evaluate.Run(ctx, in)
	}
	r.Duration = time.Since(start)
	if err != nil {
		r.Err = err
		return r
	}
	r.Failures = Check(c.Expect, r.Result)
	return r
}

// input builds the evaluation of case c.
func (s *Suite) input(c Case) (evaluate.Input, error) {
	var in evaluate.Input
	var err error
	if in.Objects, err = s.objects(append(append([]string{}, s.Files...), c.Files...), append(append([]map[string]any{}, s.Objects...), c.Objects...)); err != nil {
		return in, err
	}
	if in.Request, err = s.request(c); err != nil {
		return in, err
	}
	responses := s.WebhookResponses
	if c.WebhookResponses != "" {
		responses = c.WebhookResponses
	}
	if responses != "" {
		if in.Responses, err = evaluate.LoadResponses(s.path(responses)); err != nil {
			return in, err
		}
	}
	in.Server = s.serverConfig()
	return in, nil
}

func (s *Suite) objects(files []string, inline []map[string]any) ([]evaluate.Object, error) {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = s.path(f)
	}
	objs, err := evaluate.LoadObjects(paths...)
	if err != nil {
		return nil, err
	}
	for i, m := range inline {
		objs = append(objs, evaluate.Object{Unstructured: &unstructured.Unstructured{Object: m}, Source: s.Path + ": objects[" + itoa(i) + "]"})
	}
	return objs, nil
}

func (s *Suite) request(c Case) (evaluate.Request, error) {
	var q evaluate.Request
	var err error
	if c.Request != "" {
		if q, err = evaluate.LoadRequest(s.path(c.Request)); err != nil {
			return q, err
		}
	} else {
		q.Object = &unstructured.Unstructured{Object: deepCopy(c.Object)}
	}
	if c.Old != "" {
		objs, err := evaluate.LoadObjects(s.path(c.Old))
		if err != nil {
			return q, err
		}
		if len(objs) != 1 {
			return q, errors.New(c.Old + ": one object is needed")
		}
		q.OldObject = objs[0].Unstructured
	}
	if c.OldObject != nil {
		q.OldObject = &unstructured.Unstructured{Object: deepCopy(c.OldObject)}
	}
	if c.Operation != "" {
		q.Operation = c.Operation
	}
	if c.Namespace != "" {
		q.Namespace = c.Namespace
	}
	if c.ResourceName != "" {
		q.Name = c.ResourceName
	}
	if c.Subresource != "" {
		q.Subresource = c.Subresource
	}
	if c.User != nil {
		q.User = evaluate.User{Name: c.User.Name, UID: c.User.UID, Groups: c.User.Groups, Extra: c.User.Extra}
	}
	if c.Impersonator != nil {
		q.Impersonator = &evaluate.User{Name: c.Impersonator.Name, UID: c.Impersonator.UID, Groups: c.Impersonator.Groups, Extra: c.Impersonator.Extra}
	}
	q.DryRun = q.DryRun || c.DryRun
	return q, nil
}

func (s *Suite) serverConfig() evaluate.ServerConfig {
	v := s.Server
	c := evaluate.ServerConfig{EnableAdmissionPlugins: v.EnableAdmissionPlugins, DisableAdmissionPlugins: v.DisableAdmissionPlugins,
		FeatureGates: v.FeatureGates, AllowPrivileged: v.AllowPrivileged, AuthorizationModes: v.AuthorizationMode, QuotaController: true,
		CallUnreachableWebhooks: v.CallUnreachableWebhooks}
	if v.AdmissionControlConfigFile != "" {
		c.AdmissionControlConfigFile = s.path(v.AdmissionControlConfigFile)
	}
	if v.ServiceMap != "" {
		c.ServiceMap = s.path(v.ServiceMap)
	}
	if v.QuotaController != nil {
		c.QuotaController = *v.QuotaController
	}
	return c
}

// path resolves p against the suite file's directory.
func (s *Suite) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.Path), p)
}
