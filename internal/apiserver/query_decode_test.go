package apiserver

import (
	"net/url"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDecodeQuery(t *testing.T) {
	q := url.Values{"command": {"ls", "-l"}, "stdout": {"true"}, "container": {"c1"}, "timeout": {"1m0s"}}
	var exec corev1.PodExecOptions
	if err := decodeQuery(q, &exec); err != nil {
		t.Fatal(err)
	}
	want := corev1.PodExecOptions{Command: []string{"ls", "-l"}, Stdout: true, Container: "c1"}
	if !reflect.DeepEqual(exec, want) {
		t.Errorf("decodeQuery(exec) = %+v, want %+v (unknown timeout ignored)", exec, want)
	}
	var pf corev1.PodPortForwardOptions
	if err := decodeQuery(url.Values{"ports": {"80", "443"}}, &pf); err != nil || !reflect.DeepEqual(pf.Ports, []int32{80, 443}) {
		t.Errorf("decodeQuery(portforward) = %v, %v, want ports [80 443]", pf.Ports, err)
	}
	// Booleans read as upstream's parameter codec reads them: anything but
	// "0" and "false" is true.
	exec = corev1.PodExecOptions{}
	if err := decodeQuery(url.Values{"stdin": {"maybe"}, "stdout": {"FALSE"}, "tty": {""}}, &exec); err != nil || !exec.Stdin || exec.Stdout || !exec.TTY {
		t.Errorf("decodeQuery(stdin=maybe&stdout=FALSE&tty=) = %+v, %v; want stdin and tty", exec, err)
	}
}
