#!/bin/bash
# Records the PodDisruptionBudget session of test/e2e/disruption_test.go
# on a real kube-apiserver + kube-controller-manager 1.37.2 (start.sh with
# KCM=1): RUNDIR=DIR KUBECONFIG=DIR/admin.kubeconfig ./record.sh > kcm-1.37.2.txt
# There is no kubelet there: pods are made Running and Ready by hand
# (except the pod lone, left Running and unready); evictions are POSTed with curl to
# print the whole Status (kubectl create --raw prints no causes).
set -euo pipefail
cd "$(dirname "$0")"
source "$RUNDIR/env"
k() { kubectl -n sess "$@"; }
PDBS='{range .items[*]}{.metadata.name} gen={.status.observedGeneration}/{.metadata.generation} expected={.status.expectedPods} desired={.status.desiredHealthy} healthy={.status.currentHealthy} allowed={.status.disruptionsAllowed} disrupted={.status.disruptedPods}{range .status.conditions[*]} [{.type} {.status} {.reason}: {.message} gen={.observedGeneration}]{end}{"\n"}{end}'
UNREADY='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'
mark_ready() {
  k get pods -l 'app!=lone' -o jsonpath="$UNREADY" | while read -r p ready; do
    [ "$ready" = True ] && continue
    k patch pod "$p" --subresource=status --type=merge \
      -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null 2>&1 || true
  done
}
# settle [ready] prints the budgets once they have not changed for 1 s,
# making pods ready meanwhile if asked.
settle() {
  local last="" cur since=$(date +%s%N) deadline=$(( $(date +%s) + 30 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "${2:-}" = ready ] && mark_ready
    cur=$(k get pdb -o jsonpath="$PDBS")
    if [ "$cur" != "$last" ]; then last=$cur; since=$(date +%s%N)
    elif [ $(( ($(date +%s%N) - since) / 1000000 )) -gt 1000 ]; then break; fi
    sleep 0.2
  done
  echo "## $1"; echo "$last"
}
# evict WHAT POD posts an Eviction of POD and prints the answer.
evict() {
  local code
  code=$(curl -s -o /tmp/evict.$$ -w '%{http_code}' --cacert "$RUNDIR/pki/ca.crt" \
    --cert "$RUNDIR/pki/admin.crt" --key "$RUNDIR/pki/admin.key" -X POST -H 'Content-Type: application/json' \
    -d "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$2\"}}" \
    "$SERVER/api/v1/namespaces/sess/pods/$2/eviction")
  echo "evict $1: $code $(jq -r '"\(.status) \(.reason // "") \(.message // "") causes=\([.details.causes[]? | "\(.reason): \(.message)"] | join("; "))"' /tmp/evict.$$)"
  rm -f /tmp/evict.$$
}
# first_ready POD prints the first by name of the Ready pods app=APP.
first_ready() { k get pods -l "app=$1" -o jsonpath="$UNREADY" | awk '$2 == "True" {print $1}' | sort | head -1; }

kubectl create namespace sess >/dev/null
until k get serviceaccount default >/dev/null 2>&1; do sleep 0.1; done
k create deployment web --image=nginx --replicas=3 >/dev/null
k create deployment api --image=nginx --replicas=4 >/dev/null
k create pdb web --selector=app=web --min-available=2 >/dev/null
k create pdb api --selector=app=api --max-unavailable=30% >/dev/null
k create pdb none --selector=app=none --min-available=1 >/dev/null
settle create ready
evict "a web pod" "$(first_ready web)"
settle "web replaced" ready
k patch pdb web --type=merge -p '{"spec":{"minAvailable":3}}' >/dev/null
settle "web minAvailable 3" ready
evict "a web pod" "$(first_ready web)"
evict "an api pod" "$(first_ready api)"
evict "an api pod" "$(first_ready api)"
settle "two api pods evicted"
evict "an api pod" "$(first_ready api)"
settle "api replaced" ready
k create pdb owned --selector=app=owned --max-unavailable=1 >/dev/null
k create configmap owner >/dev/null
sed "s/OWNER_UID/$(k get configmap owner -o jsonpath='{.metadata.uid}')/" owned.yaml | k apply -f - >/dev/null
settle "owned by a configmap" ready
evict "the pod owned by a configmap" owned
k run lone --image=nginx --labels=app=lone >/dev/null
k patch pod lone --subresource=status --type=merge \
  -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}}' >/dev/null
k create pdb lone --selector=app=lone --max-unavailable=1 >/dev/null
settle "lone" ready
evict "the unready unmanaged pod" lone
k patch pdb lone --type=merge -p '{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}' >/dev/null
evict "the unready unmanaged pod, AlwaysAllow" lone
settle "lone evicted" ready
echo "## events"
k get events --field-selector involvedObject.kind=PodDisruptionBudget \
  -o jsonpath='{range .items[*]}{.involvedObject.name} {.source.component} {.type} {.reason}: {.message}{"\n"}{end}' | sort -u
