#!/usr/bin/env bash
# sidebyside-resourceclaim.sh — admitd's resourceclaim-controller beside the real
# kube-controller-manager 1.37.2 (../shared/tools/kube-apiserver with KCM=1), one session against
# each at once: a DeviceClass and a ResourceClaimTemplate "gpu-template"; pod "web" whose claim
# "gpu" is made from it and pod "late" whose template "later-template" does not exist yet (the
# controller's warning event), then that template created; a user's claim "shared", allocated and
# reserved for pod "user" (as a scheduler would), then "user" deleted (the reservation,
# allocation and finalizer go); web's claim allocated and reserved for it, then web succeeded
# (its claim released and deleted); late deleted (its claim goes with it, by the garbage
# collector). There is no scheduler: nothing is allocated but by the session. After each step
# each server's claims (generated names cut to their generateName, owners, labels,
# annotations, finalizers, allocation, reservations), the pods' resourceClaimStatuses and the
# status managers, and the controller's events are printed normalised and diffed; the exit
# status is diff's. Needs the tools built with KCM=1. Light; about a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS=${TOOLS:-$(cd "$ROOT/../shared/tools" && pwd)}
WAIT=${WAIT:-4} # what the controllers take to act, and some
OUT=$(mktemp -d /tmp/sidebyside-resourceclaim.XXXX)
(cd "$ROOT" && go build -o "$OUT/admitd" ./cmd/admitd)
KCM=1 "$TOOLS/kube-apiserver/start.sh" "$OUT/kas" > "$OUT/start.log" 2>&1
"$OUT/admitd" serve --secure-port=0 --data-dir="$OUT/admitd-data" --kubeconfig-out="$OUT/admitd.kubeconfig" \
  > "$OUT/admitd.log" 2>&1 &
APID=$!
trap 'kill $APID 2>/dev/null; "$TOOLS/kube-apiserver/stop.sh" "$OUT/kas" >/dev/null 2>&1' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/admitd.kubeconfig" ] && break; sleep 0.2; done
echo "results and logs in $OUT"

template() { # name
  cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: default}
spec:
  metadata:
    labels: {kind: gpu}
    annotations: {note: from-the-template}
  spec:
    devices:
      requests:
      - {name: req, exactly: {deviceClassName: gpu.example.com}}
EOF
}

setup() {
  printf -- '---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n'
  template gpu-template
}

pod() { # name claim-source: "resourceClaimTemplateName: X" or "resourceClaimName: X"
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  containers:
  - {name: c, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, $2}
EOF
}

# allocate KUBECTL... claim pod: the scheduler's part, the delete-protection finalizer, an
# allocation and a reservation for pod
allocate() {
  local pod=${*: -1} claim=${*: -2:1} k=("${@:1:$#-2}") uid
  uid=$("${k[@]}" get pod "$pod" -o jsonpath='{.metadata.uid}')
  "${k[@]}" patch resourceclaim "$claim" --type=merge -p '{"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}}' > /dev/null
  "${k[@]}" patch resourceclaim "$claim" --subresource=status --type=merge -p '{"status":{
    "allocation":{"devices":{"results":[{"request":"req","driver":"gpu.example.com","pool":"pool","device":"gpu-0"}]}},
    "reservedFor":[{"resource":"pods","name":"'"$pod"'","uid":"'"$uid"'"}]}}' > /dev/null
}

# generated KUBECTL... pod: the claim pod's status names
generated() {
  local pod=${*: -1} k=("${@:1:$#-1}")
  "${k[@]}" get pod "$pod" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'
}

