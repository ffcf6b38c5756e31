#!/bin/sh
# Records v2_discovery.json from a real kube-apiserver 1.37.2 started by
# /work/shared/tools/kube-apiserver/start.sh RUNDIR (its default flags,
# service-account issuer discovery on):
#
#   ./record_v2.sh RUNDIR
#
# The file holds the paths of its /openapi/v2 that describe discovery
# endpoints (/api/, /apis/, /apis/<group>/, /api/v1/, /apis/<group>/<version>/,
# /version/ and the OpenID ones) and every definition they refer to,
# directly or through other definitions; the whole document is ~4 MB.
set -eu
kubeconfig="$1/admin.kubeconfig"
cd "$(dirname "$0")"
kubectl --kubeconfig "$kubeconfig" get --raw /openapi/v2 | jq -S '
	def refs: [.. | objects | .["$ref"]? // empty | ltrimstr("#/definitions/")] | unique;
	. as $doc
	| def closure($names):
		(($names + ([$names[] | $doc.definitions[.] | refs] | add // [])) | unique) as $more
		| if $more == $names then $names else closure($more) end;
	($doc.paths | with_entries(select(.key | test("^/(api|apis|version|\\.well-known/openid-configuration|openid/v1/jwks)/$|^/api/v1/$|^/apis/[^/]+/([^/]+/)?$")))) as $paths
	| closure($paths | refs) as $names
	| {paths: $paths, definitions: ($doc.definitions | with_entries(select(.key as $k | $names | index($k))))}
' >v2_discovery.json
