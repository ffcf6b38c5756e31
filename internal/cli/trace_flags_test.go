package cli

import (
	"math"
	"testing"

	"github.com/spf13/pflag"

	"github.com/admitd/admitd/internal/server"
	"github.com/admitd/admitd/pkg/admission/trace"
)

func TestTraceFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantCount int
		wantBytes int64
		wantErr   bool
	}{
		{args: nil, wantCount: trace.DefaultRingSize, wantBytes: trace.DefaultRingBytes},
		{args: []string{"--admission-trace-buffer=0"}, wantCount: -1, wantBytes: trace.DefaultRingBytes},
		{args: []string{"--admission-trace-buffer=50", "--admission-trace-buffer-bytes=8Mi"}, wantCount: 50, wantBytes: 8 << 20},
		{args: []string{"--admission-trace-buffer-bytes=500000"}, wantCount: trace.DefaultRingSize, wantBytes: 500000},
		{args: []string{"--admission-trace-buffer-bytes=0"}, wantErr: true},
		{args: []string{"--admission-trace-buffer-bytes=-1Mi"}, wantErr: true},
		{args: []string{"--admission-trace-buffer-bytes=lots"}, wantErr: true},
		{args: []string{"--admission-trace-buffer-bytes=1.5"}, wantCount: trace.DefaultRingSize, wantBytes: 2},
		{args: []string{"--admission-trace-buffer-bytes=8Ei"}, wantCount: trace.DefaultRingSize, wantBytes: math.MaxInt64}, // quantities cap there
		{args: []string{"--admission-trace-buffer-bytes=1e30"}, wantErr: true},
	} {
		var o server.Options
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		addTraceFlags(fs, &o)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && (o.AdmissionTraceBuffer != tc.wantCount || o.AdmissionTraceBytes != tc.wantBytes) {
			t.Errorf("%v: buffer %d, bytes %d; want %d, %d", tc.args, o.AdmissionTraceBuffer, o.AdmissionTraceBytes, tc.wantCount, tc.wantBytes)
		}
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addTraceFlags(fs, &server.Options{})
	if got := fs.Lookup("admission-trace-buffer-bytes").DefValue; got != "64Mi" {
		t.Errorf("default shown as %q, want 64Mi", got)
	}
}
