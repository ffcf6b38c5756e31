package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

// known is every gate kube-apiserver 1.37 knows, with its versioned specs.
// TODO(features helper): generated from upstream; this start holds only the
// gates admission plugins read.
var known = map[featuregate.Feature]featuregate.VersionedSpecs{
	PodLevelResources:          {{Version: version.MustParse("1.32"), Default: false, PreRelease: featuregate.Alpha}, {Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.Beta}},
	GenericWorkload:            {{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Alpha}, {Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Beta}},
	WorkloadWithJob:            {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	NodeDeclaredFeatures:       {{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Alpha}},
	InPlacePodVerticalScaling:  {{Version: version.MustParse("1.27"), Default: false, PreRelease: featuregate.Alpha}, {Version: version.MustParse("1.33"), Default: true, PreRelease: featuregate.Beta}, {Version: version.MustParse("1.35"), Default: true, PreRelease: featuregate.GA, LockToDefault: true}},
	PodTopologyLabelsAdmission: {{Version: version.MustParse("1.33"), Default: false, PreRelease: featuregate.Alpha}, {Version: version.MustParse("1.35"), Default: true, PreRelease: featuregate.Beta}},
	ClusterTrustBundle:         {{Version: version.MustParse("1.27"), Default: false, PreRelease: featuregate.Alpha}, {Version: version.MustParse("1.33"), Default: false, PreRelease: featuregate.Beta}},
}
