package registry

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// apiextensionsKinds is CustomResourceDefinition; the resources a definition
// serves are built by CustomResources.
func apiextensionsKinds() []descriptor {
	return []descriptor{{gv: "apiextensions.k8s.io/v1", resource: "customresourcedefinitions", kind: "CustomResourceDefinition",
		short: []string{"crd", "crds"}, categories: []string{"api-extensions"}, status: statusSubresource, generation: true, name: apivalidation.NameIsDNSSubdomain,
		strategy: Strategy{Default: defaultCRD, PrepareForCreate: acceptCRD, PrepareForUpdate: func(obj, _ runtime.Object) { acceptCRD(obj) },
			Validate: validateCRD, ValidateUpdate: validateCRDUpdate, Warnings: crdWarnings}}}
}

// defaultCRD applies upstream's v1 defaults: singular and list kind from the
// kind, conversion strategy None, webhook service port 443, the storage
// version among the stored versions.
func defaultCRD(obj runtime.Object) {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	}
}

// acceptCRD records the definition as accepted and established at once: admitd
// serves a custom resource as soon as its definition is stored.
func acceptCRD(obj runtime.Object) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	crd.Status.AcceptedNames = crd.Spec.Names
	if crd.Status.AcceptedNames.ListKind == "" {
		crd.Status.AcceptedNames.ListKind = crd.Spec.Names.Kind + "List"
	}
	if crd.Status.AcceptedNames.Singular == "" {
		crd.Status.AcceptedNames.Singular = lower(crd.Spec.Names.Kind)
	}
	setCRDCondition(crd, apiextensionsv1.NamesAccepted, "NoConflicts", "no conflicts found")
	setCRDCondition(crd, apiextensionsv1.Established, "InitialNamesAccepted", "the initial names have been accepted")
	for _, v := range crd.Spec.Versions {
		if v.Storage && !contains(crd.Status.StoredVersions, v.Name) {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		}
	}
}

func setCRDCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType, reason, msg string) {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return
		}
	}
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: t, Status: apiextensionsv1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.Now(),
	})
}
