#!/usr/bin/env bash
# sidebyside-listmemory.sh — what concurrent large lists cost in memory, in each form a client may
# ask for, in admitd (built from this checkout, embedded store) and in the real kube-apiserver
# 1.37.2 + etcd of ../shared/tools/kube-apiserver: OBJECTS (5000) ConfigMaps of ~2 KiB, then for
# each form CLIENTS (20) concurrent lists of them, 3 times, while the server's RSS is sampled every
# 50 ms; it prints each server's RSS before and its peak during the lists (kube-apiserver's own,
# etcd's beside it), and the bytes of one answer. Forms: JSON, protobuf, YAML, Table with whole
# objects, PartialObjectMetadataList in JSON and in protobuf, in that order on one server each: a
# Go heap grown by one form stays grown for the next, so a form's peak above the "before" of the
# next is what it cost, and the highest peak is what the whole run cost.
# Heavy: run it alone (flock /tmp/admitd-heavy.lock).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
KAS_TOOLS=${KAS_TOOLS:-$(cd "$ROOT/../shared/tools/kube-apiserver" && pwd)}
OBJECTS=${OBJECTS:-5000}
CLIENTS=${CLIENTS:-20}
TMP=$(mktemp -d /tmp/listmemory.XXXX)
cleanup() {
  [ -n "${ADMITD_PID:-}" ] && kill "$ADMITD_PID" 2>/dev/null
  "$KAS_TOOLS/stop.sh" "$TMP/kas" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
FORMS=(
  "json|application/json|"
  "protobuf|application/vnd.kubernetes.protobuf|"
  "yaml|application/yaml|"
  "table+objects|application/json;as=Table;v=v1;g=meta.k8s.io|?includeObject=Object"
  "metadata-json|application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io|"
  "metadata-protobuf|application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io|"
)

# client_cert KUBECONFIG DIR: the kubeconfig's client certificate and key as files in DIR
client_cert() {
  python3 - "$1" "$2" <<'PY'
import base64, sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
u = k["users"][0]["user"]
open(sys.argv[2] + "/client.crt", "wb").write(base64.b64decode(u["client-certificate-data"]))
open(sys.argv[2] + "/client.key", "wb").write(base64.b64decode(u["client-key-data"]))
PY
}

rss_kib() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }

# measure NAME URL DIR PID [ETCD_PID]: fill the server, then each form's concurrent lists
measure() {
  local name=$1 url=$2 dir=$3 pid=$4 etcd=${5:-}
  local curl=(curl -sk --cert "$dir/client.crt" --key "$dir/client.key")
  local data
  data=$(head -c 1500 /dev/urandom | base64 -w0)
  seq "$OBJECTS" | xargs -P 8 -I{} "${curl[@]}" -o /dev/null -X POST -H 'Content-Type: application/json' \
    "$url/api/v1/namespaces/default/configmaps" -d "{\"metadata\":{\"name\":\"cm-{}\"},\"data\":{\"k\":\"$data\"}}"
  sleep 2
  local form label accept query base peak r lists etcdpeak
  for form in "${FORMS[@]}"; do
    IFS='|' read -r label accept query <<<"$form"
    base=$(rss_kib "$pid"); peak=$base; etcdpeak=0
    ( for _ in 1 2 3; do
        seq "$CLIENTS" | xargs -P "$CLIENTS" -I{} "${curl[@]}" -o /dev/null -w '%{http_code} %{size_download}\n' \
          -H "Accept: $accept" "$url/api/v1/namespaces/default/configmaps$query"
      done > "$dir/sizes" ) &
    lists=$!
    while kill -0 "$lists" 2>/dev/null; do
      r=$(rss_kib "$pid"); [ "$r" -gt "$peak" ] && peak=$r
      if [ -n "$etcd" ]; then r=$(rss_kib "$etcd"); [ "$r" -gt "$etcdpeak" ] && etcdpeak=$r; fi
      sleep 0.05
    done
    wait "$lists"
    printf '%-15s %-18s RSS %5d MiB before, peak %5d MiB%s; answers: %s\n' "$name" "$label" $((base / 1024)) $((peak / 1024)) \
      "$([ -n "$etcd" ] && echo " (etcd peak $((etcdpeak / 1024)) MiB)")" "$(awk '{print $1" "$2}' "$dir/sizes" | sort -u | head -2 | tr '\n' ' ')"
  done
}

mkdir -p "$TMP/admitd"
(cd "$ROOT" && go build -o "$TMP/admitd/admitd" ./cmd/admitd)
"$TMP/admitd/admitd" serve --secure-port=0 --data-dir="$TMP/admitd/data" --kubeconfig-out="$TMP/admitd/kubeconfig" > "$TMP/admitd/log" 2>&1 &
ADMITD_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/admitd/kubeconfig" ] && break; sleep 0.1; done
client_cert "$TMP/admitd/kubeconfig" "$TMP/admitd"
ADMITD_URL=$(python3 -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["clusters"][0]["cluster"]["server"])' "$TMP/admitd/kubeconfig")
measure admitd "$ADMITD_URL" "$TMP/admitd" "$ADMITD_PID"
kill "$ADMITD_PID"; ADMITD_PID=

"$KAS_TOOLS/start.sh" "$TMP/kas" > "$TMP/kas.log" 2>&1
KAS_URL=$(sed -n 's/^SERVER=//p' "$TMP/kas/env")
KAS_PID=$(awk '$1=="kube-apiserver"{print $2}' "$TMP/kas/pids")
ETCD_PID=$(awk '$1=="etcd"{print $2}' "$TMP/kas/pids")
client_cert "$TMP/kas/admin.kubeconfig" "$TMP/kas"
measure kube-apiserver "$KAS_URL" "$TMP/kas" "$KAS_PID" "$ETCD_PID"
