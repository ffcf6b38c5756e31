#!/bin/bash
# Records the EndpointSlice mirroring session on the real kube-apiserver +
# kcm: KCM=1 /work/shared/tools/kube-apiserver/start.sh /tmp/epslice-mirror-kas
set -u
cd "$(dirname "$0")"
K="kubectl --kubeconfig /tmp/epslice-mirror-kas/admin.kubeconfig"
OUT=/tmp/epslice-mirror-rec/out; rm -rf $OUT; mkdir -p $OUT
$K create ns sess
until $K -n sess get sa default >/dev/null 2>&1; do sleep 0.2; done
snap() { # step name
  sleep 3
  $K -n sess get endpointslices > $OUT/$1.table.txt 2>&1
  $K -n sess get endpointslices -o json > $OUT/$1.endpointslices.json
  $K -n sess get endpoints -o json > $OUT/$1.endpoints.json 2>/dev/null
}
$K -n sess create -f svc.yaml
$K -n sess create -f ep-1.yaml
snap 1-created
$K -n sess apply -f ep-2.yaml
snap 2-updated
$K -n sess label endpoints ext endpointslice.kubernetes.io/skip-mirror=true
snap 3-skip-mirror
$K -n sess label endpoints ext endpointslice.kubernetes.io/skip-mirror-
snap 4-unskipped
$K -n sess patch service ext -p '{"spec":{"selector":{"app":"ext"}}}'
snap 5-selector
$K -n sess get events -o json > $OUT/events.json
