package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Image references are parsed the way the container image reference grammar
// (distribution/reference, as used by upstream's parsers.ParseImageName)
// reads them, only far enough to find the tag: defaulting needs nothing else.
var (
	refComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refDomain    = `(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	refName      = lazyRegexp(`^(?:` + refDomain + `/)?` + refComponent + `(?:/` + refComponent + `)*$`)
	refTag       = lazyRegexp(`^[\w][\w.-]{0,127}$`)
	refDigest    = lazyRegexp(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
	refHexID     = lazyRegexp(`^[a-f0-9]{64}$`)
)

// imageTag returns the tag an image reference resolves to: the explicit tag,
// "latest" when neither tag nor digest is given, and "" for digest-only or
// unparseable references.
func imageTag(image string) string {
	if image == "" || refHexID().MatchString(image) {
		return ""
	}
	name, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && !refDigest().MatchString(digest) {
		return ""
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !refTag().MatchString(tag) {
			return ""
		}
	}
	if len(name) > 255 || !refName().MatchString(name) {
		return ""
	}
	if tag == "" && !hasDigest {
		return "latest"
	}
	return tag
}

// defaultPullPolicy is Always for images that resolve to the "latest" tag and
// IfNotPresent otherwise.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
