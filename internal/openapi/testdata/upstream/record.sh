#!/bin/sh
# Records the files of this folder from a real kube-apiserver 1.37.2
# started by /work/shared/tools/kube-apiserver/start.sh RUNDIR (its
# default flags, service-account issuer discovery on):
#
#   ./record.sh RUNDIR
#
# index.json is its /openapi/v3; every other file is the document of one
# discovery endpoint, /openapi/v3/<path> with "/" written as "_", stored
# byte for byte (the index's hashes are the SHA-512 of these bytes).
set -eu
kubeconfig="$1/admin.kubeconfig"
cd "$(dirname "$0")"
kubectl --kubeconfig "$kubeconfig" get --raw /openapi/v3 >index.json
for p in api apis apis/apps apis/rbac.authorization.k8s.io version .well-known/openid-configuration openid/v1/jwks; do
	kubectl --kubeconfig "$kubeconfig" get --raw "/openapi/v3/$p" >"$(echo "$p" | sed 's|^\.||; s|/|_|g').json"
done
