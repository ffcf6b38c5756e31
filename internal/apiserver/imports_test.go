package apiserver

import (
	"os/exec"
	"strings"
	"testing"
)

// The API server does REST semantics only: it runs the admission chain it
// is given (pkg/admission) but knows nothing of the dynamic admission
// plugins, their configuration or the sources they read (internal/server
// wires those), nor of the controllers.
func TestImportsRESTOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/admitd/admitd/"
	forbidden := []string{"pkg/admission/webhooks", "pkg/admission/policies", "internal/admissionsource", "internal/controllers", "internal/server"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == module+f || strings.HasPrefix(dep, module+f+"/") {
				t.Errorf("internal/apiserver depends on %s, want no dependency on %s", dep, f)
			}
		}
	}
	if !strings.Contains(string(out), module+"pkg/admission\n") {
		t.Errorf("internal/apiserver does not depend on pkg/admission, want it to run the chain")
	}
}
