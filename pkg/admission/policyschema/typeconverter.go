package policyschema

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// BuiltinConverter knows the schemas of every built-in kind (those
// client-go ships for its apply configurations).
var BuiltinConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})
