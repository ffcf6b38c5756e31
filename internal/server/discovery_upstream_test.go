package server

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// recordedDiscovery is kube-apiserver 1.37.2's discovery with default
// flags (../shared/tools/kube-apiserver, no CRDs or APIServices): the
// legacy documents by path and the aggregated ones of /api and /apis.
type recordedDiscovery struct {
	Legacy     map[string]json.RawMessage                      `json:"legacy"`
	Aggregated map[string]apidiscoveryv2.APIGroupDiscoveryList `json:"aggregated"`
}

// discoveryNotYetServedFile lists the lines of upstream's discovery admitd
// does not serve yet (issue 30), one per line as legacyLines and
// aggregatedLines make them. The test fails when one of them is served, so
// the list only shrinks.
const discoveryNotYetServedFile = "testdata/discovery-not-yet-served.txt"

// TestDiscoveryAsKubeAPIServer: every group, version and resource of
// kube-apiserver 1.37.2's discovery (legacy and aggregated: kind, scope,
// singular name, verbs, short names, categories, subresources, preferred
// versions in order, legacy storage version hashes) is admitd's, and
// admitd serves nothing more, but for the lines of
// discoveryNotYetServedFile.
func TestDiscoveryAsKubeAPIServer(t *testing.T) {
	raw, err := os.ReadFile("testdata/discovery-kube-apiserver-1.37.2.json")
	if err != nil {
		t.Fatal(err)
	}
	var want recordedDiscovery
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	_, admin := startRBAC(t)
	client := kubernetes.NewForConfigOrDie(admin).Discovery().RESTClient()
	get := func(path, accept string) []byte {
		req := client.Get().AbsPath(path)
		if accept != "" {
			req.SetHeader("Accept", accept)
		}
		body, err := req.DoRaw(t.Context())
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return body
	}
	wantLines := legacyLines(t, func(path string) []byte { return want.Legacy[path] })
	gotLines := legacyLines(t, func(path string) []byte { return get(path, "") })
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, path := range []string{"/api", "/apis"} {
		var got apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(get(path, aggregated), &got); err != nil {
			t.Fatal(err)
		}
		wantLines = append(wantLines, aggregatedLines(path, want.Aggregated[path])...)
		gotLines = append(gotLines, aggregatedLines(path, got)...)
	}
	notYet, err := os.ReadFile(discoveryNotYetServedFile)
	if err != nil {
		t.Fatal(err)
	}
	compareDiscovery(t, wantLines, gotLines, strings.Split(strings.TrimSpace(string(notYet)), "\n"))
}

func compareDiscovery(t *testing.T, want, got, notYetServed []string) {
	t.Helper()
	notYet := map[string]bool{}
	for _, l := range notYetServed {
		notYet[l] = l != ""
	}
	gotSet := map[string]bool{}
	for _, l := range got {
		gotSet[l] = true
	}
	wantSet := map[string]bool{}
	var missing, extra, nowServed []string
	for _, l := range want {
		wantSet[l] = true
		switch {
		case gotSet[l] && notYet[l]:
			nowServed = append(nowServed, l)
		case !gotSet[l] && !notYet[l]:
			missing = append(missing, l)
		}
	}
	for _, l := range got {
		if !wantSet[l] {
			extra = append(extra, l)
		}
	}
	for _, d := range []struct {
		what  string
		lines []string
	}{
		{"kube-apiserver serves, admitd does not", missing},
		{"admitd serves, kube-apiserver does not", extra},
		{"now served: drop from " + discoveryNotYetServedFile, nowServed},
	} {
		if len(d.lines) > 0 {
			slices.Sort(d.lines)
			t.Errorf("%s (%d):\n%s", d.what, len(d.lines), strings.Join(d.lines, "\n"))
		}
	}
}

// legacyLines flattens the legacy documents /api, /apis and each group
// version's resource list into one line per group, version and resource.
func legacyLines(t *testing.T, get func(path string) []byte) []string {
	t.Helper()
	decode := func(path string, into any) {
		body := get(path)
		if body == nil {
			t.Fatalf("no document %s", path)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var lines []string
	var core metav1.APIVersions
	decode("/api", &core)
	lines = append(lines, fmt.Sprintf("legacy /api versions=%v", core.Versions))
	var groups metav1.APIGroupList
	decode("/apis", &groups)
	paths := []string{"/api/v1"}
	for _, g := range groups.Groups {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.GroupVersion)
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
		lines = append(lines, fmt.Sprintf("legacy group %s versions=%v preferred=%s", g.Name, versions, g.PreferredVersion.GroupVersion))
	}
	for _, path := range paths {
		var list metav1.APIResourceList
		decode(path, &list)
		for _, r := range list.APIResources {
			verbs := slices.Clone([]string(r.Verbs))
			slices.Sort(verbs)
			lines = append(lines, fmt.Sprintf("legacy %s %s singular=%s namespaced=%t kind=%s group=%s version=%s verbs=%v short=%v categories=%v storageVersionHash=%s",
				list.GroupVersion, r.Name, r.SingularName, r.Namespaced, r.Kind, r.Group, r.Version, verbs, r.ShortNames, r.Categories, r.StorageVersionHash))
		}
	}
	return lines
}

// aggregatedLines flattens an aggregated discovery document into a line
// per group (its versions in order), version and resource, and
// subresource.
func aggregatedLines(path string, list apidiscoveryv2.APIGroupDiscoveryList) []string {
	var lines []string
	for _, g := range list.Items {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
			for _, r := range v.Resources {
				lines = append(lines, fmt.Sprintf("aggregated %s %s/%s %s kind=%s scope=%s singular=%s verbs=%v short=%v categories=%v",
					path, g.Name, v.Version, r.Resource, kindOf(r.ResponseKind), r.Scope, r.SingularResource, sorted(r.Verbs), r.ShortNames, r.Categories))
				for _, sub := range r.Subresources {
					lines = append(lines, fmt.Sprintf("aggregated %s %s/%s %s/%s kind=%s verbs=%v accepted=%v",
						path, g.Name, v.Version, r.Resource, sub.Subresource, kindOf(sub.ResponseKind), sorted(sub.Verbs), sub.AcceptedTypes))
				}
			}
		}
		lines = append(lines, fmt.Sprintf("aggregated %s group %q versions=%v", path, g.Name, versions))
	}
	return lines
}

func kindOf(gvk *metav1.GroupVersionKind) string {
	if gvk == nil {
		return "<none>"
	}
	return gvk.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
