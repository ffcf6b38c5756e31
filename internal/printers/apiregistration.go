package printers

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// The APIService table, as kube-aggregator's REST.ConvertToTable: the
// service as namespace/name or Local, and the Available condition's status
// with its reason when it is not True (Unknown without a condition).
var apiServicePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Service", "The reference to the service that hosts this API endpoint."),
	str("Available", "Whether this service is available."),
	ageColumn,
}, func(s *apiregistrationv1.APIService, now time.Time) []any {
	service := "Local"
	if ref := s.Spec.Service; ref != nil {
		service = ref.Namespace + "/" + ref.Name
	}
	return []any{s.Name, service, apiServiceAvailable(s.Status.Conditions), since(s.CreationTimestamp, now)}
})

func apiServiceAvailable(conditions []apiregistrationv1.APIServiceCondition) string {
	for _, c := range conditions {
		if c.Type != apiregistrationv1.Available {
			continue
		}
		if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
			return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
		}
		return string(c.Status)
	}
	return string(apiregistrationv1.ConditionUnknown)
}
