package main

import (
	"testing"
	"time"
)

// kubectl 1.32's -v=6 log of a run, as loadmix's second user runs it.
const kubectlLog = `I1130 11:29:21.778442   11105 loader.go:402] Config loaded from file:  /tmp/kc
I1130 11:29:21.802826   11105 round_trippers.go:560] GET https://127.0.0.1:6443/api/v1/namespaces/loadmix-small/configmaps?limit=500&timeout=30s 200 OK in 1187 milliseconds
`

func TestKubectlListTimeReadsTheListLine(t *testing.T) {
	if got := kubectlListTime(kubectlLog); got != 1187*time.Millisecond {
		t.Errorf("kubectlListTime = %v, want 1.187s", got)
	}
	if got := kubectlListTime("I1130 loader.go:402] Config loaded from file:  /tmp/kc\n"); got != 0 {
		t.Errorf("kubectlListTime without a list line = %v, want 0", got)
	}
}
