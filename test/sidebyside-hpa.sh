#!/usr/bin/env bash
# sidebyside-hpa.sh — admitd's horizontal-pod-autoscaler-controller beside the real
# kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), on servers without a
# metrics API, one session against each at once: a Deployment below minReplicas, one above
# maxReplicas, one within the bounds (its CPU target needs metrics), one at 0 replicas (scaling
# disabled), an HPA whose target does not exist, and one targeting a StatefulSet through its scale
# subresource. After WAIT seconds (45: three of the 15 s syncs) each server's HPAs (status,
# conditions), the targets' replicas and the HPAs' events are printed normalised (times dropped)
# and diffed; the exit status is diff's. Needs the tools built with KCM=1. Light; about a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
WAIT=${WAIT:-45}
OUT=$(mktemp -d /tmp/sidebyside-hpa.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

workload() { # kind name replicas
  cat <<EOF
---
apiVersion: apps/v1
kind: $1
metadata: {name: $2, namespace: default}
spec:
  replicas: $3
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $2}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
EOF
}

hpa() { # name kind target min max
  cat <<EOF
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: $1, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: $2, name: $3}
  minReplicas: $4
  maxReplicas: $5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
EOF
}

session() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  {
    workload Deployment low 1
    workload Deployment high 7
    workload Deployment within 2
    workload Deployment zero 0
    workload StatefulSet set 1
    hpa low Deployment low 3 5
    hpa high Deployment high 1 4
    hpa within Deployment within 1 5
    hpa zero Deployment zero 1 3
    hpa missing Deployment nope 1 3
    hpa set StatefulSet set 2 4
  } | "${k[@]}" create -f - > /dev/null
}

view() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  "${k[@]}" get hpa -n default -o json | python3 -c '
import json, sys
for h in json.load(sys.stdin)["items"]:
    st = h["status"]
    print("hpa", h["metadata"]["name"], "current", st.get("currentReplicas"), "desired", st.get("desiredReplicas"),
          "observedGeneration", st.get("observedGeneration"), "lastScaleTime" if st.get("lastScaleTime") else "", "metrics", json.dumps(st.get("currentMetrics")))
    for c in sorted(st.get("conditions", []), key=lambda c: c["type"]):
        print("  condition", c["type"], c["status"], c.get("reason", ""), "|", c.get("message", ""))'
  "${k[@]}" get deployments,statefulsets -n default -o json | python3 -c '
import json, sys
for o in json.load(sys.stdin)["items"]:
    print(o["kind"], o["metadata"]["name"], "replicas", o["spec"].get("replicas"))'
  "${k[@]}" get events -n default --field-selector involvedObject.kind=HorizontalPodAutoscaler -o json | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    src = e.get("source", {}).get("component") or e.get("reportingComponent", "")
    seen.add(" ".join(["event", e.get("type", ""), e["reason"], o["kind"], o.get("name", ""), src, "|", e.get("message", "")]))
print("\n".join(sorted(seen)))'
}

until kubectl --kubeconfig "$OUT/kas/admin.kubeconfig" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
session "$OUT/admitd.kubeconfig" &
SA=$!
session "$OUT/kas/admin.kubeconfig" &
SK=$!
wait $SA $SK
sleep "$WAIT"
view "$OUT/admitd.kubeconfig" > "$OUT/admitd.view"
view "$OUT/kas/admin.kubeconfig" > "$OUT/kube.view"
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
