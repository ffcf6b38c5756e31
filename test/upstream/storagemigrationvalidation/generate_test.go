package storagemigrationvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/registry"
)

// writes are the generated creates, updates and status writes compared.
const writes = 4000

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	g := &generator{rng: rand.New(rand.NewSource(1))}
	for i := range writes {
		w := write{Name: fmt.Sprintf("#%d create", i), Defaulted: !g.chance(8)}
		switch g.rng.Intn(3) {
		case 0:
			w.Obj = g.object()
		case 1:
			w.Old = g.stored()
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("#%d update", i), g.changed(w.Old), true
		default:
			w.Old, w.Status = g.stored(), true
			w.Name, w.Obj, w.Defaulted = fmt.Sprintf("#%d status write", i), g.changed(w.Old), true
		}
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
	if c.Refused < writes/4 || c.Accepted < writes/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

var (
	groups    = []string{"", "apps", "example.com", "-", "Bad_Group", "a.", ".b", strings.Repeat("g", 254), "x..y", "UPPER.io"}
	resources = []string{"", ".", "Pods", "1abc", "a-", "my_resource", strings.Repeat("r", 64), "a b", "deployments.apps"}
	rvs       = []string{"", "1", "123", "0", "0123", "abc", "-1", "18446744073709551616", " 5"}
	condTypes = []string{"Running", "Succeeded", "Failed"}
)

func (g *generator) meta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly("migrate-deployments", "", "Bad_Name", "a/b", strings.Repeat("n", 254))}
	if g.chance(12) {
		m.GenerateName = g.pick("svm-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	if g.chance(20) {
		m.Namespace = "default"
	}
	return m
}

func (g *generator) object() *storagemigrationv1.StorageVersionMigration {
	m := &storagemigrationv1.StorageVersionMigration{ObjectMeta: g.meta(), Spec: storagemigrationv1.StorageVersionMigrationSpec{
		Resource: metav1.GroupResource{Group: g.mostly(g.pick("", "apps", "example.com"), groups...),
			Resource: g.mostly(g.pick("deployments", "secrets", "myresources"), resources...)}}}
	if g.chance(4) {
		m.Status = g.status()
	}
	return m
}

func (g *generator) status() storagemigrationv1.StorageVersionMigrationStatus {
	st := storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: g.mostly(g.pick("", "42"), rvs...)}
	for range g.rng.Intn(4) {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: g.mostly(g.pick(condTypes...), "", "bad type!", "Ready"),
			Status: metav1.ConditionStatus(g.mostly(g.pick("True", "False"), "Unknown", "maybe", "")), Reason: g.mostly("Migrating", "", "bad reason!"),
			Message: g.mostly("", "done", strings.Repeat("m", 32769)), LastTransitionTime: transitioned,
			ObservedGeneration: int64(g.rng.Intn(3) - 1)})
	}
	return st
}

// stored is an object as stored: a valid name and spec, a resourceVersion,
// and a status the controller may have written.
func (g *generator) stored() *storagemigrationv1.StorageVersionMigration {
	m := &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "migrate-deployments", ResourceVersion: "7"},
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: g.pick("", "apps"), Resource: g.pick("deployments", "secrets")}}}
	if g.chance(2) {
		m.Status = g.status()
	}
	return m
}

// changed is a write over old: some fields kept, some changed (status
// included).
func (g *generator) changed(oldObj any) *storagemigrationv1.StorageVersionMigration {
	m := oldObj.(*storagemigrationv1.StorageVersionMigration).DeepCopy()
	if g.chance(4) {
		m.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(15) {
		m.ResourceVersion = ""
	}
	if g.chance(20) {
		m.Name = "renamed"
	}
	if g.chance(20) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x")}
	}
	if g.chance(4) {
		m.Spec = g.object().Spec
	}
	switch g.rng.Intn(3) {
	case 0:
		m.Status = g.status()
	case 1:
		m.Status.Conditions = append(m.Status.Conditions, g.status().Conditions...)
	}
	return m
}
