#!/usr/bin/env bash
# sidebyside-legacytokencleaner.sh — admitd's legacy-serviceaccount-token-cleaner-controller beside
# the real kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), both with
# --legacy-service-account-token-clean-up-period=2s. In default, ServiceAccount builder lists the
# legacy token Secrets unused, used (its token then used once, which kube-apiserver records in
# its last-used label), mounted (named by a pod's volume), expired (labelled invalid since
# 2020-01-02), bad-date (last used "yesterday") and wrong-uid (annotated with another uid, which
# the token controllers delete at once); not-listed is a token it does not list. The tracking ConfigMap's date is set to 2020-01-01.
# The cleaner passes once a day, at start: so both servers are restarted, and after the first
# pass each server's tokens (labels, today's date as TODAY, or gone), and whether the token of
# unused, now invalid, still authenticates, are printed and diffed; the exit status is diff's. Needs the tools built with KCM=1; ADMITD=binary skips the build. About a
# minute (the restarted kube-controller-manager waits for its old lease).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
OUT=$(mktemp -d /tmp/sidebyside-legacytokencleaner.XXXX)
if [ -n "${ADMITD:-}" ]; then cp "$ADMITD" "$OUT/admitd"; else (cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd); fi
PERIOD=--legacy-service-account-token-clean-up-period=2s
export KCM=1 KCM_FLAGS=$PERIOD
"$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
APID=
startAdmitd() {
  rm -f "$OUT/admitd.kubeconfig"
  "$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" \
    --service-cluster-ip-range=127.1.0.0/24 "$PERIOD" >> "$OUT/admitd.log" 2>&1 &
  APID=$!
  for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
}
startAdmitd
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
echo "results and logs in $OUT"

token() { # name [labels-yaml] [uid]
  printf -- '---\napiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\nmetadata:\n  name: %s\n  namespace: default\n  annotations: {kubernetes.io/service-account.name: builder%s}\n  labels: {%s}\n' \
    "$1" "${3:+, kubernetes.io/service-account.uid: $3}" "${2:-}"
}

account() {
  printf -- '---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: builder, namespace: default}\nsecrets: [{name: unused}, {name: used}, {name: mounted}, {name: expired}, {name: bad-date}, {name: wrong-uid}]\n'
}

pod() {
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n  volumes: [{name: t, secret: {secretName: mounted}}]\n'
}

# useToken KUBECONFIG SECRET: one request with the secret's token, once the token controller has
# filled it in
useToken() {
  local k=(kubectl --kubeconfig "$1") t="" ca=$OUT/ca-$$-$RANDOM.crt
  for _ in $(seq 1 50); do
    t=$("${k[@]}" get secret "$2" -n default -o jsonpath='{.data.token}' | base64 -d)
    [ -n "$t" ] && break; sleep 0.2
  done
  "${k[@]}" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$ca"
  kubectl --kubeconfig /dev/null --server "$("${k[@]}" config view --raw -o jsonpath='{.clusters[0].cluster.server}')" \
    --certificate-authority "$ca" --token "$t" get --raw /api/v1/namespaces/default/pods > /dev/null 2>&1
}

view() { # kubeconfig step
  echo "## $2"
  kubectl --kubeconfig "$1" get secrets -n default -o json | TODAY=$(date -u +%F) python3 -c '
import json, os, sys
today = os.environ["TODAY"]
for s in sorted(json.load(sys.stdin)["items"], key=lambda s: s["metadata"]["name"]):
    if s["type"] != "kubernetes.io/service-account-token":
        continue
    labels = {k: ("TODAY" if v == today else v) for k, v in s["metadata"].get("labels", {}).items()}
    print("token", s["metadata"]["name"], json.dumps(labels, sort_keys=True), "deleting" if s["metadata"].get("deletionTimestamp") else "")'
}

# prepare KUBECONFIG: the objects and the tracking date
prepare() {
  local k=(kubectl --kubeconfig "$1")
  until "${k[@]}" patch configmap kube-apiserver-legacy-service-account-token-tracking -n kube-system --type=merge \
    -p '{"data":{"since":"2020-01-01"}}' > /dev/null 2>&1; do sleep 0.5; done
  account | "${k[@]}" create -f - > /dev/null
  local uid
  uid=$("${k[@]}" get serviceaccount builder -n default -o jsonpath='{.metadata.uid}')
  { token unused "" "$uid"; token used; token mounted; token not-listed
    token expired "kubernetes.io/legacy-token-invalid-since: '2020-01-02'"
    token bad-date "kubernetes.io/legacy-token-last-used: yesterday"
    token wrong-uid "" 0b5e7a3c-0000-4000-8000-000000000000; pod; } | "${k[@]}" create -f - > /dev/null
  useToken "$1" used || true
  sleep 3
}

until kubectl --kubeconfig "$OUT/kas/admin.kubeconfig" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
prepare "$OUT/admitd.kubeconfig" &
PA=$!
prepare "$OUT/kas/admin.kubeconfig" &
PK=$!
wait $PA $PK
view "$OUT/admitd.kubeconfig" "before the restart" > "$OUT/admitd.view"
view "$OUT/kas/admin.kubeconfig" "before the restart" > "$OUT/kube.view"

# restart both: the cleaner's first pass
kill "$APID"; wait "$APID" 2>/dev/null || true
"$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" > /dev/null 2>&1
"$TOOLS/kube-apiserver/start.sh" "$OUT/kas" >> "$OUT/start.log" 2>&1
startAdmitd
sleep "${WAIT:-30}" # kube-controller-manager's new lease comes once the old one expires
for side in "admitd.kubeconfig admitd.view" "kas/admin.kubeconfig kube.view"; do
  read -r kc v <<< "$side"
  view "$OUT/$kc" "after the first pass" >> "$OUT/$v"
  if useToken "$OUT/$kc" unused; then echo "unused's token authenticates"; else echo "unused's token is refused"; fi >> "$OUT/$v"
done
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
