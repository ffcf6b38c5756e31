package admissionregistration

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// urlForm ends the messages about a webhook URL, as upstream's.
const urlForm = "; desired format: https://host[/path]"

// validateWebhookURL checks clientConfig.url: an https URL with a host and
// no user information, query or fragment.
func validateWebhookURL(fldPath *field.Path, raw string) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(fldPath, "url must be a valid URL: "+err.Error()+urlForm)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(fldPath, u.Scheme, "'https' is the only allowed URL scheme"+urlForm))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(fldPath, u.Host, "host must be specified"+urlForm))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(fldPath, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(fldPath, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(fldPath, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// validateWebhookService checks clientConfig.service: name, namespace, a
// valid port, and a path of DNS-subdomain segments.
func validateWebhookService(fldPath *field.Path, namespace, name string, path *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(fldPath.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if path == nil {
		return errs
	}
	return append(errs, validateServicePath(fldPath.Child("path"), *path)...)
}

func validateServicePath(fldPath *field.Path, p string) field.ErrorList {
	switch p {
	case "", "/":
		return nil
	case "//":
		return field.ErrorList{field.Invalid(fldPath, p, "segment[0] may not be empty")}
	}
	var errs field.ErrorList
	if !strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(fldPath, p, "must start with a '/'"))
	}
	segments := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	for i, seg := range segments {
		if seg == "" {
			errs = append(errs, field.Invalid(fldPath, p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(seg) {
			errs = append(errs, field.Invalid(fldPath, p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}
