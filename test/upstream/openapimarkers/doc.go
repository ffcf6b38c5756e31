// Package openapimarkers derives internal/openapi's marker table (what
// openapi-gen reads from the comments of the k8s.io/api types: enum
// values, +required and +optional, unions, list and map markers) from
// kube-apiserver 1.37.2's generated definitions, checks that the checked-in
// table is current (go test ./openapimarkers -run TestMarkerTableIsCurrent
// -update rewrites it), and compares every k8s.io/api definition of
// admitd's /openapi/v2 and /openapi/v3 documents with upstream's.
package openapimarkers
