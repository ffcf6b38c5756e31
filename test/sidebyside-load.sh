#!/usr/bin/env bash
# sidebyside-load.sh [ROUNDS] — issue 25's many-client workloads against admitd (its embedded
# store, default flags) and the real kube-apiserver 1.37.2 + etcd of ../shared/tools/kube-apiserver,
# alternating, each run after both are idle:
#   (a) LIST_CLIENTS (200) clients of LIST_USERS (1) users, each on a connection of its own
#       (SHARED_CONNECTION=1: all on one), listing 5,000 ConfigMaps for LIST_SECONDS (60) while a
#       second user runs `kubectl get` once a second (test/loadmix -mode lists; LIST_USERS=200
#       makes each client a user of its own, 200 flows);
#   (b) WATCHERS (1000) watches of one namespace, then CREATES (2000) creates from 8 clients, and
#       the same creates without watchers (test/loadmix -mode watchers), also against test/h2floor,
#       which only fans each create's event out, encoded once, to the watchers (the floor of any
#       server on net/http: the share of the rate its watchers leave bounds admitd's);
#   (c) the plain create load of ../shared/tools/loadgen (8 clients, LOADGEN_COUNT creates), also
#       against test/h2floor: Go's HTTPS server echoing each create's body, nothing else (the
#       floor of any server built on net/http), and against `h2floor -durable` (the same, each
#       create's body appended to a file and synced before the answer, concurrent creates sharing
#       a sync: the floor of a server that keeps what it acknowledges), and WEBHOOK_COUNT (LOADGEN_COUNT) creates through
#       loadgen's 1 mutating + 1 validating HTTPS webhook;
#   (d) issue 27's other verbs, as (c) for creates: VERB_OPS (20000) gets, updates, JSON merge
#       patches and server-side applies of VERB_OBJECTS (800) ConfigMaps from 8 clients on one
#       connection (test/loadmix -mode verbs; the objects are created before, unmeasured).
# After each run, per server process: its peak RSS during the run (sampled every 0.2 s) and the
# CPU it used per operation (kube-apiserver's line adds etcd's; the client's, the load tool's own,
# beside), and its RSS right after the run split into anonymous memory and file pages; last, per
# workload, kube-apiserver's figures over admitd's (test/sidebyside-summary.awk). WORKLOADS
# (a,b,c) picks runs; run alone, (c) compares memory as issue 27 does (after (a) kube-apiserver
# holds a gigabyte more).
# Heavy: run it alone (flock /tmp/admitd-heavy.lock).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
ROUNDS=${1:-2}
LIST_CLIENTS=${LIST_CLIENTS:-200}
LIST_SECONDS=${LIST_SECONDS:-60}
LIST_USERS=${LIST_USERS:-1}
SHARED_CONNECTION=${SHARED_CONNECTION:-}
WATCHERS=${WATCHERS:-1000}
CREATES=${CREATES:-2000}
LOADGEN_COUNT=${LOADGEN_COUNT:-3000}
WEBHOOK_COUNT=${WEBHOOK_COUNT:-$LOADGEN_COUNT}
VERB_OPS=${VERB_OPS:-20000}
VERB_OBJECTS=${VERB_OBJECTS:-800}
WORKLOADS=${WORKLOADS:-a,b,c}
OUT=$(mktemp -d /tmp/sidebyside-load.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd && go build -o "$OUT/loadmix" ./test/loadmix && go build -o "$OUT/h2floor" ./test/h2floor)
(cd "$TOOLS/loadgen" && go build -o "$OUT/loadgen" .)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
KPID=$(awk '$1=="kube-apiserver"{print $2}' "$OUT/kas/pids")
EPID=$(awk '$1=="etcd"{print $2}' "$OUT/kas/pids")
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" > "$OUT/admitd.log" 2>&1 &
APID=$!
"$OUT/h2floor" -kubeconfig-out "$OUT/h2floor.kubeconfig" > "$OUT/h2floor.log" 2>&1 &
FPID=$!
mkdir -p "$OUT/h2floor-durable-data"
"$OUT/h2floor" -kubeconfig-out "$OUT/h2floor-durable.kubeconfig" -durable "$OUT/h2floor-durable-data" > "$OUT/h2floor-durable.log" 2>&1 &
DPID=$!
trap 'kill $APID $FPID $DPID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && [ -s "$OUT/h2floor.kubeconfig" ] && [ -s "$OUT/h2floor-durable.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
# settle: wait (at most 60 s) until the servers and etcd use under 10 % of a core together.
settle() {
  local t0 t1 i p
  for i in $(seq 1 60); do
    t0=0; for p in $APID $KPID $EPID; do t0=$((t0 + $(ticks $p))); done
    sleep 1
    t1=0; for p in $APID $KPID $EPID; do t1=$((t1 + $(ticks $p))); done
    [ $((t1 - t0)) -lt 10 ] && break
  done
}
# peaks PID...: samples RSS every 0.2 s into $OUT/peak.<pid> until killed.
peaks() {
  local p r
  for p in "$@"; do echo 0 > "$OUT/peak.$p"; done
  while :; do
    for p in "$@"; do
      r=$(rss $p); [ "$r" -gt "$(cat "$OUT/peak.$p")" ] && echo "$r" > "$OUT/peak.$p"
    done
    sleep 0.2
  done
}
# kib PID: its RSS now in KiB, split: "anon file" (shared memory counted as file).
kib() { awk '/^RssAnon/{a=$2} /^RssFile/{f=$2} /^RssShmem/{s=$2} END{print a, f+s}' "/proc/$1/status"; }
# run NAME SERVER OPS_FROM COMMAND...: one measured run. SERVER is admitd, kube-apiserver,
# h2floor or h2floor-durable; OPS_FROM is a number of operations, or "lists" to read it from the output. Each run
# adds a line to $OUT/results for the summary: round, name, server, CPU-ms per op (etcd's
# included), peak RSS and anonymous RSS after (KiB, etcd's included), then the tool's own line.
run() {
  local name=$1 server=$2 ops=$3; shift 3
  local pids="$APID" cpu0 cpu1 e0=0 e1=0
  [ "$server" = kube-apiserver ] && pids="$KPID $EPID"
  [ "$server" = h2floor ] && pids="$FPID"
  [ "$server" = h2floor-durable ] && pids="$DPID"
  settle
  local main=${pids%% *}
  cpu0=$(ticks $main); [ "$server" = kube-apiserver ] && e0=$(ticks $EPID)
  peaks $pids & local sampler=$!
  /usr/bin/time -f '%U %S' -o "$OUT/tool.time" "$@" > "$OUT/run.out" 2>&1 || true
  kill $sampler; wait $sampler 2>/dev/null || true
  cpu1=$(ticks $main); [ "$server" = kube-apiserver ] && e1=$(ticks $EPID)
  [ "$ops" = lists ] && ops=$(sed -n 's/^lists: \([0-9]*\) done.*/\1/p' "$OUT/run.out")
  [ -n "$ops" ] && [ "$ops" -gt 0 ] || ops=1
  local line cpu tool ecpu peak epeak=0 mem emem="0 0"
  line=$(tail -1 "$OUT/run.out")
  cpu=$(awk -v t=$((cpu1-cpu0)) -v n=$ops 'BEGIN{print t*10/n}')
  # the last line: GNU time writes "Command exited with non-zero status N" above it
  tool=$(awk -v n=$ops 'END{printf "%.3f", ($1+$2)*1000/n}' "$OUT/tool.time")
  ecpu=$(awk -v t=$((e1-e0)) -v n=$ops 'BEGIN{print t*10/n}')
  peak=$(cat "$OUT/peak.$main"); mem=$(kib $main)
  if [ "$server" = kube-apiserver ]; then epeak=$(cat "$OUT/peak.$EPID"); emem=$(kib $EPID); fi
  printf '%-34s %-15s %s\n' "$name" "$server" "$line"
  if [ "$server" = kube-apiserver ]; then
    printf '%-34s %-15s peak RSS %d MiB (+ etcd %d MiB), cpu-ms/op %.3f (+ etcd %.3f; the client %.3f)\n' "" "" \
      $((peak / 1024)) $((epeak / 1024)) "$cpu" "$ecpu" "$tool"
    printf '%-34s %-15s RSS after: %d MiB anon + %d MiB file (+ etcd %d + %d)\n' "" "" \
      $(( ${mem% *} / 1024 )) $(( ${mem#* } / 1024 )) $(( ${emem% *} / 1024 )) $(( ${emem#* } / 1024 ))
  else
    printf '%-34s %-15s peak RSS %d MiB, cpu-ms/op %.3f (the client %.3f)\n' "" "" $((peak / 1024)) "$cpu" "$tool"
    printf '%-34s %-15s RSS after: %d MiB anon + %d MiB file\n' "" "" $(( ${mem% *} / 1024 )) $(( ${mem#* } / 1024 ))
  fi
  printf '%s|%s|%s|%s|%s|%s|%s\n' "$round" "$name" "$server" \
    "$(awk -v a="$cpu" -v b="$ecpu" 'BEGIN{print a+b}')" $((peak + epeak)) $(( ${mem% *} + ${emem% *} )) "$line" >> "$OUT/results"
}
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round"
  for server in admitd kube-apiserver; do
    kc="$OUT/admitd.kubeconfig"; [ "$server" = kube-apiserver ] && kc="$OUT/kas/admin.kubeconfig"
    case ",$WORKLOADS," in *,a,*)
      run "(a) $LIST_CLIENTS clients/$LIST_USERS users list 5,000" $server lists \
        "$OUT/loadmix" -kubeconfig "$kc" -mode lists -clients "$LIST_CLIENTS" -list-users "$LIST_USERS" -duration "${LIST_SECONDS}s" \
        ${SHARED_CONNECTION:+-shared-connection};;
    esac
    case ",$WORKLOADS," in *,b,*)
      run "(b) $CREATES creates, no watchers" $server "$CREATES" "$OUT/loadmix" -kubeconfig "$kc" -mode watchers -watchers 0 -creates "$CREATES"
      run "(b) $CREATES creates, $WATCHERS watchers" $server "$CREATES" "$OUT/loadmix" -kubeconfig "$kc" -mode watchers -watchers "$WATCHERS" -creates "$CREATES"
      if [ "$server" = admitd ]; then
        for w in 0 "$WATCHERS"; do
          name="(b) $CREATES creates, $w watchers"; [ "$w" = 0 ] && name="(b) $CREATES creates, no watchers"
          run "$name" h2floor "$CREATES" "$OUT/loadmix" -kubeconfig "$OUT/h2floor.kubeconfig" -mode watchers -watchers "$w" -creates "$CREATES"
        done
      fi;;
    esac
    case ",$WORKLOADS," in *,c,*)
      run "(c) loadgen creates" $server "$LOADGEN_COUNT" "$OUT/loadgen" -kubeconfig "$kc" -clients 8 -count "$LOADGEN_COUNT"
      run "(c) the same through 1+1 webhooks" $server "$WEBHOOK_COUNT" \
        "$OUT/loadgen" -kubeconfig "$kc" -clients 8 -count "$WEBHOOK_COUNT" -webhooks
      if [ "$server" = admitd ]; then
        for floor in h2floor h2floor-durable; do
          run "(c) loadgen creates" $floor "$LOADGEN_COUNT" \
            "$OUT/loadgen" -kubeconfig "$OUT/$floor.kubeconfig" -clients 8 -count "$LOADGEN_COUNT"
        done
      fi;;
    esac
    case ",$WORKLOADS," in *,d,*)
      "$OUT/loadmix" -kubeconfig "$kc" -mode verbs -verb seed -verb-objects "$VERB_OBJECTS" > /dev/null
      for verb in get update patch apply; do
        run "(d) $VERB_OPS ${verb}s" $server "$VERB_OPS" \
          "$OUT/loadmix" -kubeconfig "$kc" -mode verbs -verb "$verb" -ops "$VERB_OPS" -verb-objects "$VERB_OBJECTS"
      done;;
    esac
  done
done
echo "== kube-apiserver + etcd against admitd, per round (× = how many times less, or more for the rate)"
awk -f "$HERE/sidebyside-summary.awk" "$OUT/results"
