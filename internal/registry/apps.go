package registry

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// appsKinds are the apps/v1 kinds (strategies in apps_defaults.go,
// apps_prepare.go and apps_validate.go).
func appsKinds() []descriptor {
	return []descriptor{
		{gv: "apps/v1", resource: "controllerrevisions", kind: "ControllerRevision", namespaced: true, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Validate: validateControllerRevision, ValidateUpdate: validateControllerRevisionUpdate}},
		{gv: "apps/v1", resource: "daemonsets", kind: "DaemonSet", namespaced: true, short: []string{"ds"}, categories: all,
			status: statusReset, generation: true, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultDaemonSet, PrepareForCreate: prepareDaemonSetForCreate, PrepareForUpdate: prepareDaemonSetForUpdate,
				Validate: validateDaemonSet, ValidateUpdate: validateDaemonSetUpdate, Warnings: daemonSetWarnings}},
		{gv: "apps/v1", resource: "deployments", kind: "Deployment", namespaced: true, short: []string{"deploy"}, categories: all,
			status: statusReset, generation: true, subresources: []Subresource{scaleSub()}, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultDeployment, PrepareForUpdate: prepareDeploymentForUpdate, Validate: validateDeployment, ValidateUpdate: validateDeploymentUpdate,
				ResetStatusMetadata: resetStatusLabels, Warnings: deploymentWarnings}},
		{gv: "apps/v1", resource: "replicasets", kind: "ReplicaSet", namespaced: true, short: []string{"rs"}, categories: all,
			status: statusReset, generation: true, subresources: []Subresource{scaleSub()}, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultReplicaSet, Validate: validateReplicaSet, ValidateUpdate: validateReplicaSetUpdate, Warnings: replicaSetWarnings}},
		{gv: "apps/v1", resource: "statefulsets", kind: "StatefulSet", namespaced: true, short: []string{"sts"}, categories: all,
			status: statusReset, generation: true, subresources: []Subresource{scaleSub()}, name: apivalidation.NameIsDNSLabel,
			strategy: Strategy{Default: defaultStatefulSet, Validate: validateStatefulSet, ValidateUpdate: validateStatefulSetUpdate,
				Warnings: statefulSetWarnings}},
	}
}
