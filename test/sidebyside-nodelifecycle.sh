#!/usr/bin/env bash
# sidebyside-nodelifecycle.sh — the node lifecycle and taint eviction controllers of admitd beside
# the real kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), the same
# session against each, run at once:
#   n1, a Node created by kubectl that never posts a status (startup grace period), and pod p1
#       on it tolerating the unreachable and not-ready NoExecute taints for 5 s;
#   n2, a Node that posts Ready once and then goes silent (monitor grace period), pod p2 on it
#       tolerating both taints for ever, and pod p3 tolerating nothing (DefaultTolerationSeconds
#       gives it 300 s);
#   n3, a Node that posts Ready every 5 s, so that its zone is not wholly disrupted (with every
#       node of every zone down, neither controller taints anything NoExecute);
# then, after WAIT seconds (90), each server's view normalised (times and uids dropped): the nodes'
# conditions, taints and labels, the pods (gone, or their Ready condition and deletion) and the
# events by reason and object. The two views are printed and diffed; the exit status is diff's.
# Needs the kube-apiserver tools built with KCM=1. Light; about two minutes.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
WAIT=${WAIT:-90}
OUT=$(mktemp -d /tmp/sidebyside-nodelifecycle.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
# graceful pod deletion as kube-apiserver's (admitd without it deletes a bound pod at once: no kubelet
# would ever finish the deletion); no node is simulated
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" --simulated-nodes=0 > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

pod() { # name node toleration-seconds ("" for ever, "none" for no toleration)
  local tol=""
  if [ "$3" != none ]; then
    local secs=""
    [ -n "$3" ] && secs="tolerationSeconds: $3"
    tol="  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, $secs}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, $secs}"
  fi
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  nodeName: $2
  containers: [{name: c, image: nginx}]
$tol
EOF
}

ready() { # kubeconfig node: the node posts Ready now
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kubectl --kubeconfig "$1" patch node "$2" --subresource=status --type=merge -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"kubelet is posting ready status\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}" > /dev/null
}

heartbeats() { # kubeconfig: n3 posts Ready every 5 s
  while sleep 5; do ready "$1" n3 || true; done
}

session() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  until "${k[@]}" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
  "${k[@]}" create -f - > /dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: z1}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {topology.kubernetes.io/zone: z1}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {topology.kubernetes.io/zone: z1}}
EOF
  ready "$1" n2
  ready "$1" n3
  pod p1 n1 5 | "${k[@]}" create -f - > /dev/null
  pod p2 n2 "" | "${k[@]}" create -f - > /dev/null
  pod p3 n2 none | "${k[@]}" create -f - > /dev/null
}

view() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  "${k[@]}" get nodes -o json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["items"]:
    print("node", n["metadata"]["name"])
    for c in sorted(n["status"].get("conditions", []), key=lambda c: c["type"]):
        print("  condition", c["type"], c["status"], c.get("reason", ""), "|", c.get("message", ""))
    for t in sorted(n["spec"].get("taints", []), key=lambda t: (t["key"], t["effect"])):
        print("  taint", t["key"], t["effect"], "timeAdded" if t.get("timeAdded") else "")
    for l, v in sorted(n["metadata"].get("labels", {}).items()):
        print("  label", l, v)'
  "${k[@]}" get pods -n default -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    print("pod", p["metadata"]["name"], "deleting" if p["metadata"].get("deletionTimestamp") else "")
    for c in sorted(p["status"].get("conditions", []), key=lambda c: c["type"]):
        print("  condition", c["type"], c["status"], c.get("reason", ""), "|", c.get("message", ""))
    for t in p["spec"].get("tolerations", []):
        print("  toleration", t.get("key"), t.get("effect"), t.get("tolerationSeconds"))'
  "${k[@]}" get events -A -o json | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    src = e.get("source", {}).get("component") or e.get("reportingComponent", "")
    seen.add(" ".join(["event", e.get("type", ""), e["reason"], o["kind"], o.get("name", ""), src, "|", e.get("message", "")]))
print("\n".join(sorted(seen)))' | grep -v -E ' (ServiceAccount|Namespace|Lease|Endpoints) |LeaderElection|RegisteredNode (default|kube)' || true
}

session "$OUT/admitd.kubeconfig" &
SA=$!
session "$OUT/kas/admin.kubeconfig" &
SK=$!
wait $SA $SK
heartbeats "$OUT/admitd.kubeconfig" &
HA=$!
heartbeats "$OUT/kas/admin.kubeconfig" &
HK=$!
sleep "$WAIT"
view "$OUT/admitd.kubeconfig" > "$OUT/admitd.view"
view "$OUT/kas/admin.kubeconfig" > "$OUT/kube.view"
kill $HA $HK
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
