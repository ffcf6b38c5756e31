package admissionregistration

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	upstream "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/utils/ptr"
)

// TestWebhookClientValidationMatchesUpstream compares the URL and service
// checks with upstream's helpers (used here as an oracle only).
func TestWebhookClientValidationMatchesUpstream(t *testing.T) {
	fld := field.NewPath("clientConfig")
	for _, u := range []string{"https://h/p", "http://h", "https://", "https://u:p@h", "https://h?x=1", "https://h#f", "::bad", "https://h:70000/x", ""} {
		got, want := validateWebhookURL(fld, u).ToAggregate(), upstream.ValidateWebhookURL(fld, u, true).ToAggregate()
		if errString(got) != errString(want) {
			t.Errorf("validateWebhookURL(%q) = %v, upstream %v", u, got, want)
		}
	}
	for _, tc := range []struct {
		ns, name string
		path     *string
		port     int32
	}{
		{"ns", "svc", nil, 443}, {"", "", nil, 0}, {"", "svc", nil, 443}, {"ns", "", nil, 443}, {"ns", "svc", ptr.To("/"), 70000},
		{"ns", "svc", ptr.To("//"), 443}, {"ns", "svc", ptr.To("a/b"), 443}, {"ns", "svc", ptr.To("/foo//bar/"), 443},
		{"ns", "svc", ptr.To("/Upper/ok"), 443}, {"ns", "svc", ptr.To("/a.b/c-d/"), 443},
	} {
		got := validateWebhookService(fld, tc.ns, tc.name, tc.path, tc.port).ToAggregate()
		want := upstream.ValidateWebhookService(fld, tc.ns, tc.name, tc.path, tc.port).ToAggregate()
		if errString(got) != errString(want) {
			t.Errorf("validateWebhookService(%+v) = %v, upstream %v", tc, got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
