package server

import (
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/backgroundaudit"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
)

// BackgroundAuditOptions turn on the background audit: the Audit
// bindings of ValidatingAdmissionPolicies evaluated against the stored
// objects (see internal/backgroundaudit). Off by default.
type BackgroundAuditOptions struct {
	Enabled bool
	// Interval is the longest time between two scans (a change of a
	// policy, binding or param starts one at once); 0 means
	// backgroundaudit.DefaultInterval.
	Interval time.Duration
	// Pause is the time waited after each object evaluated, the bound on
	// the scan's CPU; 0 means backgroundaudit.DefaultPause.
	Pause time.Duration
}

// backgroundAuditUser is the user the scanned UPDATEs are made as, as the
// policies see it (request.userInfo, CEL's authorizer).
var backgroundAuditUser = authenticationv1.UserInfo{Username: "system:admitd:background-audit", Groups: []string{"system:authenticated"}}

// backgroundAuditReporter is who writes the PolicyReports, through the
// loopback (never from the network).
var backgroundAuditReporter = authenticationv1.UserInfo{Username: "system:admitd:background-audit", Groups: []string{"system:masters", "system:authenticated"}}

// newBackgroundAudit returns the scanner o asks for (nil when off), over
// the admission sources of adm; parts gives the loopback once built.
func newBackgroundAudit(o Options, store storage.Store, cat *registry.Catalogue, adm *admissionParts, authz admission.Authorizer, parts *apiParts) (*backgroundaudit.Scanner, error) {
	if !o.BackgroundAudit.Enabled {
		return nil, nil
	}
	client, err := dynamic.NewForConfig(&rest.Config{Host: "http://admitd.loopback", Transport: parts.loopback(backgroundAuditReporter), QPS: -1})
	if err != nil {
		return nil, err
	}
	return backgroundaudit.New(backgroundaudit.Options{
		Store: store, Catalogue: cat, Policies: adm.policies, Params: adm.sources.Params(),
		Namespaces: adm.sources.Namespaces(), Schema: admissionsource.NewSchema(cat), Authorizer: authz,
		User: backgroundAuditUser, Interval: o.BackgroundAudit.Interval, Pause: o.BackgroundAudit.Pause,
		Publisher: &backgroundaudit.ReportPublisher{Client: client, Catalogue: cat},
		Logger:    o.Logger.With("component", "background-audit"),
	})
}
