#!/usr/bin/env bash
# sidebyside-vacprotection.sh — admitd's volumeattributesclass-protection-controller beside the
# real kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), one session
# against each at once: VolumeAttributesClasses gold (named by claim data's spec), bronze (the
# target of claim mod's status.modifyVolumeStatus), platinum (named by volume pv1), silver (named
# by nothing) and readd (its finalizer removed by the admin, which the controller puts back); all
# but readd deleted; then mod's modification ended, then data and pv1 deleted. (A status
# currentVolumeAttributesClassName does not stay on an unbound claim: both persistent volume
# binders clear it.) After each step each server's classes
# (finalizers, being deleted or not, field managers) are printed and diffed; the exit status is
# diff's. Needs the tools built with KCM=1; ADMITD=binary skips the build. Light; about half a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
OUT=$(mktemp -d /tmp/sidebyside-vacprotection.XXXX)
if [ -n "${ADMITD:-}" ]; then cp "$ADMITD" "$OUT/admitd"; else (cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd); fi
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" \
  --service-cluster-ip-range=127.1.0.0/24 > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

vac() { # name
  printf -- '---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: %s}\ndriverName: csi.example.com\nparameters: {iops: "100"}\n' "$1"
}

claim() { # name [class]
  printf -- '---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n' "$1"
  [ -z "${2:-}" ] || printf '  volumeAttributesClassName: %s\n' "$2"
}

volume() { # name class
  printf -- '---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  persistentVolumeReclaimPolicy: Retain\n  csi: {driver: csi.example.com, volumeHandle: h1}\n  volumeAttributesClassName: %s\n' "$1" "$2"
}

view() { # kubeconfig step
  echo "## $2"
  kubectl --kubeconfig "$1" get volumeattributesclasses -o json --show-managed-fields | python3 -c '
import json, sys
for v in sorted(json.load(sys.stdin)["items"], key=lambda v: v["metadata"]["name"]):
    m = v["metadata"]
    print("vac", m["name"], "finalizers", m.get("finalizers", []), "deleting" if m.get("deletionTimestamp") else "")
    for f in sorted(m.get("managedFields", []), key=lambda f: (f["manager"], f["operation"], f.get("subresource", ""))):
        print("  manager", f["manager"], f["operation"], f.get("subresource", ""), json.dumps(f.get("fieldsV1"), sort_keys=True))'
}

# session KUBECONFIG VIEWFILE: the steps, each followed by a view
session() {
  local k=(kubectl --kubeconfig "$1") v=$2
  { for c in gold bronze platinum silver readd; do vac "$c"; done; claim data gold; claim mod; volume pv1 platinum; } | "${k[@]}" create -f - > /dev/null
  "${k[@]}" patch pvc mod --subresource=status --type=merge \
    -p '{"status":{"modifyVolumeStatus":{"targetVolumeAttributesClassName":"bronze","status":"InProgress"}}}' > /dev/null
  "${k[@]}" patch volumeattributesclass readd --type=merge -p '{"metadata":{"finalizers":null}}' > /dev/null
  sleep 3
  view "$1" "created, readd's finalizer removed" >> "$v"
  "${k[@]}" delete volumeattributesclass gold bronze platinum silver --wait=false > /dev/null
  sleep 3
  view "$1" "deleted" >> "$v"
  "${k[@]}" patch pvc mod --subresource=status --type=json -p '[{"op":"remove","path":"/status/modifyVolumeStatus"}]' > /dev/null
  sleep 3
  view "$1" "mod's modification over" >> "$v"
  "${k[@]}" delete pvc data --wait=false > /dev/null
  "${k[@]}" delete pv pv1 --wait=false > /dev/null
  sleep 4
  view "$1" "data and pv1 deleted" >> "$v"
}

until kubectl --kubeconfig "$OUT/kas/admin.kubeconfig" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
session "$OUT/admitd.kubeconfig" "$OUT/admitd.view" &
SA=$!
session "$OUT/kas/admin.kubeconfig" "$OUT/kube.view" &
SK=$!
wait $SA $SK
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
