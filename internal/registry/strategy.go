package registry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// applyBuiltinStrategy attaches the per-kind behaviour of a built-in resource.
func applyBuiltinStrategy(r *Resource) {
	if s, ok := builtinStrategies[r.GroupVersionKind().GroupKind().String()]; ok {
		r.Strategy = s
	}
}

// builtinStrategies maps GroupKind strings ("Pod", "Deployment.apps") to
// their strategy. Kinds not listed get metadata validation only. The funcs
// live in defaults_*.go, prepare_*.go and validate_*.go.
var builtinStrategies = map[string]Strategy{
	"Pod": {Default: defaultPod, PrepareForCreate: preparePodForCreate, PrepareForUpdate: preparePodForUpdate,
		Validate: validatePodStrategy, ValidateUpdate: validatePodUpdate},
	"PodTemplate": {Default: defaultPodTemplate, Validate: validatePodTemplate, ValidateUpdate: validatePodTemplateUpdate},
	"ReplicationController": {Default: defaultReplicationController, PrepareForCreate: prepareRCForCreate, PrepareForUpdate: prepareRCForUpdate,
		Validate: validateReplicationController, ValidateUpdate: validateReplicationControllerUpdate},
	"Service": {Default: defaultService, PrepareForCreate: prepareServiceForCreate, PrepareForUpdate: prepareServiceForUpdate,
		Validate: validateService, ValidateUpdate: validateServiceUpdate},
	"Namespace": {Default: defaultNamespace, PrepareForCreate: prepareNamespaceForCreate, PrepareForUpdate: prepareNamespaceForUpdate,
		Validate: validateNamespace, ValidateUpdate: validateNamespaceUpdate},
	"Secret":         {Default: defaultSecret, Validate: validateSecret, ValidateUpdate: validateSecretUpdate},
	"ConfigMap":      {Default: defaultConfigMap, Validate: validateConfigMap, ValidateUpdate: validateConfigMapUpdate},
	"ServiceAccount": {PrepareForCreate: cleanServiceAccountSecrets, PrepareForUpdate: func(obj, _ runtime.Object) { cleanServiceAccountSecrets(obj) }},
	"PersistentVolumeClaim": {Default: defaultPVC, PrepareForCreate: preparePVCForCreate, PrepareForUpdate: preparePVCForUpdate,
		Validate: validatePVC, ValidateUpdate: validatePVCUpdate},
	"PersistentVolume": {Default: defaultPV, PrepareForCreate: preparePVForCreate, PrepareForUpdate: preparePVForUpdate},
	"Endpoints":        {Default: defaultEndpoints},
	"LimitRange":       {Default: defaultLimitRange},
	"ResourceQuota":    {Default: defaultResourceQuota, PrepareForCreate: prepareQuotaForCreate, PrepareForUpdate: prepareQuotaForUpdate},

	"Deployment.apps": {Default: defaultDeployment, PrepareForCreate: prepareDeploymentForCreate, PrepareForUpdate: prepareDeploymentForUpdate,
		Validate: validateDeployment, ValidateUpdate: validateDeploymentUpdate},
	"ReplicaSet.apps": {Default: defaultReplicaSet, PrepareForCreate: prepareReplicaSetForCreate, PrepareForUpdate: prepareReplicaSetForUpdate,
		Validate: validateReplicaSet, ValidateUpdate: validateReplicaSetUpdate},
	"StatefulSet.apps": {Default: defaultStatefulSet, PrepareForCreate: prepareStatefulSetForCreate, PrepareForUpdate: prepareStatefulSetForUpdate,
		Validate: validateStatefulSet, ValidateUpdate: validateStatefulSetUpdate},
	"DaemonSet.apps": {Default: defaultDaemonSet, PrepareForCreate: prepareDaemonSetForCreate, PrepareForUpdate: prepareDaemonSetForUpdate,
		Validate: validateDaemonSet, ValidateUpdate: validateDaemonSetUpdate},
	"Job.batch": {Default: defaultJob, PrepareForCreate: prepareJobForCreate, PrepareForUpdate: prepareJobForUpdate,
		Validate: validateJob, ValidateUpdate: validateJobUpdate},
	"CronJob.batch": {Default: defaultCronJob, PrepareForCreate: prepareCronJobForCreate, PrepareForUpdate: prepareCronJobForUpdate,
		Validate: validateCronJob, ValidateUpdate: validateCronJobUpdate},
}

func validatePodStrategy(obj runtime.Object) field.ErrorList {
	return validatePodCreate(obj.(*corev1.Pod), nil)
}

func defaultResourceQuota(obj runtime.Object) {
	q := obj.(*corev1.ResourceQuota)
	roundResourceList(q.Spec.Hard)
	roundResourceList(q.Status.Hard)
	roundResourceList(q.Status.Used)
}
