// Package typename prints an object's Go type as upstream's plugins print
// the internal type they received ("%T"): upstream's plugins see internal
// types (package k8s.io/kubernetes/pkg/apis/<group>), admitd's plugins the
// versioned ones (k8s.io/api/<group>/<version>), so "*v1.Pod" reads
// "*core.Pod" as upstream writes it.
//
// It only names types; it does not convert objects.
package typename

import (
	"fmt"
	"path"
	"reflect"
	"regexp"
)

var versionPkg = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// Of is obj's type as upstream's "%T" of the internal object reads.
func Of(obj any) string {
	t := reflect.TypeOf(obj)
	if t == nil {
		return fmt.Sprintf("%T", obj)
	}
	stars := ""
	for t.Kind() == reflect.Pointer {
		stars += "*"
		t = t.Elem()
	}
	pkg := t.PkgPath()
	if pkg == "" || !versionPkg.MatchString(path.Base(pkg)) {
		return fmt.Sprintf("%T", obj)
	}
	return stars + path.Base(path.Dir(pkg)) + "." + t.Name()
}
