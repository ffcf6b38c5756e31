package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

// /version names the emulation and minimum compatibility versions beside
// the binary's, as kube-apiserver 1.37.2 without --emulated-version
// answers (recorded: 1.37, 1.37, 1.36).
func TestVersionNamesEmulationAndCompatibility(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do(http.MethodGet, "/version", "", "")
	var v version.Info
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET /version = %d %q (%v)", w.Code, w.Body, err)
	}
	got := []string{v.Major, v.Minor, v.EmulationMajor, v.EmulationMinor, v.MinCompatibilityMajor, v.MinCompatibilityMinor}
	want := []string{"1", "37", "1", "37", "1", "36"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("GET /version = major.minor, emulation, min compatibility %q, want %q", got, want)
		}
	}
}
