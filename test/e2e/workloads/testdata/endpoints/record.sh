#!/bin/bash
# Records the endpoints session on the real kube-apiserver + kcm.
set -u
K="kubectl --kubeconfig /tmp/endpoints-kas/admin.kubeconfig"
OUT=/tmp/endpoints-rec/out; rm -rf $OUT; mkdir -p $OUT
$K create ns sess
until $K -n sess get sa default >/dev/null 2>&1; do sleep 0.2; done
for i in 1 2; do
$K create -f - <<EON
{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-$i","labels":{"kubernetes.io/hostname":"node-$i","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}}
EON
done
n=0
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
kubelet() { # bind unbound pods, make the new ones Running and Ready
  for p in $($K -n sess get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk 'NF==1{print $1}'); do
    n=$((n+1)); node=node-$(( (n % 2) + 1 ))
    echo "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$p\"},\"target\":{\"kind\":\"Node\",\"name\":\"$node\"}}" | $K create --raw /api/v1/namespaces/sess/pods/$p/binding -f - >/dev/null
    ip=10.244.$(( (n % 2) + 1 )).$(( n + 1 ))
    $K -n sess patch pod $p --subresource=status --type=merge -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$ip\",\"podIPs\":[{\"ip\":\"$ip\"}],\"hostIP\":\"192.0.2.$(( (n % 2) + 2 ))\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$(now)\"},{\"type\":\"Initialized\",\"status\":\"True\",\"lastTransitionTime\":\"$(now)\"},{\"type\":\"ContainersReady\",\"status\":\"True\",\"lastTransitionTime\":\"$(now)\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$(now)\"}]}}" >/dev/null
  done
}
snap() { # step name
  sleep 3
  $K -n sess get endpointslices,endpoints > $OUT/$1.table.txt 2>&1
  $K -n sess get endpointslices -o json > $OUT/$1.endpointslices.json
  $K -n sess get endpoints -o json > $OUT/$1.endpoints.json 2>/dev/null
  $K -n sess get pods -o json > $OUT/$1.pods.json
}
$K -n sess create deployment web --image=nginx --replicas=2 --port=80
$K -n sess expose deployment web --port=80
$K -n sess expose deployment web --name=web-headless --cluster-ip=None --port=80
sleep 2; kubelet; snap 1-created
$K -n sess scale deployment web --replicas=3
sleep 2; kubelet; snap 2-scaled-up
p=$($K -n sess get pods -o jsonpath='{.items[0].metadata.name}')
$K -n sess patch pod $p --subresource=status --type=strategic -p '{"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"'$(now)'"},{"type":"ContainersReady","status":"False","lastTransitionTime":"'$(now)'"}]}}'
snap 3-unready
$K -n sess scale deployment web --replicas=1
sleep 2; snap 4-scaled-down
for p in $($K -n sess get pods -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}'); do $K -n sess delete pod $p --grace-period=0 --force; done
snap 5-terminated
$K -n sess delete svc web-headless
snap 6-service-deleted
$K -n sess get events -o json > $OUT/events.json
