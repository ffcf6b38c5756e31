package server

import (
	"testing"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/hpa"
	"github.com/admitd/admitd/internal/controllers/legacytokencleaner"
	"github.com/admitd/admitd/internal/controllers/nodelifecycle"
	"github.com/admitd/admitd/internal/controllers/podgc"
	"github.com/admitd/admitd/internal/controllers/pvbinder"
	"github.com/admitd/admitd/internal/controllers/resourceclaim"
	"github.com/admitd/admitd/internal/controllers/tainteviction"
)

// TestCopiedObjectsLeaveTheCopiesAlone: a server of copied objects runs
// none of the controllers that would delete or rewrite the copies, and
// the others as selected.
func TestCopiedObjectsLeaveTheCopiesAlone(t *testing.T) {
	off := []string{controllers.GarbageCollectorControllerName, controllers.RootCAControllerName, podgc.Name, nodelifecycle.Name, tainteviction.Name, pvbinder.Name, hpa.Name, resourceclaim.Name, legacytokencleaner.Name}
	for _, copied := range []bool{false, true} {
		sel, err := controllerSelection(Options{CopiedObjects: copied})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range off {
			if sel.Enabled(name) == copied {
				t.Errorf("CopiedObjects %v: %s enabled %v", copied, name, sel.Enabled(name))
			}
		}
		if !sel.Enabled(controllers.NamespaceControllerName) {
			t.Errorf("CopiedObjects %v: the namespace controller is off", copied)
		}
	}
}
