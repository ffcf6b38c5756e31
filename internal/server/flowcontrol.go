package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/flowcontrol"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Upstream's defaults for the in-flight limits, whose sum is APF's seats.
const (
	defaultMaxRequestsInflight         = 400
	defaultMaxMutatingRequestsInflight = 200
)

var flowControlResources = []schema.GroupVersionResource{
	flowcontrolv1.SchemeGroupVersion.WithResource("prioritylevelconfigurations"),
	flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas"),
}

// flowControl is API Priority and Fairness with the watch-fed cache of its
// configuration objects.
type flowControl struct {
	ctl   *flowcontrol.Controller
	cat   *registry.Catalogue
	cache *admissionsource.ConfigCache[flowConfig]
	// changed wakes the status writer after each reload.
	changed chan struct{}
}

// flowConfig is one snapshot of the stored configuration.
type flowConfig struct {
	levels  []*flowcontrolv1.PriorityLevelConfiguration
	schemas []*flowcontrolv1.FlowSchema
}

// inflightLimits are the two in-flight limits with upstream's defaults
// (0: default; negative: no limit).
func inflightLimits(o ServingOptions) (readOnly, mutating int) {
	readOnly, mutating = o.MaxRequestsInflight, o.MaxMutatingRequestsInflight
	if readOnly == 0 {
		readOnly = defaultMaxRequestsInflight
	}
	if mutating == 0 {
		mutating = defaultMaxMutatingRequestsInflight
	}
	return max(readOnly, 0), max(mutating, 0)
}

// newFlowControl returns APF for o, or nil when it is disabled; it tells
// requestMetrics of the requests in its queues.
func newFlowControl(o ServingOptions, store storage.Store, cat *registry.Catalogue, requestMetrics *apiserver.RequestMetrics) *flowControl {
	if o.DisablePriorityAndFairness {
		return nil
	}
	readOnly, mutating := inflightLimits(o)
	opts := flowcontrol.Options{ServerConcurrencyLimit: readOnly + mutating, QueueNote: requestMetrics.QueueNote()}
	f := &flowControl{ctl: flowcontrol.New(opts), cat: cat,
		changed: make(chan struct{}, 1)}
	f.cache = admissionsource.NewConfigCache(store, cat, flowControlResources, func(objs []runtime.Object) *flowConfig {
		cfg := &flowConfig{}
		for _, obj := range objs {
			switch o := obj.(type) {
			case *flowcontrolv1.PriorityLevelConfiguration:
				cfg.levels = append(cfg.levels, o)
			case *flowcontrolv1.FlowSchema:
				cfg.schemas = append(cfg.schemas, o)
			}
		}
		f.ctl.Configure(cfg.levels, cfg.schemas)
		select {
		case f.changed <- struct{}{}:
		default:
		}
		return cfg
	})
	return f
}

// configure sets the API server's flow control: APF, or the plain
// in-flight limits when it is off.
func (f *flowControl) configure(cfg *apiserver.Config, o ServingOptions) {
	if f != nil {
		cfg.FlowControl = f.ctl
		return
	}
	cfg.MaxRequestsInflight, cfg.MaxMutatingRequestsInflight = inflightLimits(o)
}

// flowControlBootstrapManager is the field manager of the bootstrap
// configuration objects, upstream's config producer's.
const flowControlBootstrapManager = "api-priority-and-fairness-config-producer-v1"

// ensureFlowControlBootstrap creates upstream's mandatory and suggested
// configuration objects and keeps them as kube-apiserver's ensurer does:
// a mandatory object's spec is always put back; a suggested one's only
// while it is annotated apf.kubernetes.io/autoupdate-spec=true (or,
// unannotated, never changed: generation 1).
func ensureFlowControlBootstrap(ctx context.Context, api *apiserver.Server, cat *registry.Catalogue) error {
	var objs []runtime.Object
	mandatory := map[string]bool{}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		objs = append(objs, typedCopy(pl))
		mandatory["pl/"+pl.Name] = true
	}
	for _, pl := range bootstrap.SuggestedPriorityLevelConfigurations {
		objs = append(objs, typedCopy(pl))
	}
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		objs = append(objs, typedCopy(fs))
		mandatory["fs/"+fs.Name] = true
	}
	for _, fs := range bootstrap.SuggestedFlowSchemas {
		objs = append(objs, typedCopy(fs))
	}
	reconcile := func(existing, expected runtime.Object) runtime.Object {
		return reviseBootstrapObject(existing, expected, mandatory, cat)
	}
	if err := api.EnsureObjects(ctx, flowControlBootstrapManager, reconcile, objs...); err != nil {
		return fmt.Errorf("bootstrap flow-control configuration: %w", err)
	}
	return nil
}

// typedCopy copies a bootstrap object with its apiVersion and kind set.
func typedCopy(obj runtime.Object) runtime.Object {
	out := obj.DeepCopyObject()
	switch o := out.(type) {
	case *flowcontrolv1.PriorityLevelConfiguration:
		o.APIVersion, o.Kind = flowcontrolv1.SchemeGroupVersion.String(), "PriorityLevelConfiguration"
	case *flowcontrolv1.FlowSchema:
		o.APIVersion, o.Kind = flowcontrolv1.SchemeGroupVersion.String(), "FlowSchema"
	}
	return out
}

