#!/usr/bin/env bash
# sidebyside-servicecidr.sh — admitd's service-cidr-controller beside the real
# kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), both with
# --service-cluster-ip-range=127.1.0.0/24, one session against each at once: ServiceCIDRs "extra"
# (127.2.0.0/24, holding Service web's 127.2.0.10), "empty" (127.3.0.0/24) and "inner"
# (127.1.0.0/28, inside the default range, holding Service in's 127.1.0.5) and "refused", whose
# status a ValidatingAdmissionPolicy refuses (the controller's warning event); the first three
# deleted; then
# "wide" (127.2.0.0/16) created, which covers extra's address; then wide deleted and Service web
# after it. After each step each server's ServiceCIDRs (finalizers, being deleted or not, Ready
# conditions without times, field managers; kube-apiserver's own Ready of the default ServiceCIDR
# without lastTransitionTime, which it co-owns only when its apply and the controller's fall in one
# second, as admitd's do at start) and their events are printed normalised and diffed;
# the exit status is diff's. Needs the tools built with KCM=1. Light; about a minute and a half
# (the controller keeps a deleted ServiceCIDR's finalizer for 10 s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
GRACE=${GRACE:-13} # the controller's 10 s deletion grace period, and some
OUT=$(mktemp -d /tmp/sidebyside-servicecidr.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" \
  --service-cluster-ip-range=127.1.0.0/24 > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

cidr() { # name cidr
  printf -- '---\napiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: %s}\nspec: {cidrs: [%s]}\n' "$1" "$2"
}

# service KUBECTL... name ip: a ClusterIP Service of ip, retried while the
# allocator has not heard of the ServiceCIDR yet
service() {
  local ip=${*: -1} name=${*: -2:1} k=("${@:1:$#-2}")
  for _ in $(seq 1 50); do
    "${k[@]}" create service clusterip "$name" --tcp=80 --clusterip="$ip" > /dev/null 2>&1 && return
    sleep 0.2
  done
  "${k[@]}" create service clusterip "$name" --tcp=80 --clusterip="$ip"
}

view() { # kubeconfig step
  local k=(kubectl --kubeconfig "$1")
  echo "## $2"
  "${k[@]}" get servicecidrs -o json --show-managed-fields | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin)["items"], key=lambda s: s["metadata"]["name"]):
    m = s["metadata"]
    print("servicecidr", m["name"], s["spec"]["cidrs"], "finalizers", m.get("finalizers", []), "deleting" if m.get("deletionTimestamp") else "")
    for c in sorted(s.get("status", {}).get("conditions", []), key=lambda c: c["type"]):
        print("  condition", c["type"], c["status"], repr(c.get("reason", "")), "|", c.get("message", ""))
    for f in sorted(m.get("managedFields", []), key=lambda f: (f["manager"], f["operation"], f.get("subresource", ""))):
        fields = f.get("fieldsV1")
        if f["manager"] == "kubernetes-service-cidr-controller":
            # the Ready of kube-apiserver and the forced one of the controller share
            # lastTransitionTime when both fall in the same second (admitd: at start), not
            # when the controller manager comes seconds later: who co-owns it is timing
            fields["f:status"]["f:conditions"]["k:{\"type\":\"Ready\"}"].pop("f:lastTransitionTime", None)
        print("  manager", f["manager"], f["operation"], f.get("subresource", ""), json.dumps(fields, sort_keys=True))'
  "${k[@]}" get events -n default --field-selector involvedObject.kind=ServiceCIDR -o json | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    src = e.get("source", {}).get("component") or e.get("reportingComponent", "")
    seen.add(" ".join(["event", e.get("type", ""), e["reason"], o.get("name", ""), src, "|", e.get("message", "")]))
print("\n".join(sorted(seen)))'
}

# refuseStatus: a policy refusing every write of the status of the ServiceCIDR "refused", so that
# the controller cannot make it Ready
refuseStatus() {
  cat <<EOF
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: refuse-servicecidr-status}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [networking.k8s.io], apiVersions: ["*"], operations: [UPDATE], resources: [servicecidrs/status]}
  validations:
  - {expression: 'object.metadata.name != "refused"', message: status writes are refused}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: refuse-servicecidr-status}
spec: {policyName: refuse-servicecidr-status, validationActions: [Deny]}
EOF
}

# session KUBECONFIG VIEWFILE: the steps, each followed by a view
session() {
  local k=(kubectl --kubeconfig "$1") v=$2
  until "${k[@]}" get servicecidr kubernetes -o jsonpath='{.metadata.finalizers}' 2>/dev/null | grep -q service-cidr-finalizer; do sleep 0.5; done
  refuseStatus | "${k[@]}" create -f - > /dev/null
  sleep 2 # kube-apiserver's policies take effect within a second
  { cidr extra 127.2.0.0/24; cidr empty 127.3.0.0/24; cidr inner 127.1.0.0/28; cidr refused 127.4.0.0/24; } | "${k[@]}" create -f - > /dev/null
  service "${k[@]}" web 127.2.0.10
  service "${k[@]}" in 127.1.0.5
  sleep 3
  view "$1" "created" >> "$v"
  "${k[@]}" delete servicecidr extra empty inner --wait=false > /dev/null
  sleep 3
  view "$1" "deleted, within the grace period" >> "$v"
  sleep "$GRACE"
  view "$1" "deleted, after the grace period" >> "$v"
  cidr wide 127.2.0.0/16 | "${k[@]}" create -f - > /dev/null
  sleep 3
  view "$1" "wide created" >> "$v"
  "${k[@]}" delete servicecidr wide --wait=false > /dev/null
  sleep "$GRACE"
  view "$1" "wide deleted" >> "$v"
  "${k[@]}" delete service web > /dev/null
  sleep 3
  view "$1" "web deleted" >> "$v"
}

until kubectl --kubeconfig "$OUT/kas/admin.kubeconfig" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
session "$OUT/admitd.kubeconfig" "$OUT/admitd.view" &
SA=$!
session "$OUT/kas/admin.kubeconfig" "$OUT/kube.view" &
SK=$!
wait $SA $SK
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
