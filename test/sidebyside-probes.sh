#!/usr/bin/env bash
# test/sidebyside-probes.sh — the hostile-input probes of issue 24
# (test/probes) against admitd and the real kube-apiserver 1.37.2 + etcd of
# ../shared/tools/kube-apiserver, as the same low-privilege token user
# (configmaps in namespace "mine" only), and the answers compared: code,
# Status reason and message, a watch's first event.
#
#   KAS_TOOLS=../shared/tools/kube-apiserver test/sidebyside-probes.sh
#
# admitd runs with --anonymous-auth, as kube-apiserver defaults to. Prints
# every probe whose answers differ and exits 1 if any does.
set -euo pipefail
cd "$(dirname "$0")/.."
KAS_TOOLS=${KAS_TOOLS:-../shared/tools/kube-apiserver}
TMP=$(mktemp -d /tmp/admitd-probes.XXXXXX)
ADMITD=
cleanup() {
  [ -n "$ADMITD" ] && kill "$ADMITD" 2>/dev/null || true
  "$KAS_TOOLS/stop.sh" "$TMP/kas" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
echo 'mallory-token,mallory,1001' > "$TMP/tokens.csv"
go build -o "$TMP/admitd" ./cmd/admitd
go build -o "$TMP/probes" ./test/probes

setup() { # KUBECONFIG is the admin's
  kubectl create namespace mine >/dev/null
  kubectl create namespace other >/dev/null
  kubectl -n mine create role configmaps-only --verb=get,list,watch,create,update,patch,delete --resource=configmaps >/dev/null
  kubectl -n mine create rolebinding mallory --role=configmaps-only --user=mallory >/dev/null
  kubectl -n mine create configmap target --from-literal=a=1 >/dev/null
}

"$KAS_TOOLS/start.sh" "$TMP/kas" --token-auth-file="$TMP/tokens.csv" >"$TMP/kas.log" 2>&1
KAS_URL=$(sed -n 's/^SERVER=//p' "$TMP/kas/env")
KUBECONFIG=$TMP/kas/admin.kubeconfig setup
"$TMP/admitd" serve --data-dir "$TMP/admitd-data" --secure-port 0 --token-auth-file "$TMP/tokens.csv" --anonymous-auth >"$TMP/admitd.out" 2>"$TMP/admitd.err" &
ADMITD=$!
for _ in $(seq 100); do grep -q "serving on" "$TMP/admitd.out" 2>/dev/null && break; sleep 0.2; done
ADMITD_URL=$(sed -n 's/.*serving on \(https:[^;]*\);.*/\1/p' "$TMP/admitd.out")
KUBECONFIG=$TMP/admitd-data/admin.kubeconfig setup

"$TMP/probes" -server "$KAS_URL" -token mallory-token > "$TMP/kas.jsonl"
"$TMP/probes" -server "$ADMITD_URL" -token mallory-token > "$TMP/admitd.jsonl"
python3 - "$TMP/kas.jsonl" "$TMP/admitd.jsonl" <<'PY'
import json, sys
kas = [json.loads(l) for l in open(sys.argv[1])]
adm = {a["name"]: a for a in (json.loads(l) for l in open(sys.argv[2]))}
differ = 0
for k in kas:
    a = adm.get(k["name"], {"name": k["name"], "error": "not probed"})
    if k != a:
        differ += 1
        print("DIFFERS:", k["name"])
        print("   kube-apiserver:", json.dumps({x: y for x, y in k.items() if x != "name"}))
        print("   admitd:        ", json.dumps({x: y for x, y in a.items() if x != "name"}))
print(f"{len(kas) - differ} of {len(kas)} probes answered alike")
sys.exit(1 if differ else 0)
PY
