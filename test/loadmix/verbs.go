package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// verbsNamespace holds the ConfigMaps the verb workloads read and write.
const verbsNamespace = "loadmix-verbs"

// verbClients is how many clients send a verb workload, as loadgen's creates.
const verbClients = 8

// verbOp is one request of a verb workload on the ConfigMap name: i counts
// the client's requests, rv is the object's last resourceVersion the client
// saw (kept for updates); it returns the new one.
type verbOp func(ctx context.Context, cms corev1client.ConfigMapInterface, name string, i int, rv string) (string, error)

// verbOps are the verb workloads: a get, an update (of the whole object,
// with its resourceVersion), a JSON merge patch and a server-side apply,
// each changing one data key of the object.
var verbOps = map[string]verbOp{
	"get": func(ctx context.Context, cms corev1client.ConfigMapInterface, name string, _ int, rv string) (string, error) {
		_, err := cms.Get(ctx, name, metav1.GetOptions{})
		return rv, err
	},
	"update": func(ctx context.Context, cms corev1client.ConfigMapInterface, name string, i int, rv string) (string, error) {
		out, err := cms.Update(ctx, verbObject(name, rv, i), metav1.UpdateOptions{})
		if err != nil {
			return rv, err
		}
		return out.ResourceVersion, nil
	},
	"patch": func(ctx context.Context, cms corev1client.ConfigMapInterface, name string, i int, rv string) (string, error) {
		patch := fmt.Appendf(nil, `{"data":{"n":%q}}`, strconv.Itoa(i))
		_, err := cms.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return rv, err
	},
	"apply": func(ctx context.Context, cms corev1client.ConfigMapInterface, name string, i int, rv string) (string, error) {
		cm := corev1ac.ConfigMap(name, verbsNamespace).WithData(map[string]string{"n": strconv.Itoa(i)})
		_, err := cms.Apply(ctx, cm, metav1.ApplyOptions{FieldManager: "loadmix", Force: true})
		return rv, err
	},
}

// verbObject is the whole ConfigMap an update sends: seedObject's content
// with data "n" set to i.
func verbObject(name, rv string, i int) *corev1.ConfigMap {
	cm := seedObject(name)
	cm.ResourceVersion = rv
	cm.Data["n"] = strconv.Itoa(i)
	return cm
}

func seedObject(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: verbsNamespace, Labels: map[string]string{"app": "loadmix", "tier": "verbs"}},
		Data:       map[string]string{"payload": "x", "n": "0"},
	}
}

// runVerb sends ops requests of verb from verbClients clients (protobuf, as
// clientsets of controllers and kubectl do; one connection, client-go's
// shared transport, as loadgen's creates), spread over the namespace's
// objects (each client its own share, so that updates never conflict), and
// prints a result line. The namespace is seeded with objects ConfigMaps
// first if it has fewer (-mode seed does that alone, outside a measurement).
func runVerb(ctx context.Context, cfg *rest.Config, admin kubernetes.Interface, verb string, ops, objects int) {
	ensureVerbObjects(ctx, admin, objects)
	if verb == "seed" {
		fmt.Printf("seed: %d ConfigMaps in %s\n", objects, verbsNamespace)
		return
	}
	op, ok := verbOps[verb]
	if !ok {
		fail(fmt.Errorf("unknown verb %q (get, update, patch, apply, seed)", verb))
	}
	list, err := admin.CoreV1().ConfigMaps(verbsNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	rvs := map[string]string{}
	for _, cm := range list.Items {
		rvs[cm.Name] = cm.ResourceVersion
	}
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
		firstErr  error
	)
	start := time.Now()
	for c := range verbClients {
		cms := kubernetes.NewForConfigOrDie(pcfg).CoreV1().ConfigMaps(verbsNamespace)
		names := verbShare(objects, c)
		mineRVs := map[string]string{}
		for _, name := range names {
			mineRVs[name] = rvs[name]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, ops/verbClients+1)
			bad := 0
			var badErr error
			for i := 0; i < ops/verbClients; i++ {
				name := names[i%len(names)]
				t0 := time.Now()
				rv, err := op(ctx, cms, name, i+1, mineRVs[name])
				mine = append(mine, time.Since(t0))
				if err != nil {
					bad++
					badErr = err
					continue
				}
				mineRVs[name] = rv
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failures += bad
			if firstErr == nil {
				firstErr = badErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	fmt.Printf("%s: %d done, rate=%.0f/s p50=%.2fms p99=%.2fms failures=%d\n", verb, len(latencies),
		float64(len(latencies))/elapsed.Seconds(), ms(quantile(latencies, 0.50)), ms(quantile(latencies, 0.99)), failures)
	if firstErr != nil {
		fail(fmt.Errorf("%s: %d failed, one: %w", verb, failures, firstErr))
	}
}

// verbShare is client c's objects: every verbClients-th name from c.
func verbShare(objects, c int) []string {
	var names []string
	for i := c; i < objects; i += verbClients {
		names = append(names, verbName(i))
	}
	return names
}

func verbName(i int) string { return fmt.Sprintf("verb-%05d", i) }

// ensureVerbObjects creates verbsNamespace and its objects ConfigMaps where
// missing.
func ensureVerbObjects(ctx context.Context, cs kubernetes.Interface, objects int) {
	if objects < verbClients {
		fail(fmt.Errorf("-objects must be at least %d", verbClients))
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, verbsNamespace, metav1.GetOptions{}); err != nil {
		_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: verbsNamespace}}, metav1.CreateOptions{})
		if err != nil {
			fail(err)
		}
	}
	have, err := cs.CoreV1().ConfigMaps(verbsNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	present := map[string]bool{}
	for _, cm := range have.Items {
		present[cm.Name] = true
	}
	for i := range objects {
		if present[verbName(i)] {
			continue
		}
		if _, err := cs.CoreV1().ConfigMaps(verbsNamespace).Create(ctx, seedObject(verbName(i)), metav1.CreateOptions{}); err != nil {
			fail(err)
		}
	}
}

// quantile is the q-quantile of sorted latencies (0 when there are none).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
