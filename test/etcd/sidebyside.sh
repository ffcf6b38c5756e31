#!/usr/bin/env bash
# sidebyside.sh [ROUNDS] — ConfigMap creates/s with 8 clients through admitd on etcd
# (--etcd-servers) and through kube-apiserver 1.37.2 on the same etcd, alternating,
# with etcd's own put rate measured in the same run. Needs ../shared/tools/kube-apiserver's
# binaries and ../shared/tools/loadgen. Run under flock /tmp/admitd-heavy.lock.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
ROUNDS=${1:-2}
OUT=$(mktemp -d /tmp/etcd-sidebyside.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
(cd "$TOOLS/loadgen" && go build -o "$OUT/loadgen" .)
(cd "$HERE" && go build -o "$OUT/etcdput" ./etcdput)
"$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
. "$OUT/kas/env"
"$OUT/admitd" serve --etcd-servers="$ETCD_SERVERS" --secure-port=0 --data-dir="$OUT/admitd-data" \
  --kubeconfig-out="$OUT/admitd.kubeconfig" > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas"' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
sleep 1
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round admitd on etcd:";   timeout 120 "$OUT/loadgen" -kubeconfig "$OUT/admitd.kubeconfig" -clients 8 -count 3000
  echo "round $round kube-apiserver:";   timeout 120 "$OUT/loadgen" -kubeconfig "$OUT/kas/admin.kubeconfig" -clients 8 -count 3000
  echo "round $round etcd's own puts:";  timeout 120 "$OUT/etcdput" -endpoints "$ETCD_SERVERS" -count 3000
done
