package registry

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// batchKinds are the batch/v1 kinds (strategies in batch_defaults.go,
// batch_prepare.go and batch_validate.go).
func batchKinds() []descriptor {
	return []descriptor{
		{gv: "batch/v1", resource: "cronjobs", kind: "CronJob", namespaced: true, short: []string{"cj"}, categories: all,
			status: statusReset, generation: true, name: apivalidation.NameIsDNSSubdomain,
			strategy: Strategy{Default: defaultCronJob, Validate: validateCronJob, ValidateUpdate: validateCronJobUpdate, Warnings: cronJobWarnings}},
		{gv: "batch/v1", resource: "jobs", kind: "Job", namespaced: true, categories: all,
			status: statusReset, generation: true, name: apivalidation.NameIsDNSSubdomain,
			gc:     OrphanDependents, // with a warning, see the API server
			fields: []string{"status.successful"}, fieldRefusal: func(label string) string { return fmt.Sprintf("field label %q not supported for Job", label) },
			strategy: Strategy{Default: defaultJob, PrepareForCreate: prepareJobForCreate, Validate: validateJob, ValidateUpdate: validateJobUpdate, Warnings: jobWarnings}},
	}
}
