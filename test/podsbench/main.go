// Command podsbench creates Deployments on an API server, waits until all
// their pods exist (and, with -until ready, are Running and Ready), then
// deletes the Deployments and waits until every pod is gone. Around each
// phase it reads the CPU time (user+sys) and samples the RSS of the server
// processes it is given from /proc, and prints the cost per pod.
// test/sidebyside-pods.sh runs it against admitd with simulated nodes and
// against the real kube-apiserver + etcd + kube-controller-manager.
//
//	podsbench -kubeconfig K -deployments 10 -replicas 100 -until ready \
//	    -procs admitd=PID
//	podsbench -kubeconfig K -until created \
//	    -procs kube-apiserver=PID,etcd=PID,kube-controller-manager=PID
//
// Each phase ends with a line per process, and one machine-readable line
//
//	RESULT server=NAME run=START_MS phase=create pods=1000 seconds=12.3 first_seconds=9.8 proc=admitd cpu_ms=4567 first_cpu_ms=1234 rss_start_kib=… rss_peak_kib=…
//
// It is a benchmark tool, not a test: it asserts nothing about speed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig of the server")
	server := flag.String("server", "server", "name of the server in the RESULT lines")
	namespace := flag.String("namespace", "podsbench", "namespace of the Deployments (created unless it exists)")
	deployments := flag.Int("deployments", 10, "how many Deployments")
	replicas := flag.Int("replicas", 100, "replicas of each Deployment")
	until := flag.String("until", "ready", "create phase ends when all pods are 'created' or 'ready' (Running with condition Ready)")
	grace := flag.Int64("grace-seconds", 1, "the pods' terminationGracePeriodSeconds")
	procs := flag.String("procs", "", "processes to measure: name=pid,name=pid")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up on a phase after this long")
	flag.Parse()
	if *until != "ready" && *until != "created" {
		fail(fmt.Errorf("-until must be ready or created, got %q", *until))
	}
	watched, err := parseProcs(*procs)
	if err != nil {
		fail(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	b := &bench{cs: cs, ns: *namespace, deployments: *deployments, replicas: *replicas, grace: *grace,
		server: *server, procs: watched, timeout: *timeout}
	if err := b.prepare(ctx); err != nil {
		fail(err)
	}
	defer b.stop()
	if err := b.create(ctx, *until == "ready"); err != nil {
		fail(err)
	}
	if err := b.delete(ctx); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "podsbench:", err)
	os.Exit(1)
}
