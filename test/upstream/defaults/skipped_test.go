package defaults

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// skip is one known difference: align makes admitd's object agree with
// upstream's on exactly that field before the comparison.
type skip struct {
	kind  schema.GroupKind
	field string
	why   string
	align func(upstream, admitd runtime.Object)
}

// skipped are the differences admitd keeps on purpose or has not fixed.
var skipped = []skip{{
	kind:  schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"},
	field: "spec.targetCPUUtilizationPercentage",
	why: "kube-apiserver stores an autoscaling/v1 HPA as autoscaling/v2, whose defaults, applied when the stored object is read " +
		"back (the create's response too), give an HPA without metrics 80% CPU; admitd fills that in when it decodes the v1 object",
	align: func(upstream, admitd runtime.Object) {
		if up, ok := upstream.(*autoscalingv1.HorizontalPodAutoscaler); ok {
			admitd.(*autoscalingv1.HorizontalPodAutoscaler).Spec.TargetCPUUtilizationPercentage = up.Spec.TargetCPUUtilizationPercentage
		}
	},
}}
