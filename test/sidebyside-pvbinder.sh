#!/usr/bin/env bash
# sidebyside-pvbinder.sh — admitd's persistentvolume-binder-controller beside the real
# kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), one session against
# each at once: static binding (best fit, pre-bound both ways), a claim nothing fits, a claim
# without a class, external provisioning, WaitForFirstConsumer, release under Retain and Delete,
# and a default class created after a claim without one. After WAIT seconds (40) each server's
# volumes, claims and events are printed normalised (times, uids and resource versions dropped)
# and diffed; the exit status is diff's. Needs the tools built with KCM=1. Light; about a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
WAIT=${WAIT:-40}
OUT=$(mktemp -d /tmp/sidebyside-pvbinder.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

pv() { # name size class reclaim access [claim]
  local ref=""
  [ -n "${6:-}" ] && ref="claimRef: {namespace: default, name: $6}"
  cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec: {capacity: {storage: $2}, storageClassName: "$3", persistentVolumeReclaimPolicy: $4, accessModes: [$5], hostPath: {path: /data/$1}, $ref}
EOF
}

pvc() { # name size class(- for none) access [volume]
  local class="" vol=""
  [ "$3" != - ] && class="storageClassName: \"$3\","
  [ -n "${5:-}" ] && vol="volumeName: $5,"
  cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1, namespace: default}
spec: {$class $vol accessModes: [$4], resources: {requests: {storage: $2}}}
EOF
}

session() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  "${k[@]}" create -f - > /dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ext}
provisioner: example.com/ext
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc}
provisioner: example.com/ext
volumeBindingMode: WaitForFirstConsumer
$(pv pv-small 1Gi manual Retain ReadWriteOnce)
$(pv pv-big 5Gi manual Retain ReadWriteOnce)
$(pv pv-del 2Gi manual Delete ReadWriteOnce)
$(pv pv-tmp 3Gi manual Delete ReadWriteMany)
$(pv pv-pre 1Gi "" Retain ReadWriteMany c6)
$(pv pv-named 1Gi "" Retain ReadWriteOnce)
EOF
  sleep 2
  {
    pvc c1 1Gi manual ReadWriteOnce
    pvc c2 10Gi manual ReadWriteOnce
    pvc c3 100Gi - ReadWriteOnce
    pvc c4 1Gi ext ReadWriteOnce
    pvc c5 1Gi wffc ReadWriteOnce
    pvc c6 1Gi "" ReadWriteMany
    pvc c7 2Gi manual ReadWriteOnce
    pvc c8 1Gi "" ReadWriteOnce pv-named
  } | "${k[@]}" create -f - > /dev/null
  sleep 10
  "${k[@]}" delete pvc c6 c7 --wait=false > /dev/null
  "${k[@]}" create -f - > /dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: example.com/std
EOF
}

view() { # kubeconfig
  local k=(kubectl --kubeconfig "$1")
  "${k[@]}" get pv -o json | python3 -c '
import json, sys
for v in json.load(sys.stdin)["items"]:
    ref = v["spec"].get("claimRef") or {}
    ann = sorted(k + "=" + x for k, x in v["metadata"].get("annotations", {}).items())
    print("pv", v["metadata"]["name"], v["status"].get("phase"), "claim", ref.get("name", "-"), "uid" if ref.get("uid") else "", " ".join(ann), "|", v["status"].get("message", ""), v["status"].get("reason", ""))'
  "${k[@]}" get pvc -n default -o json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["items"]:
    ann = sorted(k + "=" + x for k, x in c["metadata"].get("annotations", {}).items())
    st = c["status"]
    print("pvc", c["metadata"]["name"], st.get("phase"), "volume", c["spec"].get("volumeName", "-"), "class", c["spec"].get("storageClassName", "<nil>"),
          "capacity", st.get("capacity", {}).get("storage", "-"), ",".join(st.get("accessModes", [])), " ".join(ann))'
  "${k[@]}" get events -n default -o json | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    src = e.get("source", {}).get("component") or e.get("reportingComponent", "")
    seen.add(" ".join(["event", e.get("type", ""), e["reason"], o["kind"], o.get("name", ""), src, "|", e.get("message", "")]))
print("\n".join(sorted(seen)))' | grep -v -E ' (ServiceAccount|Namespace|Lease|Endpoints) ' || true
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
