#!/usr/bin/env bash
# sidebyside-pods.sh [ROUNDS] — issue 26's benchmark: 1,000 pods of Deployments (DEPLOYMENTS (10) x
# REPLICAS (100)) on admitd with 100 simulated nodes, and on the real kube-apiserver 1.37.2 + etcd +
# kube-controller-manager of ../shared/tools/kube-apiserver (KCM=1; no scheduler or kubelet there),
# alternating, each server started fresh every round and measured once idle (test/podsbench):
#   admitd:         from the Deployments' creates until all pods are Running and Ready (its
#                   controllers, scheduler and simulated kubelets all run in the one process);
#   kube-apiserver: from the creates until all pods exist (kcm's ReplicaSet controller made them);
# then both delete the Deployments and wait until every pod and ReplicaSet is gone. Per process:
# CPU (user+sys, from /proc) per pod, RSS before and peak, and a summary table with the ratios.
# admitd's side does more per pod than the other: it also schedules and binds each pod, writes its
# running status and 4 events (Scheduled, Pulled, Created, Started), as a scheduler and kubelet would.
# kcm runs with --kube-api-qps/--kube-api-burst KCM_QPS (1000): at kcm's default (20) its
# ReplicaSet controller's client waits out its rate limiter, and the time measures that, not the
# servers (KCM_QPS=20 to see it); admitd's controllers have no client-side limit.
# Env: NODES (100), ADMITD_FLAGS (added to admitd serve), PROFILE=DIR saves admitd's CPU profile
# (its /debug/pprof/profile) of PROFILE_SECONDS (15) from round 1's creates on: the create phase
# and, when it ends sooner, part of the delete. Heavy: flock /tmp/admitd-heavy.lock.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
ROUNDS=${1:-3}
NODES=${NODES:-100}
DEPLOYMENTS=${DEPLOYMENTS:-10}
REPLICAS=${REPLICAS:-100}
KCM_QPS=${KCM_QPS:-1000}
OUT=$(mktemp -d /tmp/sidebyside-pods.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd && go build -o "$OUT/podsbench" ./test/podsbench)
echo "results and logs in $OUT"

APID= KASDIR=
cleanup() {
  [ -z "$APID" ] || { kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null || true; }
  [ -z "$KASDIR" ] || "$TOOLS/kube-apiserver/stop.sh" "$KASDIR" > /dev/null 2>&1 || true
}
trap cleanup EXIT

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# settle PID...: wait (at most 30 s) until the processes use under 10 % of a core together, then
# print their idle CPU over 5 s (admitd's simulated kubelets renew NODES Leases every 10 s).
settle() {
  local t0 t1 i p
  for i in $(seq 1 30); do
    t0=0; for p in "$@"; do t0=$((t0 + $(ticks "$p"))); done
    sleep 1
    t1=0; for p in "$@"; do t1=$((t1 + $(ticks "$p"))); done
    [ $((t1 - t0)) -lt 10 ] && break
  done
  t0=0; for p in "$@"; do t0=$((t0 + $(ticks "$p"))); done
  sleep 5
  t1=0; for p in "$@"; do t1=$((t1 + $(ticks "$p"))); done
  echo "  idle after ${i}s: $(( (t1 - t0) * 10 / 5 )) ms of CPU per second (load $(cut -d' ' -f1-3 /proc/loadavg))"
}

run_admitd() {
  local round=$1 kc="$OUT/admitd-$1/admin.kubeconfig" i
  echo "== round $round: admitd, $NODES simulated nodes"
  "$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-$round" --kubeconfig-out="$kc" \
    --simulated-nodes="$NODES" ${ADMITD_FLAGS:-} > "$OUT/admitd-$round.log" 2>&1 &
  APID=$!
  for i in $(seq 1 300); do [ -s "$kc" ] && break; sleep 0.2; done
  for i in $(seq 1 300); do
    [ "$(kubectl --kubeconfig "$kc" get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" = "$NODES" ] && break
    sleep 0.5
  done
  settle $APID
  local prof=
  if [ -n "${PROFILE:-}" ] && [ "$round" = 1 ]; then
    mkdir -p "$PROFILE"
    kubectl --kubeconfig "$kc" get --raw "/debug/pprof/profile?seconds=${PROFILE_SECONDS:-15}" > "$PROFILE/admitd-create.pprof" &
    prof=$!
  fi
  "$OUT/podsbench" -kubeconfig "$kc" -server admitd -deployments "$DEPLOYMENTS" -replicas "$REPLICAS" -until ready \
    -procs "admitd=$APID" | tee -a "$OUT/results"
  [ -z "$prof" ] || wait "$prof" || true
  kill "$APID"; wait "$APID" 2>/dev/null || true; APID=
}

run_kas() {
  local round=$1
  echo "== round $round: kube-apiserver + etcd + kube-controller-manager"
  KASDIR="$OUT/kas-$round"
  KCM=1 FRESH=1 KCM_FLAGS="--kube-api-qps=$KCM_QPS --kube-api-burst=$KCM_QPS" \
    "$TOOLS/kube-apiserver/start.sh" "$KASDIR" > "$OUT/kas-$round.start.log" 2>&1
  local k e c
  k=$(awk '$1=="kube-apiserver"{print $2}' "$KASDIR/pids")
  e=$(awk '$1=="etcd"{print $2}' "$KASDIR/pids")
  c=$(awk '$1=="kube-controller-manager"{print $2}' "$KASDIR/pids")
  settle "$k" "$e" "$c"
  "$OUT/podsbench" -kubeconfig "$KASDIR/admin.kubeconfig" -server kube-apiserver -deployments "$DEPLOYMENTS" \
    -replicas "$REPLICAS" -until created -procs "kube-apiserver=$k,etcd=$e,kube-controller-manager=$c" | tee -a "$OUT/results"
  "$TOOLS/kube-apiserver/stop.sh" "$KASDIR" > /dev/null 2>&1; KASDIR=
}

for round in $(seq 1 "$ROUNDS"); do   # odd rounds admitd first, even rounds kube-apiserver first
  if [ $((round % 2)) = 1 ]; then run_admitd "$round"; run_kas "$round"; else run_kas "$round"; run_admitd "$round"; fi
done

echo
echo "== summary ($ROUNDS rounds; admitd until Running and Ready on $NODES simulated nodes, kube-apiserver until created)"
awk -f "$HERE/sidebyside-pods.awk" "$OUT/results"
