package openapi

import (
	"slices"

	"github.com/admitd/admitd/internal/registry"
)

// The documents of the endpoints outside the group-versions: legacy and
// group discovery, /version and the service-account issuer's OpenID
// endpoints. kube-apiserver publishes one document per endpoint, under the
// endpoint's path, each describing its single GET.

// Index paths of the discovery documents that do not depend on the served
// groups.
const (
	legacyVersionsPath = "api"
	groupListPath      = "apis"
	versionPath        = "version"
	openIDConfigPath   = ".well-known/openid-configuration"
	openIDKeySetPath   = "openid/v1/jwks"
)

const (
	apiVersionsModel  = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions"
	apiGroupListModel = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList"
	apiGroupModel     = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup"
	versionInfoModel  = "io.k8s.apimachinery.pkg.version.Info"
)

// discoveryModels are the upstream definitions the discovery documents
// refer to.
var discoveryModels = []string{apiVersionsModel, apiGroupListModel, apiGroupModel, versionInfoModel}

// discoveryPaths returns the index paths of the discovery documents of a
// set of resources: the fixed ones, the OpenID ones when openID, and
// apis/<group> for every group with a built-in resource (custom resources'
// groups have none, as apiextensions-apiserver publishes none).
func discoveryPaths(resources []*registry.Resource, openID bool) []string {
	paths := []string{legacyVersionsPath, groupListPath, versionPath}
	if openID {
		paths = append(paths, openIDConfigPath, openIDKeySetPath)
	}
	for _, res := range resources {
		if res.Group == "" || res.Unstructured {
			continue
		}
		if p := groupListPath + "/" + res.Group; !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// discoveryDocRoute returns the GET a discovery document describes, by the
// document's index path. The media types it consumes show only in
// /openapi/v2 (a v3 GET has no request body to describe).
func discoveryDocRoute(indexPath string) route {
	jsonOnly := []string{mediaJSON}
	switch indexPath {
	case legacyVersionsPath:
		return discoveryGet(indexPath, "getAPIVersions", "get available API versions", apiVersionsModel, mediaTypes, mediaTypes)
	case groupListPath:
		return discoveryGet(indexPath, "getAPIVersions", "get available API versions", apiGroupListModel, mediaTypes, mediaTypes)
	case versionPath:
		return discoveryGet(indexPath, "getCodeVersion", "get the version information for this server", versionInfoModel, jsonOnly, jsonOnly)
	case openIDConfigPath:
		return discoveryGet(indexPath, "getServiceAccountIssuerOpenIDConfiguration",
			"get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'", "", jsonOnly, noMedia)
	case openIDKeySetPath:
		return discoveryGet(indexPath, "getServiceAccountIssuerOpenIDKeyset",
			"get service account issuer OpenID JSON Web Key Set (contains public token verification keys)", "", []string{"application/jwk-set+json"}, noMedia)
	}
	return discoveryGet(indexPath, "getAPIGroup", "get information of a group", apiGroupModel, mediaTypes, mediaTypes)
}

func discoveryGet(indexPath, op, desc, model string, produces, consumes []string) route {
	r := route{path: "/" + indexPath + "/", method: "get", desc: desc,
		responses: []response{{code: 200, desc: "OK", model: model}}, produces: produces, consumes: consumes}
	r.opID, r.tag = operationID(op, r.path)
	return r
}
