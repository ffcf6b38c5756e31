package corevalidation

import (
	appsv1 "k8s.io/api/apps/v1"
)

var revisionData = []string{"", "null", "{}", `{"spec":{"template":{}}}`, `"text"`, "[1]", "{bad", "1", `{"a": 1}`}

func (g *generator) revision() *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{ObjectMeta: g.meta("web-7d9f"), Revision: int64(g.rng.Intn(5) - 1)}
	if g.chance(8) {
		cr.Revision = -1 << 40
	}
	if data := g.mostly(`{"spec":{"template":{}}}`, revisionData...); data != "" {
		cr.Data.Raw = []byte(data)
	}
	return cr
}

func (g *generator) changeRevision(cr *appsv1.ControllerRevision) {
	switch g.rng.Intn(3) {
	case 0:
		cr.Data = g.revision().Data
	case 1:
		cr.Revision = int64(g.rng.Intn(5) - 1)
	}
}
