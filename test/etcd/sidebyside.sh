#!/usr/bin/env bash
# sidebyside.sh [ROUNDS] — ConfigMap creates/s with 8 clients through admitd on etcd
# (--etcd-servers) and through kube-apiserver 1.37.2 on the same etcd, alternating,
# with etcd's own put rate measured in the same run. Needs ../shared/tools/kube-apiserver's
# binaries and ../shared/tools/loadgen. Run under flock /tmp/admitd-heavy.lock.
#
# After each load run: the CPU (user+sys) each process used during it, in ms per create —
# the server under load, the other server (its watches see the same etcd), etcd and the
# load generator — and the load average. Env: BOLT=1 also runs an admitd on its default
# bolt storage each round; PERF=DIR records perf profiles of admitd (on etcd) in round 1, during
# both servers' runs (perf slows admitd: leave round 1 out of the rates then).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
ROUNDS=${1:-2}
COUNT=${COUNT:-3000}
OUT=$(mktemp -d /tmp/etcd-sidebyside.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
(cd "$TOOLS/loadgen" && go build -o "$OUT/loadgen" .)
(cd "$HERE" && go build -o "$OUT/etcdput" ./etcdput)
"$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
. "$OUT/kas/env"
KPID=$(awk '$1=="kube-apiserver"{print $2}' "$OUT/kas/pids")
EPID=$(awk '$1=="etcd"{print $2}' "$OUT/kas/pids")
"$OUT/admitd" serve --etcd-servers="$ETCD_SERVERS" --secure-port=0 --data-dir="$OUT/admitd-data" \
  --kubeconfig-out="$OUT/admitd.kubeconfig" > "$OUT/admitd.log" 2>&1 &
APID=$!
BPID=
if [ "${BOLT:-}" = 1 ]; then
  "$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/bolt-data" \
    --kubeconfig-out="$OUT/bolt.kubeconfig" > "$OUT/bolt.log" 2>&1 &
  BPID=$!
fi
trap 'kill $APID $BPID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas"' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
for _ in $(seq 1 100); do [ -z "$BPID" ] || [ -s "$OUT/bolt.kubeconfig" ] && break; sleep 0.2; done
sleep 1
[ -z "${WATCHERS:-}" ] || curl -fsS "$ETCD_SERVERS/metrics" | grep -E '^etcd_debugging_mvcc_(watcher|watch_stream)_total|^grpc_server_started_total.*Watch'

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# settle: wait (at most 60 s) until the servers and etcd are quiet — together under 10 % of
# a core over a second — so that what one run left behind (the namespace a server finalizes,
# deleting its 3000 ConfigMaps) does not weigh on the next run.
settle() {
  local t0 t1 i p
  for i in $(seq 1 60); do
    t0=0; for p in $APID $KPID $EPID $BPID; do t0=$((t0 + $(ticks $p))); done
    sleep 1
    t1=0; for p in $APID $KPID $EPID $BPID; do t1=$((t1 + $(ticks $p))); done
    [ $((t1 - t0)) -lt 10 ] && break
  done
  echo "  (settled after ${i}s)"
}
# load KUBECONFIG [PERFDATA]: one loadgen run (profiling admitd on etcd into PERFDATA), then CPU-ms per create of each process.
load() {
  local a0 k0 e0 a1 k1 e1 b0=0 b1=0
  settle
  a0=$(ticks $APID); k0=$(ticks $KPID); e0=$(ticks $EPID); [ -z "$BPID" ] || b0=$(ticks $BPID)
  local perfpid=
  if [ -n "${2:-}" ]; then
    perf record -e cpu-clock -F 999 -g -p $APID -o "$2" > "$OUT/perf.log" 2>&1 &
    perfpid=$!
  fi
  timeout 120 /usr/bin/time -f '%U %S' -o "$OUT/loadgen.time" "$OUT/loadgen" -kubeconfig "$1" -clients 8 -count $COUNT
  if [ -n "$perfpid" ]; then kill -INT $perfpid; wait $perfpid || true; fi
  a1=$(ticks $APID); k1=$(ticks $KPID); e1=$(ticks $EPID); [ -z "$BPID" ] || b1=$(ticks $BPID)
  awk -v a=$((a1-a0)) -v k=$((k1-k0)) -v e=$((e1-e0)) -v b=$((b1-b0)) -v n=$COUNT -v l="$(cut -d' ' -f1-3 /proc/loadavg)" \
    -v bolt="$BPID" '{ printf "  cpu-ms/create: admitd-etcd %.3f  kube-apiserver %.3f  etcd %.3f  loadgen %.3f%s  (load %s)\n",
      a*10/n, k*10/n, e*10/n, ($1+$2)*1000/n, (bolt != "" ? sprintf("  admitd-bolt %.3f", b*10/n) : ""), l }' "$OUT/loadgen.time"
}
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round admitd on etcd:"
  [ -z "${PERF:-}" ] || mkdir -p "$PERF"
  if [ -n "${PERF:-}" ] && [ "$round" = 1 ]; then
    load "$OUT/admitd.kubeconfig" "$PERF/admitd.perf"
  else
    load "$OUT/admitd.kubeconfig"
  fi
  echo "round $round kube-apiserver:"
  if [ -n "${PERF:-}" ] && [ "$round" = 1 ]; then
    load "$OUT/kas/admin.kubeconfig" "$PERF/admitd-during-kas.perf"
  else
    load "$OUT/kas/admin.kubeconfig"
  fi
  if [ -n "$BPID" ]; then echo "round $round admitd on bolt:"; load "$OUT/bolt.kubeconfig"; fi
  echo "round $round etcd's own puts:";  settle; timeout 120 "$OUT/etcdput" -endpoints "$ETCD_SERVERS" -count $COUNT
done
