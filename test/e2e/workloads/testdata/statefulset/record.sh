#!/bin/bash
# Records the StatefulSet session of test/e2e/statefulset_test.go on a
# real kube-apiserver + kube-controller-manager 1.37.2 (start.sh with
# KCM=1): KUBECONFIG=RUNDIR/admin.kubeconfig ./record.sh > kcm-1.37.2.txt
# There is no kubelet there: every pod is made Running and Ready by hand.
set -euo pipefail
cd "$(dirname "$0")"
k() { kubectl -n sess "$@"; }
STS='{.status.replicas}/{.status.readyReplicas}/{.status.currentReplicas}/{.status.updatedReplicas}/{.status.availableReplicas} current={.status.currentRevision} update={.status.updateRevision} collisions={.status.collisionCount} observed={.status.observedGeneration}/{.metadata.generation}{"\n"}'
PODS='{range .items[*]}pod {.metadata.name} generateName={.metadata.generateName} labels={.metadata.labels} hostname={.spec.hostname} subdomain={.spec.subdomain} claims={.spec.volumes[*].persistentVolumeClaim.claimName} owner={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name} image={.spec.containers[0].image}{"\n"}{end}'
PVCS='{range .items[*]}pvc {.metadata.name} labels={.metadata.labels} owners={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name} controller={.metadata.ownerReferences[*].controller}{"\n"}{end}'
REVS='{range .items[*]}revision {.metadata.name} {.revision} labels={.metadata.labels} owner={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name}{"\n"}{end}'
state() {
  k get statefulset web -o jsonpath="$STS"
  k get pods -o jsonpath="$PODS"
  k get pvc -o jsonpath="$PVCS"
  k get controllerrevisions -o jsonpath="$REVS"
}
mark_ready() {
  for p in $(k get pods -o name); do
    k patch "$p" --subresource=status --type=merge \
      -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null 2>&1 || true
  done
}
settle() {
  local last="" cur since=$(date +%s%N) deadline=$(( $(date +%s) + 60 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    mark_ready
    cur=$(state)
    if [ "$cur" != "$last" ]; then last=$cur; since=$(date +%s%N)
    elif [ $(( ($(date +%s%N) - since) / 1000000 )) -gt 2000 ]; then break; fi
    sleep 0.25
  done
  echo "## $1"; echo "$last"
}
kubectl create namespace sess >/dev/null
until k get serviceaccount default >/dev/null 2>&1; do sleep 0.1; done
k apply -f web.yaml >/dev/null; settle create
k scale statefulset web --replicas=5 >/dev/null; settle "scale up"
k scale statefulset web --replicas=2 >/dev/null; settle "scale down"
k set image statefulset/web nginx=nginx:1.27 >/dev/null; settle "set image"
k rollout status statefulset/web --timeout=60s
k rollout history statefulset/web
k rollout undo statefulset/web >/dev/null; settle undo
echo "## events"
k get events --field-selector involvedObject.kind=StatefulSet,involvedObject.name=web \
  -o jsonpath='{range .items[*]}{.source.component} {.type} {.reason}: {.message}{"\n"}{end}' | sort -u
