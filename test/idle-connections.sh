#!/usr/bin/env bash
# test/idle-connections.sh — 20,000 idle connections against admitd serve:
# the server closes idle ones (its connection bound near the file limit at
# once, its 90 s idle timeout after), kubectl keeps working throughout, and
# RSS stays bounded. Each flood holds its connections for HOLD (past the
# 90 s idle timeout) once all are open; the whole run is cut at 6 minutes,
# and everything it starts is stopped on exit.
#
#   test/idle-connections.sh            # 2 x 10,000 keep-alive connections
#   N=5000 PROCS=4 MODE=tls HOLD=120s test/idle-connections.sh
#
# Exit status 1 when kubectl failed at some point, connections were still
# open at the end, or admitd's RSS passed MAX_RSS_MIB (default 2048).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000} PROCS=${PROCS:-2} MODE=${MODE:-keepalive} HOLD=${HOLD:-100s} MAX_RSS_MIB=${MAX_RSS_MIB:-2048}
TMP=$(mktemp -d /tmp/admitd-idle.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

go build -o "$TMP/admitd" ./cmd/admitd
go build -o "$TMP/connflood" ./test/connflood
"$TMP/admitd" serve --data-dir "$TMP/data" --secure-port 0 >"$TMP/out" 2>"$TMP/err" &
ADMITD=$!; PIDS+=("$ADMITD")
for _ in $(seq 100); do grep -q "serving on" "$TMP/out" 2>/dev/null && break; sleep 0.2; done
URL=$(sed -n 's/.*serving on \(https:[^;]*\);.*/\1/p' "$TMP/out")
export KUBECONFIG=$TMP/data/admin.kubeconfig
[ -n "$URL" ] || { echo "admitd did not start"; cat "$TMP/err"; exit 1; }
rss() { awk '/VmRSS/{print int($2/1024)}' "/proc/$ADMITD/status"; }
echo "admitd on $URL, file limit $(awk '/Max open files/{print $4}' /proc/$ADMITD/limits), idle RSS $(rss) MiB"

FLOODS=()
for i in $(seq "$PROCS"); do
  "$TMP/connflood" -addr "${URL#https://}" -n "$N" -mode "$MODE" -for "$HOLD" >"$TMP/flood$i" 2>&1 &
  PIDS+=("$!"); FLOODS+=("$!")
done
fail=0 peak=0 t0=$(date +%s)
flooding() { for p in "${FLOODS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while flooding; do
  [ $(( $(date +%s) - t0 )) -lt 360 ] || { echo "FAIL: cut at 6 minutes"; exit 1; }
  sleep 5
  start=$(date +%s%N)
  if kubectl get namespaces --request-timeout=5s >/dev/null 2>"$TMP/kerr"; then k="ok"; else k="FAILED: $(tail -1 "$TMP/kerr")"; fail=1; fi
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
  open=$(for i in $(seq "$PROCS"); do tail -1 "$TMP/flood$i" | awk '{print $2}'; done | awk '{s+=$1} END{print s}')
  echo "t+$(( $(date +%s) - t0 ))s  flood connections open: $open  admitd RSS ${r} MiB  kubectl get: $k (${ms} ms)"
done
for i in $(seq "$PROCS"); do grep -E "^(opened|final)" "$TMP/flood$i"; done
left=$(for i in $(seq "$PROCS"); do awk '/^final/{print $3}' "$TMP/flood$i"; done | awk '{s+=$1} END{print s}')
echo "peak RSS ${peak} MiB (bound ${MAX_RSS_MIB}); flood connections still open at the end: ${left}"
[ "$peak" -le "$MAX_RSS_MIB" ] || { echo "FAIL: RSS over the bound"; fail=1; }
[ "${left:-1}" -eq 0 ] || { echo "FAIL: idle connections were not closed"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok" || exit 1
