package podsecurity

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// named gives a namespace write its request namespace, the namespace's
// name, as the server (and kube-apiserver) sets it.
func named(a *admission.Attributes) *admission.Attributes {
	a.Namespace = a.Name
	return a
}

func TestNamespaces(t *testing.T) {
	c := newCluster()
	c.pods = []*corev1.Pod{
		pod("ns", "a-host", hostNetwork),
		pod("ns", "b-host", hostNetwork),
		pod("ns", "c-host", hostNetwork),
		pod("ns", "plain"),
		pod("ns", "kata-host", hostNetwork, runtimeClass("kata")),
		pod("other", "elsewhere", hostNetwork),
	}
	p := mustPlugin(t, c, `apiVersion: pod-security.admission.config.k8s.io/v1beta1
kind: PodSecurityConfiguration
defaults:
  audit: baseline
exemptions:
  runtimeClasses: [kata]
  namespaces: [exempt]
`)
	invalid := `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`
	cases := []admissiontest.Case{{
		Name:       "create",
		Attributes: named(admissiontest.Create(ns("ns", "enforce", "restricted")).Attributes()),
	}, {
		Name:       "create invalid level",
		Attributes: named(admissiontest.Create(ns("ns", "enforce", "bogus")).Attributes()),
		WantErr:    invalid,
		WantCode:   422,
	}, {
		Name:       "create invalid version",
		Attributes: named(admissiontest.Create(ns("ns", "warn-version", "1.25")).Attributes()),
		WantErr:    `Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"`,
		WantCode:   422,
	}, {
		Name:         "create exempt",
		Attributes:   named(admissiontest.Create(ns("exempt", "enforce", "restricted", "audit-version", "v1.30")).Attributes()),
		WantWarnings: []string{`namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest, audit=baseline:v1.30) will be ignored`},
	}, {
		Name:       "create exempt with the defaults",
		Attributes: named(admissiontest.Create(ns("exempt", "audit", "baseline")).Attributes()),
	}, {
		Name:       "update keeps identical invalid labels",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "bogus", "warn", "baseline"), ns("ns", "enforce", "bogus")).Attributes()),
	}, {
		Name:       "update to invalid labels",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "bogus"), ns("ns")).Attributes()),
		WantErr:    invalid,
		WantCode:   422,
	}, {
		Name:       "update relaxes",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "baseline"), ns("ns", "enforce", "restricted")).Attributes()),
	}, {
		Name:       "update to a stricter level",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "baseline"), ns("ns")).Attributes()),
		WantWarnings: []string{
			`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`,
			`a-host (and 2 other pods): host namespaces`,
		},
	}, {
		Name:       "update to restricted",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "restricted"), ns("ns")).Attributes()),
		WantWarnings: []string{
			`existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"`,
			`a-host (and 2 other pods): host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
			`plain: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`,
		},
	}, {
		Name:       "status subresource",
		Attributes: named(admissiontest.Update(ns("ns", "enforce", "bogus"), ns("ns")).Resource(namespacesGVR, "status").Attributes()),
	}}
	admissiontest.Run(t, p, cases)

	c.listErr = errors.New("boom")
	admissiontest.Run(t, p, []admissiontest.Case{{
		Name:         "list fails",
		Attributes:   named(admissiontest.Update(ns("ns", "enforce", "baseline"), ns("ns")).Attributes()),
		WantWarnings: []string{"failed to list pods while checking new PodSecurity enforce level"},
	}})
}

func TestNamespaceUpdatePrioritisesControllers(t *testing.T) {
	c := newCluster()
	// 3 pods of one controller, 1 of another: one pod per controller first.
	for i := range 3 {
		c.pods = append(c.pods, pod("ns", fmt.Sprintf("rs1-%d", i), hostNetwork, owned("rs1")))
	}
	c.pods = append(c.pods, pod("ns", "rs2-0", owned("rs2")))
	p := mustPlugin(t, c, "")
	a := named(admissiontest.Update(ns("ns", "enforce", "baseline"), ns("ns")).Attributes())
	a.Record = admission.NewRecord()
	if err := p.Validate(t.Context(), a); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	want := []string{
		`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`,
		`rs1-0 (and 2 other pods): host namespaces`,
	}
	if got := a.Record.Warnings(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestConfiguration(t *testing.T) {
	cases := []struct {
		name, config, wantErr string
	}{
		{name: "none"},
		{name: "v1alpha1", config: "apiVersion: pod-security.admission.config.k8s.io/v1alpha1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n"},
		{name: "json", config: `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","exemptions":{"usernames":["a"]}}`},
		{name: "bad level", config: "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: bogus\n",
			wantErr: `PodSecurity configuration error: enforce: must be one of privileged, baseline, restricted`},
		{name: "bad version", config: "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  warn-version: v2.0\n",
			wantErr: `PodSecurity configuration error: warn-version: must be "latest" or "v1.x"`},
		{name: "bad exemption", config: "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemptions:\n  namespaces: [Bad_NS, a, a]\n",
			wantErr: `PodSecurity invalid: [exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.namespaces[2]: Duplicate value: "a"]`},
		{name: "wrong kind", config: "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: Other\n",
			wantErr: `no kind "Other" is registered for version "pod-security.admission.config.k8s.io/v1" in scheme`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			pc := admission.PluginContext{Namespaces: c, Cache: c}
			if tc.config != "" {
				pc.Config = strings.NewReader(tc.config)
			}
			_, err := newPlugin(pc, nil)
			if got := fmt.Sprint(err); (err != nil || tc.wantErr != "") && !strings.HasPrefix(got, tc.wantErr) {
				t.Errorf("newPlugin() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestWithoutPodCache(t *testing.T) {
	c := newCluster()
	p, err := newPlugin(admission.PluginContext{Namespaces: c}, nil)
	if err != nil {
		t.Fatalf("newPlugin() = %v", err)
	}
	admissiontest.Run(t, p, []admissiontest.Case{{
		Name:         "namespace update",
		Attributes:   named(admissiontest.Update(ns("ns", "enforce", "baseline"), ns("ns")).Attributes()),
		WantWarnings: []string{"failed to list pods while checking new PodSecurity enforce level"},
	}})
}
