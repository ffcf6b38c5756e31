#!/bin/sh
# Records paths.json from a real kube-apiserver 1.37.2 started by
# /work/shared/tools/kube-apiserver/start.sh RUNDIR (its default flags):
#
#   ./record_paths.sh RUNDIR
#
# It holds, of /openapi/v2, the shared parameters and the paths PATHS
# selects, and of the v3 documents of api/v1 and apis/apps/v1 the paths
# PATHS selects and the meta schemas every group-version lists (WatchEvent,
# RawExtension, DeleteOptions, Status): the deprecated watch paths,
# proxies with and without {path}, deletes that answer with the object,
# subresources, a kind served without watch, for a namespaced, a
# cluster-scoped and a grouped resource.
set -eu
kubeconfig="$1/admin.kubeconfig"
cd "$(dirname "$0")"
PATHS='^/api/v1/(watch/)?(namespaces/\{namespace\}/)?configmaps(/\{name\})?$|^/api/v1/(watch/)?namespaces(/\{name\})?$|^/api/v1/(namespaces/\{namespace\}/(pods|services)|nodes)/\{name\}/proxy(/\{path\})?$|^/api/v1/namespaces/\{namespace\}/services/\{name\}$|^/api/v1/namespaces/\{namespace\}/pods/\{name\}/(log|eviction|binding|status)$|^/api/v1/namespaces/\{namespace\}/replicationcontrollers/\{name\}/scale$|^/api/v1/componentstatuses$|^/apis/apps/v1/(watch/)?(namespaces/\{namespace\}/)?deployments(/\{name\})?$'
SCHEMAS='^io\.k8s\.apimachinery\.pkg\.(apis\.meta\.v1\.(WatchEvent|DeleteOptions|Status)|runtime\.RawExtension)$'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kubectl --kubeconfig "$kubeconfig" get --raw /openapi/v2 | jq -S --arg p "$PATHS" '{parameters: .parameters, paths: (.paths | with_entries(select(.key | test($p))))}' >"$tmp/v2"
for doc in api/v1 apis/apps/v1; do
	kubectl --kubeconfig "$kubeconfig" get --raw "/openapi/v3/$doc" | jq -S --arg p "$PATHS" --arg s "$SCHEMAS" \
		'{paths: (.paths | with_entries(select(.key | test($p)))), schemas: (.components.schemas | with_entries(select(.key | test($s))))}' >"$tmp/$(echo "$doc" | tr / _)"
done
jq -n -S -c --slurpfile v2 "$tmp/v2" --slurpfile core "$tmp/api_v1" --slurpfile apps "$tmp/apis_apps_v1" \
	'{v2: $v2[0], v3: {"api/v1": $core[0], "apis/apps/v1": $apps[0]}}' >paths.json
