#!/usr/bin/env bash
# profile-creates.sh [-webhooks] — where a create's CPU goes in the built admitd (issue 27's
# profile-led rounds): it starts admitd (embedded store, default flags), warms it up with
# ../shared/tools/loadgen, waits until it is idle, then profiles SECS (6) seconds of the same
# 8-client ConfigMap creates (-webhooks: through loadgen's 1 mutating + 1 validating webhook) and
# prints the server's CPU per create by part: the request's own path, HTTP/2 and TLS (response
# writes, the connection's loop, frame reads, the handler's start), the webhook calls' HTTP/2
# client, the storage writer, watch fan-out, controllers, the garbage collector, the scheduler.
# The profile's samples are divided by the creates done while it ran; the CPU the kernel counts
# for the whole run is printed beside (a profile misses ~10%). Env: SECS, KEEP=1 keeps the
# directory (binary, profile) for `go tool pprof`.
# Heavy: run it alone (flock /tmp/admitd-heavy.lock).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
SECS=${SECS:-6}
OUT=$(mktemp -d /tmp/profile-creates.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
(cd "$TOOLS/loadgen" && go build -o "$OUT/loadgen" .)
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/data" --kubeconfig-out="$OUT/kubeconfig" > "$OUT/admitd.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $OUT" || rm -rf "$OUT"' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/kubeconfig" ] && break; sleep 0.1; done
ticks() { awk '{print $14+$15}' "/proc/$PID/stat"; }
settle() {
  local i t0
  for i in $(seq 1 90); do t0=$(ticks); sleep 1; [ $(($(ticks) - t0)) -lt 10 ] && return; done
}
"$OUT/loadgen" -kubeconfig "$OUT/kubeconfig" -count 3000 -label warm-up "$@" > /dev/null
settle
# enough creates to outlast the profile at ~6,000/s (~2,500/s through the webhooks)
count=$(( (SECS + 3) * 6000 ))
case " $* " in *" -webhooks "*) count=$(( (SECS + 3) * 2500 ));; esac
kubectl --kubeconfig "$OUT/kubeconfig" get --raw "/debug/pprof/profile?seconds=$SECS" > "$OUT/cpu.pprof" &
PROF=$!
t0=$(ticks)
line=$("$OUT/loadgen" -kubeconfig "$OUT/kubeconfig" -count "$count" -label profiled "$@")
t1=$(ticks)
wait $PROF
echo "$line"
rate=$(sed -n 's/.*rate=\([0-9.]*\)\/s.*/\1/p' <<< "$line")
echo "server CPU per create over the whole run (kernel): $(awk -v t=$((t1 - t0)) -v n="$count" 'BEGIN{printf "%.1f µs", t*10000/n}')"
go tool pprof -traces "$OUT/admitd" "$OUT/cpu.pprof" 2>/dev/null | awk -v n="$(awk -v r="$rate" -v s="$SECS" 'BEGIN{print r*s}')" '
function seconds(v) { if (v ~ /ms$/) return v / 1000; if (v ~ /us$/) return v / 1e6; return v + 0 }
function has(p) { return index(stack, p) > 0 }
function part() {
  if (has("internal/controllers")) return "controllers"
  if (has("apiserver.serveRuns")) return has("webhooks.(*dispatcher).call") || has("webhooks.(*Mutating).applyPatch") ? "request path: webhook calls (encode, decode, patch)" : "request path: the rest"
  if (has("writeFrameAsync")) return "HTTP/2 + TLS: response writes"
  if (has("http2serverConn).serve")) return "HTTP/2 + TLS: connection loop"
  if (has("http2serverConn).readFrames")) return "HTTP/2 + TLS: frame reads"
  if (has("http2serverConn).runHandler")) return "HTTP/2 + TLS: handler start and end"
  if (has("http2clientStream") || has("http2ClientConn")) return "webhook calls: HTTP/2 + TLS client"
  if (has("storage/bolt.")) return "storage (log, fdatasync, checkpoints)"
  if (has("storage/fanout") || has("apiserver.(*Server).serveStream")) return "watch fan-out"
  if (has("gcBgMarkWorker") || has("runtime.bgsweep") || has("runtime.bgscavenge")) return "garbage collector"
  if (has("runtime.schedule") || has("runtime.findRunnable") || has("runtime.mcall")) return "scheduler"
  return "other"
}
/^-----------\+/ { if (stack != "") cpu[part()] += sample; stack = ""; next }
/^ +[0-9.]+(s|ms|us) / { sample = seconds($1); stack = $2; next }
/^ +[^ ]/ && sample != "" { stack = stack " " $1 }
END {
  if (stack != "") cpu[part()] += sample
  for (p in cpu) total += cpu[p]
  printf "profiled CPU per create, by part (%d creates in the profile):\n", n
  for (p in cpu) printf "  %6.1f µs  %s\n", cpu[p] * 1e6 / n, p | "sort -rn"
  close("sort -rn")
  printf "  %6.1f µs  in all\n", total * 1e6 / n
}'
