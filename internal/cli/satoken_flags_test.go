package cli

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
)

func TestServiceAccountFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want server.ServiceAccountOptions
	}{
		{name: "defaults", want: server.ServiceAccountOptions{}},
		{name: "all", args: []string{"--service-account-issuer=https://a", "--service-account-issuer=https://b",
			"--service-account-key-file=k1.pem", "--service-account-key-file=k2.pem", "--service-account-signing-key-file=s.key",
			"--api-audiences=x,y", "--service-account-jwks-uri=https://keys", "--service-account-max-token-expiration=2h",
			"--service-account-lookup=false", "--service-account-extend-token-expiration=false"},
			want: server.ServiceAccountOptions{Issuers: []string{"https://a", "https://b"}, KeyFiles: []string{"k1.pem", "k2.pem"},
				SigningKeyFile: "s.key", APIAudiences: []string{"x", "y"}, JWKSURI: "https://keys", MaxTokenExpiration: 2 * time.Hour,
				DisableLookup: true, DisableExtendExpiration: true}},
		{name: "lookup without a value", args: []string{"--service-account-lookup"}, want: server.ServiceAccountOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o server.ServiceAccountOptions
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			addServiceAccountFlags(fs, &o)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o, tc.want) {
				t.Errorf("options = %+v, want %+v", o, tc.want)
			}
		})
	}
}
