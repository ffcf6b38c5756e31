package policyschema

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/admitd/admitd/pkg/builtinschema"
)

// BuiltinConverter knows the schemas of every built-in kind (those
// client-go ships for its apply configurations).
var BuiltinConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return managedfields.NewSchemeTypeConverter(clientgoscheme.Scheme, builtinschema.Parser())
})
