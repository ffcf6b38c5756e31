// Package v1alpha1 is the EventRateLimit plugin's configuration as it is
// written: eventratelimit.admission.k8s.io/v1alpha1 Configuration. (Its own
// package so that decoding errors name its types as upstream's do:
// v1alpha1.Limit.)
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the configuration's API version.
var GroupVersion = schema.GroupVersion{Group: "eventratelimit.admission.k8s.io", Version: "v1alpha1"}

// LimitType is the kind of bucket a limit keeps.
type LimitType string

// The four limit types.
const (
	// ServerLimitType is one bucket for every event of the server.
	ServerLimitType LimitType = "Server"
	// NamespaceLimitType is one bucket per namespace.
	NamespaceLimitType LimitType = "Namespace"
	// UserLimitType is one bucket per user name.
	UserLimitType LimitType = "User"
	// SourceAndObjectLimitType is one bucket per event source and involved object.
	SourceAndObjectLimitType LimitType = "SourceAndObject"
)

// LimitTypes are the four types, in the order of upstream's errors
// (upstream ranges over a map: its order varies from run to run).
var LimitTypes = []LimitType{ServerLimitType, NamespaceLimitType, UserLimitType, SourceAndObjectLimitType}

// Configuration is the plugin's configuration
// (eventratelimit.admission.k8s.io/v1alpha1 Configuration).
type Configuration struct {
	// TypeMeta is the apiVersion and kind; both are required.
	metav1.TypeMeta `json:",inline"`
	// Limits are the limits to enforce; at least one.
	Limits []Limit `json:"limits"`
}

// Limit is one limit.
type Limit struct {
	// Type is the kind of bucket.
	Type LimitType `json:"type"`
	// QPS is the rate at which a bucket refills, in events per second.
	QPS int32 `json:"qps"`
	// Burst is the size of a bucket.
	Burst int32 `json:"burst"`
	// CacheSize is how many buckets are kept, least recently used evicted
	// first (0: 4096); ignored for Server.
	CacheSize int32 `json:"cacheSize,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (c *Configuration) DeepCopyObject() runtime.Object {
	out := *c
	out.Limits = append([]Limit(nil), c.Limits...)
	return &out
}
