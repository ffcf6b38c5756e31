package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// countLeft adds the objects of res left in ns after a pass to content:
// their number and their finalizers. Objects left with no finalizer among
// them are an error, as upstream's deleter finds them, unless they are
// pods within the longest grace period of the pods not yet terminated
// (counted from the namespace's deletion).
func (c *Namespaces) countLeft(ctx context.Context, res *registry.Resource, ns *corev1.Namespace, content *namespaceContent) error {
	left, grace := 0, int64(0)
	finalizers := map[string]int{}
	err := c.eachPage(ctx, res, ns.Name, func(items []storage.KeyValue) error {
		for _, kv := range items {
			s, err := decodeStored(kv.Value)
			if err != nil {
				return err
			}
			left++
			for _, f := range s.Metadata.Finalizers {
				finalizers[f]++
			}
			if res.GroupVersionResource == podsGVR {
				grace = max(grace, podGrace(kv.Value))
			}
		}
		return nil
	})
	if err != nil || left == 0 {
		return err
	}
	content.remaining[res.Resource+"."+res.Group] += left
	for f, n := range finalizers {
		content.finalizers[f] += n
	}
	if time.Since(ns.DeletionTimestamp.Time) >= time.Duration(grace)*time.Second {
		grace = 0
	}
	if len(finalizers) == 0 && grace == 0 {
		return fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, res.GroupVersionResource)
	}
	return nil
}

// podGrace is the termination grace period of a stored pod not yet
// terminated (Succeeded or Failed), else 0.
func podGrace(value []byte) int64 {
	var pod struct {
		Spec struct {
			TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
		} `json:"spec"`
		Status struct {
			Phase corev1.PodPhase `json:"phase"`
		} `json:"status"`
	}
	if json.Unmarshal(value, &pod) != nil || pod.Spec.TerminationGracePeriodSeconds == nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	return *pod.Spec.TerminationGracePeriodSeconds
}