view() { # kubeconfig step
  local k=(kubectl --kubeconfig "$1")
  echo "## $2"
  "${k[@]}" get resourceclaims -n default -o json | python3 -c '
import json, re, sys
def cut(name, gen):
    return gen + "*" if gen else name
for c in sorted(json.load(sys.stdin)["items"], key=lambda c: cut(c["metadata"]["name"], c["metadata"].get("generateName"))):
    m, st = c["metadata"], c.get("status", {})
    print("claim", cut(m["name"], m.get("generateName")), "deleting" if m.get("deletionTimestamp") else "")
    for o in m.get("ownerReferences", []):
        print("  owner", o["apiVersion"], o["kind"], o["name"], "controller", o.get("controller"), "blockOwnerDeletion", o.get("blockOwnerDeletion"))
    print("  labels", json.dumps(m.get("labels", {}), sort_keys=True), "annotations", json.dumps(m.get("annotations", {}), sort_keys=True))
    print("  finalizers", m.get("finalizers", []), "allocated" if st.get("allocation") else "unallocated",
          "reservedFor", [r["resource"] + "/" + r["name"] for r in st.get("reservedFor", [])])
    print("  spec", json.dumps(c["spec"], sort_keys=True))'
  "${k[@]}" get pods -n default -o json --show-managed-fields | python3 -c '
import json, re, sys
for p in sorted(json.load(sys.stdin)["items"], key=lambda p: p["metadata"]["name"]):
    m, st = p["metadata"], p.get("status", {})
    claims = [(s["name"], re.sub(r"-[a-z0-9]{5}$", "-*", s.get("resourceClaimName", "")) if s.get("resourceClaimName") else None)
              for s in st.get("resourceClaimStatuses", [])]
    print("pod", m["name"], st.get("phase"), "resourceClaimStatuses", claims)
    for f in sorted(m.get("managedFields", []), key=lambda f: (f["manager"], f["operation"], f.get("subresource", ""))):
        if f.get("subresource") == "status" and "f:resourceClaimStatuses" in json.dumps(f.get("fieldsV1")):
            print("  manager", f["manager"], f["operation"], f.get("subresource", ""), json.dumps(f["fieldsV1"], sort_keys=True))'
  "${k[@]}" get events -n default -o json | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    src = e.get("source", {}).get("component") or e.get("reportingComponent", "")
    if src != "resource_claim":
        continue
    seen.add(" ".join(["event", e.get("type", ""), e["reason"], o.get("kind", ""), o.get("name", ""), src, "|", e.get("message", "")]))
print("\n".join(sorted(seen)))'
}

# session KUBECONFIG VIEWFILE: the steps, each followed by a view
session() {
  local k=(kubectl --kubeconfig "$1") v=$2 claim
  until "${k[@]}" get serviceaccount default -n default > /dev/null 2>&1; do sleep 0.5; done
  setup | "${k[@]}" create -f - > /dev/null
  { pod web "resourceClaimTemplateName: gpu-template"; pod late "resourceClaimTemplateName: later-template"; } | "${k[@]}" create -f - > /dev/null
  sleep "$WAIT"
  view "$1" "web and late created" >> "$v"
  template later-template | "${k[@]}" create -f - > /dev/null
  sleep "$WAIT"
  view "$1" "later-template created" >> "$v"
  printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: default}\nspec: {devices: {requests: [{name: req, exactly: {deviceClassName: gpu.example.com}}]}}\n' |
    "${k[@]}" create -f - > /dev/null
  pod user "resourceClaimName: shared" | "${k[@]}" create -f - > /dev/null
  allocate "${k[@]}" shared user
  sleep "$WAIT"
  view "$1" "shared allocated and reserved for user" >> "$v"
  "${k[@]}" delete pod user --wait=false > /dev/null
  sleep "$WAIT"
  view "$1" "user deleted" >> "$v"
  claim=$(generated "${k[@]}" web)
  allocate "${k[@]}" "$claim" web
  sleep "$WAIT"
  view "$1" "web's claim allocated and reserved for web" >> "$v"
  "${k[@]}" patch pod web --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' > /dev/null
  sleep "$WAIT"
  view "$1" "web succeeded" >> "$v"
  "${k[@]}" delete pod late --wait=false > /dev/null
  sleep "$WAIT"
  view "$1" "late deleted" >> "$v"
}

session "$OUT/admitd.kubeconfig" "$OUT/admitd.view" &
SA=$!
session "$OUT/kas/admin.kubeconfig" "$OUT/kube.view" &
SK=$!
wait $SA $SK
echo "== kube-apiserver + kube-controller-manager 1.37.2"
cat "$OUT/kube.view"
echo "== diff (kube-controller-manager's <, admitd's >)"
diff "$OUT/kube.view" "$OUT/admitd.view"
