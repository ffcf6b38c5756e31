// Package core holds the shapes of the few types of kube-apiserver's
// internal core API (pkg/apis/core) whose names show in the errors admitd
// must word as upstream's: the node taints annotation is decoded into
// them, so a JSON error names "[]core.Taint" and its untagged fields
// ("Taint.Key"), and a repeated taint renders with its Go field names.
// It is not an API: nothing here is served or stored.
package core

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TaintEffect is a taint's effect.
type TaintEffect string

// Taint has the fields of upstream's internal Taint, without json tags.
type Taint struct {
	Key       string
	Value     string
	Effect    TaintEffect
	TimeAdded *metav1.Time
}
