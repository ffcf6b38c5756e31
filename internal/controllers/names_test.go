package controllers

import (
	"testing"
)

func TestParseControllers(t *testing.T) {
	for _, tc := range []struct {
		list    []string
		wantErr string // kube-controller-manager 1.37.2's message for the same flag
		on, off []string
	}{
		{list: []string{"*"},
			on:  []string{RootCAControllerName, ReplicaSetControllerName, GarbageCollectorControllerName, "admitd-own-controller"},
			off: []string{"bootstrap-signer-controller", "token-cleaner-controller", "selinux-warning-controller"}},
		{list: []string{"*", "-" + RootCAControllerName},
			on: []string{ServiceAccountControllerName}, off: []string{RootCAControllerName}},
		{list: []string{"*", "-root-ca-cert-publisher", "-pvc-protection"},
			on: []string{PVProtectionControllerName}, off: []string{RootCAControllerName, PVCProtectionControllerName}},
		{list: []string{"replicaset", "bootstrap-signer-controller"},
			on: []string{ReplicaSetControllerName, "bootstrap-signer-controller"}, off: []string{RootCAControllerName, "admitd-own-controller"}},
		{list: []string{"garbagecollector", "-garbage-collector-controller"}, on: []string{GarbageCollectorControllerName}},
		{list: []string{"-namespace-controller", "*", "namespace"}, on: []string{RootCAControllerName}, off: []string{NamespaceControllerName}},
		{list: []string{"foo"}, wantErr: `"foo" is not in the list of known controllers`},
		{list: []string{"foo", "-bar", "replicaset"}, wantErr: `["foo" is not in the list of known controllers, "bar" is not in the list of known controllers]`},
		{list: []string{"*", "-rootca"}, wantErr: `"rootca" is not in the list of known controllers`},
	} {
		sel, err := ParseControllers(tc.list)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseControllers(%q) error = %v, want %s", tc.list, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseControllers(%q): %v", tc.list, err)
			continue
		}
		for _, name := range tc.on {
			if !sel.Enabled(name) {
				t.Errorf("ParseControllers(%q).Enabled(%q) = false, want true", tc.list, name)
			}
		}
		for _, name := range tc.off {
			if sel.Enabled(name) {
				t.Errorf("ParseControllers(%q).Enabled(%q) = true, want false", tc.list, name)
			}
		}
	}
}

// The table holds kube-controller-manager 1.37.2's 49 controllers and 3
// off by default, each name and alias once.
func TestKnownControllers(t *testing.T) {
	all, off := KnownControllers()
	if len(all) != 49 || len(off) != 3 {
		t.Errorf("KnownControllers() = %d names, %d off by default; want 49 and 3", len(all), len(off))
	}
	seen := map[string]bool{}
	for _, c := range kcmControllers {
		for _, n := range append([]string{c.name}, c.aliases...) {
			if seen[n] {
				t.Errorf("name %q twice", n)
			}
			seen[n] = true
		}
	}
}
