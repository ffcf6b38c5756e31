#!/usr/bin/env bash
# record-kas.sh — records what the real kube-apiserver 1.37.2 stores for compliant-pod.yaml
# and answers for privileged-pod.yaml, with kubeadm's flags (--enable-admission-plugins=NodeRestriction
# --allow-privileged=true), into kas-pod.json and
# kas-privileged.txt. TestKubeadmPluginsOnAPod compares admitd with them.
#   ../../../../../shared/tools/kube-apiserver/build.sh   (once)
#   ./record-kas.sh
# kube-apiserver runs no controllers: the recording creates the "default" ServiceAccount
# that admitd's service-account controller creates.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOOLS=${TOOLS:-$HERE/../../../../../shared/tools/kube-apiserver}
RUNDIR=$(mktemp -d /tmp/record-kas.XXXXXX)
trap '"$TOOLS/stop.sh" "$RUNDIR" >/dev/null 2>&1 || true; rm -rf "$RUNDIR"' EXIT
"$TOOLS/start.sh" "$RUNDIR" --enable-admission-plugins=NodeRestriction --allow-privileged=true >/dev/null
export KUBECONFIG=$RUNDIR/admin.kubeconfig
kubectl apply -f "$HERE/setup.yaml" >/dev/null
kubectl -n shop create serviceaccount default >/dev/null
kubectl create -f "$HERE/compliant-pod.yaml" >/dev/null
kubectl -n shop get pod web -o json > "$HERE/kas-pod.json"
kubectl create -f - < "$HERE/privileged-pod.yaml" 2> "$HERE/kas-privileged.txt" && { echo "privileged pod admitted" >&2; exit 1; }
echo "recorded kas-pod.json and kas-privileged.txt"
