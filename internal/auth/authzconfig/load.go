// Package authzconfig reads kube-apiserver's --authorization-config file,
// an AuthorizationConfiguration (apiserver.config.k8s.io v1, v1beta1 or
// v1alpha1), defaults and validates it as upstream.
//
// It does not build the authorizers (the server does, since Node and RBAC
// read its state) and does not watch the file.
package authzconfig

import (
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
)

// codecs decode the configuration's versions strictly; built on first use.
var codecs = sync.OnceValue(func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
})

// Load reads, defaults and validates the configuration in path.
func Load(path string) (*api.AuthorizationConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading --authorization-config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes, defaults and validates data, the content of the file at
// path (which only names it in errors), so that a reloader can compare
// what it read with what it last read.
func Parse(path string, data []byte) (*api.AuthorizationConfiguration, error) {
	c, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decoding --authorization-config %s: %w", path, err)
	}
	if err := Validate(c); err != nil {
		return nil, fmt.Errorf("invalid --authorization-config %s: %w", path, err)
	}
	return c, nil
}

// Decode decodes and defaults a configuration, strictly: unknown and
// duplicate fields are errors.
func Decode(data []byte) (*api.AuthorizationConfiguration, error) {
	obj, err := runtime.Decode(codecs().UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*api.AuthorizationConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected AuthorizationConfiguration, got %T", obj)
	}
	return c, nil
}
