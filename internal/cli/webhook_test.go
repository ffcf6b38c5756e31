package cli

import (
	"strings"
	"testing"
)

// TestWebhookBindAddress: `admitd webhook` serves 127.0.0.1 unless
// --bind-address says otherwise, and the flag takes IP addresses only.
func TestWebhookBindAddress(t *testing.T) {
	flag := newWebhookCommand().Flags().Lookup("bind-address")
	if flag == nil || flag.DefValue != "127.0.0.1" {
		t.Fatalf("admitd webhook --bind-address = %+v, want a flag defaulting to 127.0.0.1", flag)
	}
	_, err := runRoot(t, "webhook", "--bind-address=example.com")
	if err == nil || !strings.Contains(err.Error(), `invalid argument "example.com" for "--bind-address"`) {
		t.Errorf("admitd webhook --bind-address=example.com = %v, want an invalid argument error", err)
	}
}