// reviseBootstrapObject is upstream's ensure strategy for one stored
// object: nil when it stays as it is.
func reviseBootstrapObject(existing, expected runtime.Object, mandatory map[string]bool, cat *registry.Catalogue) runtime.Object {
	meta, ok := existing.(metav1.Object)
	if !ok {
		return nil
	}
	key := "fs/"
	if _, isPL := existing.(*flowcontrolv1.PriorityLevelConfiguration); isPL {
		key = "pl/"
	}
	autoUpdate := mandatory[key+meta.GetName()]
	if !autoUpdate {
		autoUpdate = shouldAutoUpdateSpec(meta)
	}
	annotate := annotationDiffers(meta, autoUpdate)
	specChanged := autoUpdate && !specEqualish(existing, defaulted(expected, cat))
	if !annotate && !specChanged {
		return nil
	}
	out := existing.DeepCopyObject()
	if specChanged {
		copySpec(out, expected)
	}
	if annotate {
		m := out.(metav1.Object)
		a := m.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		m.SetAnnotations(a)
	}
	return out
}

func shouldAutoUpdateSpec(m metav1.Object) bool {
	if v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return m.GetGeneration() == 1
}

func annotationDiffers(m metav1.Object, want bool) bool {
	v, ok := m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	if !ok {
		return true
	}
	cur, err := strconv.ParseBool(v)
	return err != nil || cur != want
}

// defaulted is a copy of a bootstrap object with the kind's defaults
// applied, as a stored object has them.
func defaulted(obj runtime.Object, cat *registry.Catalogue) runtime.Object {
	out := obj.DeepCopyObject()
	if res, ok := cat.LookupKind(out.GetObjectKind().GroupVersionKind()); ok {
		res.Default(out)
	}
	return out
}

// specEqualish compares the stored spec with the (defaulted) bootstrap one.
func specEqualish(existing, expected runtime.Object) bool {
	switch e := existing.(type) {
	case *flowcontrolv1.PriorityLevelConfiguration:
		return equality.Semantic.DeepEqual(e.Spec, expected.(*flowcontrolv1.PriorityLevelConfiguration).Spec)
	case *flowcontrolv1.FlowSchema:
		return equality.Semantic.DeepEqual(e.Spec, expected.(*flowcontrolv1.FlowSchema).Spec)
	}
	return true
}

func copySpec(into, from runtime.Object) {
	switch o := into.(type) {
	case *flowcontrolv1.PriorityLevelConfiguration:
		o.Spec = *from.(*flowcontrolv1.PriorityLevelConfiguration).Spec.DeepCopy()
	case *flowcontrolv1.FlowSchema:
		o.Spec = *from.(*flowcontrolv1.FlowSchema).Spec.DeepCopy()
	}
}

// run keeps the configuration followed, the borrowing adjusted, the
// bootstrap objects ensured (every minute, as upstream) and each
// FlowSchema's Dangling condition written, until ctx ends.
func (f *flowControl) run(ctx context.Context, api *apiserver.Server, log *slog.Logger) {
	client, err := controllers.NewClient(api.Loopback(apiserverUser))
	if err != nil {
		log.Error("flow control's loopback client", "err", err)
		return
	}
	go f.cache.Run(ctx)
	go f.ctl.Run(ctx)
	go f.writeStatus(ctx, client, log)
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := ensureFlowControlBootstrap(ctx, api, f.cat); err != nil {
				log.Error("ensuring the flow-control bootstrap objects", "err", err)
				continue
			}
			if err := f.cache.Reload(ctx); err != nil {
				log.Error("reloading the flow-control configuration", "err", err)
			}
		}
	}
}

// flowStatusManager is the field manager of the Dangling condition, as
// upstream's APF controller names itself.
const flowStatusManager = "api-priority-and-fairness-config-consumer-v1"

// writeStatus sets each FlowSchema's Dangling condition after every
// configuration change, by server-side apply of its status through the
// loopback (as upstream's APF controller does).
func (f *flowControl) writeStatus(ctx context.Context, client dynamic.Interface, log *slog.Logger) {
	gvr := flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas")
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
		}
		for _, fs := range f.cache.Current().schemas {
			want := danglingCondition(fs, f.ctl.Dangling(fs))
			if hasCondition(fs, want) {
				continue
			}
			next := fs.DeepCopy()
			setCondition(next, want)
			body, err := json.Marshal(map[string]any{"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
				"metadata": map[string]any{"name": fs.Name}, "status": map[string]any{"conditions": next.Status.Conditions}})
			if err != nil {
				continue
			}
			_, err = client.Resource(gvr).Patch(ctx, fs.Name, types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: flowStatusManager, Force: ptr.To(true)}, "status")
			if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
				log.Error("writing a FlowSchema's status", "flowschema", fs.Name, "err", err)
			}
		}
	}
}

// danglingCondition is the condition upstream writes on fs.
func danglingCondition(fs *flowcontrolv1.FlowSchema, dangling bool) flowcontrolv1.FlowSchemaCondition {
	pl := fs.Spec.PriorityLevelConfiguration.Name
	if dangling {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue,
			Reason: "NotFound", Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", pl)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse,
		Reason: "Found", Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", pl)}
}

func hasCondition(fs *flowcontrolv1.FlowSchema, want flowcontrolv1.FlowSchemaCondition) bool {
	for _, c := range fs.Status.Conditions {
		if c.Type == want.Type {
			return c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message
		}
	}
	return false
}

func setCondition(fs *flowcontrolv1.FlowSchema, want flowcontrolv1.FlowSchemaCondition) {
	want.LastTransitionTime = metav1.Now()
	for i, c := range fs.Status.Conditions {
		if c.Type == want.Type {
			if c.Status == want.Status {
				want.LastTransitionTime = c.LastTransitionTime
			}
			fs.Status.Conditions[i] = want
			return
		}
	}
	fs.Status.Conditions = append(fs.Status.Conditions, want)
}
