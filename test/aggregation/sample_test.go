package aggregation

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// wardleObjects registers the sample server behind Service wardle/api: a
// cluster IP on loopback where it listens (admitd dials cluster IPs by
// default, as kube-apiserver), an EndpointSlice with a ready endpoint for
// the availability check (an EndpointSlice may not hold a loopback
// address; this one is never dialed), and the APIService with the CA of
// the server's certificate.
const wardleObjects = `apiVersion: v1
kind: Namespace
metadata: {name: wardle}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: wardle}
spec:
  clusterIP: %[1]s
  ports: [{port: %[2]s, targetPort: %[2]s}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: wardle, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]
ports: [{name: "", port: %[2]s, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.wardle.example.com}
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {name: api, namespace: wardle, port: %[2]s}
  caBundle: %[3]s
`

const flunder = `apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata: {name: my-first-flunder, namespace: default, labels: {sample-label: "true"}}
spec: {reference: "", referenceType: ""}
`

// deprecated is the warning the sample server attaches to v1alpha1
// flunders; kubectl prints it as kube-apiserver 1.37.2 passed it on.
const deprecated = "Warning: wardle.example.com/v1alpha1 Flunder is deprecated in v1.3+, unavailable in v1.10+"

// TestSampleAPIServerBehindAdmitd: k8s.io/sample-apiserver authenticates
// and authorizes against admitd (TokenReview, SubjectAccessReview, the
// extension-apiserver-authentication ConfigMap) and serves flunders behind
// an APIService; kubectl sees, through admitd, what it saw through
// kube-apiserver 1.37.2 in the same setup (recorded side by side): the
// APIService Available, flunders in api-resources, create and list with
// the server's warning, kubectl explain from its OpenAPI v3 document, RBAC
// of admitd deciding for both servers, and when
// the sample server stops, FailedDiscoveryCheck, Stale discovery and
// ServiceUnavailable.
func TestSampleAPIServerBehindAdmitd(t *testing.T) {
	ip := fmt.Sprintf("127.1.0.%d", 10+rand.IntN(240))
	if l, err := net.Listen("tcp", ip+":0"); err != nil {
		t.Skipf("cannot listen on %s (this system does not route 127.0.0.0/8 to loopback): %v", ip, err)
	} else {
		l.Close()
	}
	kubectlBinary(t) // skips early without kubectl
	dir := t.TempDir()
	_, kubeconfig := startAdmitd(t, filepath.Join(dir, "admitd"), "--service-cluster-ip-range", "127.1.0.0/24")
	certs := filepath.Join(dir, "wardle-certs")
	if out, err := exec.Command(binaries.admitd, "certs", "--out", certs, "--hosts", "api.wardle.svc").CombinedOutput(); err != nil {
		t.Fatalf("admitd certs: %v\n%s", err, out)
	}
	caPEM, err := os.ReadFile(filepath.Join(certs, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t, ip)
	_, port, _ := net.SplitHostPort(addr)
	policy, auditLog := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "sample-audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sample := start(t, binaries.sample, "--etcd-servers", startEtcd(t), "--bind-address", ip, "--secure-port", port,
		"--tls-cert-file", filepath.Join(certs, "tls.crt"), "--tls-private-key-file", filepath.Join(certs, "tls.key"),
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--audit-policy-file", policy, "--audit-log-path", auditLog)
	waitHealthy(t, sample, addr)

	mustKubectl(t, kubeconfig, fmt.Sprintf(wardleObjects, ip, port, base64.StdEncoding.EncodeToString(caPEM)), "apply", "-f", "-")
	waitFor(t, "the APIService is Available", func() bool {
		out, _, _ := kubectl(t, kubeconfig, "", "get", "apiservices")
		return hasLine(out, "v1alpha1.wardle.example.com", "wardle/api", "True", fieldAge(out, "v1alpha1.wardle.example.com"))
	})
	if got := mustKubectl(t, kubeconfig, "", "get", "apiservice", "v1alpha1.wardle.example.com", "-o",
		"jsonpath={.status.conditions[0].reason}/{.status.conditions[0].message}"); got != "Passed/all checks passed" {
		t.Errorf("Available condition = %q, want Passed/all checks passed", got)
	}
	waitFor(t, "flunders are discovered", func() bool {
		out, _, _ := kubectl(t, kubeconfig, "", "api-resources", "--api-group=wardle.example.com", "-o", "wide")
		return hasLine(out, "flunders", "wardle.example.com/v1alpha1", "true", "Flunder", "create,delete,deletecollection,get,list,patch,update,watch") &&
			hasLine(out, "fischers", "wardle.example.com/v1alpha1", "false", "Fischer", "create,delete,deletecollection,get,list,patch,update,watch")
	})

	out, errOut, err := kubectl(t, kubeconfig, flunder, "apply", "-f", "-")
	if err != nil || strings.TrimSpace(out) != "flunder.wardle.example.com/my-first-flunder created" || !strings.Contains(errOut, deprecated) {
		t.Fatalf("kubectl apply of a flunder: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = kubectl(t, kubeconfig, "", "get", "flunders")
	if err != nil || !hasLine(out, "NAME", "CREATED", "AT") || !strings.HasPrefix(strings.Split(out, "\n")[1], "my-first-flunder ") || !strings.Contains(errOut, deprecated) {
		t.Errorf("kubectl get flunders: %v\n%s%s", err, out, errOut)
	}
	if got := mustKubectl(t, kubeconfig, "", "get", "flunder", "my-first-flunder", "-o", "jsonpath={.metadata.labels.sample-label}"); got != "true" {
		t.Errorf("the flunder's label = %q, want true", got)
	}

	// OpenAPI v3: the sample server's index entries are in admitd's, and
	// kubectl explain reads its document through admitd, as it did through
	// kube-apiserver 1.37.2 (same output).
	waitFor(t, "the sample server's OpenAPI v3 paths are listed", func() bool {
		out, _, _ := kubectl(t, kubeconfig, "", "get", "--raw", "/openapi/v3")
		return strings.Contains(out, `"apis/wardle.example.com/v1alpha1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1alpha1?hash=`) &&
			strings.Contains(out, `"apis/wardle.example.com/v1beta1"`) && strings.Contains(out, `"api/v1"`)
	})
	// OpenAPI v2: the sample server's paths and definitions are merged in.
	waitFor(t, "the sample server's paths are in /openapi/v2", func() bool {
		out, _, _ := kubectl(t, kubeconfig, "", "get", "--raw", "/openapi/v2")
		return strings.Contains(out, `"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders"`) &&
			strings.Contains(out, `"io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1.Flunder"`) && strings.Contains(out, `"/api/v1/namespaces"`)
	})
	explain := mustKubectl(t, kubeconfig, "", "explain", "flunders.spec")
	for _, want := range []string{"GROUP:      wardle.example.com", "KIND:       Flunder", "VERSION:    v1alpha1", "FIELD: spec <FlunderSpec>",
		"  reference\t<string>\n    A name of another flunder or fischer, depending on the reference type.",
		"  referenceType\t<string>\n    The reference type, defaults to \"Flunder\" if reference is set."} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl explain flunders.spec: no %q in\n%s", want, explain)
		}
	}

	// admitd authorizes before proxying, with kube-apiserver's message; the
	// sample server then asks admitd about the same user, whose identity
	// reached it in the front proxy's headers.
	_, errOut, err = kubectl(t, kubeconfig, "", "get", "flunders", "--as=jane")
	if want := `Error from server (Forbidden): flunders.wardle.example.com is forbidden: User "jane" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "default"`; err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubectl get flunders --as=jane: %v %q, want %q", err, errOut, want)
	}
	mustKubectl(t, kubeconfig, "", "create", "clusterrole", "flunder-reader", "--verb=get,list,watch", "--resource=flunders.wardle.example.com")
	mustKubectl(t, kubeconfig, "", "create", "clusterrolebinding", "jane-flunders", "--clusterrole=flunder-reader", "--user=jane")
	waitFor(t, "jane may list flunders on both servers", func() bool {
		out, _, err := kubectl(t, kubeconfig, "", "get", "flunders", "--as=jane")
		return err == nil && strings.Contains(out, "my-first-flunder")
	})
	if u := auditedUser(t, auditLog, "jane"); u == nil || !slices.Equal(u.Groups, []string{"system:authenticated"}) {
		t.Errorf("the sample server's audit log has user jane as %+v, want jane in system:authenticated (the front proxy's headers)", u)
	}

	sample.stop()
	waitFor(t, "the APIService fails its discovery check", func() bool {
		out, _, _ := kubectl(t, kubeconfig, "", "get", "apiservices")
		return hasLine(out, "v1alpha1.wardle.example.com", "wardle/api", "False", "(FailedDiscoveryCheck)", fieldAge(out, "v1alpha1.wardle.example.com"))
	})
	msg := mustKubectl(t, kubeconfig, "", "get", "apiservice", "v1alpha1.wardle.example.com", "-o", "jsonpath={.status.conditions[0].message}")
	url := "https://" + addr + "/apis/wardle.example.com/v1alpha1"
	if want := fmt.Sprintf("failing or missing response from %s: Get %q: dial tcp %s: connect: connection refused", url, url, addr); msg != want {
		t.Errorf("condition message = %q, want %q", msg, want)
	}
	// Its version is Stale in discovery, without resources, and requests
	// get the 503, as kube-apiserver's (a kubectl without cached discovery).
	_, errOut, err = kubectl(t, kubeconfig, "", "get", "flunders")
	if want := `error: the server doesn't have a resource type "flunders"`; err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubectl get flunders with the server gone: %v %q, want %q", err, errOut, want)
	}
	_, errOut, err = kubectl(t, kubeconfig, "", "get", "--raw", "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders")
	if want := "Error from server (ServiceUnavailable): the server is currently unable to handle the request"; err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubectl get --raw of flunders with the server gone: %v %q, want %q", err, errOut, want)
	}
}

// fieldAge is the last field of name's line in out (its AGE), so that a
// line can be matched whatever the age.
func fieldAge(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return f[len(f)-1]
		}
	}
	return ""
}

// auditedUser is the user of the first list of flunders by name in the
// sample server's audit log, nil when there is none.
func auditedUser(t *testing.T, path, name string) *authenticationv1.UserInfo {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			Verb      string                    `json:"verb"`
			User      authenticationv1.UserInfo `json:"user"`
			ObjectRef struct{ Resource string } `json:"objectRef"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.User.Username == name && ev.Verb == "list" && ev.ObjectRef.Resource == "flunders" {
			return &ev.User
		}
	}
	return nil
}
