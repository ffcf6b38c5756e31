package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// volumeFile is a file a volume writes, with the source that writes it
// ("" inside a single-source volume).
type volumeFile struct {
	path, source string
}

func (f volumeFile) String() string {
	if f.source == "" {
		return fmt.Sprintf("%q", f.path)
	}
	return fmt.Sprintf("%q (%s)", f.path, f.source)
}

// overlappingPathWarnings: files of one ConfigMap, Secret, DownwardAPI or
// projected volume written at the same path or under one another, and
// projected sources that give nothing.
func overlappingPathWarnings(volumes []corev1.Volume) []string {
	var w []string
	warn := func(v *corev1.Volume, desc string, clashes []string) {
		for _, c := range clashes {
			w = append(w, fmt.Sprintf("volume %q (%s): overlapping paths: %s", v.Name, desc, c))
		}
	}
	for i := range volumes {
		v := &volumes[i]
		if v.ConfigMap != nil && v.ConfigMap.Items != nil {
			warn(v, fmt.Sprintf("ConfigMap %q", v.ConfigMap.Name), pathClashes(keyFiles(v.ConfigMap.Items, "")))
		}
		if v.Secret != nil && v.Secret.Items != nil {
			warn(v, fmt.Sprintf("Secret %q", v.Secret.SecretName), pathClashes(keyFiles(v.Secret.Items, "")))
		}
		if v.DownwardAPI != nil && v.DownwardAPI.Items != nil {
			warn(v, "DownwardAPI", pathClashes(downwardFiles(v.DownwardAPI.Items, "")))
		}
		if v.Projected == nil {
			continue
		}
		// the sources' files are compared with those of the sources
		// before them; an empty source is reported where it stands
		var earlier []volumeFile
		for _, s := range v.Projected.Sources {
			if s == (corev1.VolumeProjection{}) {
				w = append(w, fmt.Sprintf("volume %q (Projected) has no sources provided", v.Name))
				continue
			}
			var clashes []string
			earlier, clashes = addFiles(earlier, projectionFiles(s))
			warn(v, "Projected", clashes)
		}
	}
	return w
}

// projectionFiles are the files one projected source writes, for the
// source kinds upstream compares.
func projectionFiles(s corev1.VolumeProjection) []volumeFile {
	switch {
	case s.ConfigMap != nil && s.ConfigMap.Items != nil:
		return keyFiles(s.ConfigMap.Items, fmt.Sprintf("ConfigMap %q", s.ConfigMap.Name))
	case s.Secret != nil && s.Secret.Items != nil:
		return keyFiles(s.Secret.Items, fmt.Sprintf("Secret %q", s.Secret.Name))
	case s.DownwardAPI != nil && s.DownwardAPI.Items != nil:
		return downwardFiles(s.DownwardAPI.Items, "DownwardAPI")
	case s.ServiceAccountToken != nil:
		return []volumeFile{{s.ServiceAccountToken.Path, "ServiceAccountToken"}}
	case s.ClusterTrustBundle != nil:
		b := s.ClusterTrustBundle
		name := b.SignerName
		if b.Name != nil {
			name = b.Name
		}
		return []volumeFile{{b.Path, fmt.Sprintf("ClusterTrustBundle %q", derefString(name))}}
	case s.PodCertificate != nil:
		var out []volumeFile
		for _, f := range []volumeFile{
			{s.PodCertificate.CertificateChainPath, "PodCertificate chain"},
			{s.PodCertificate.KeyPath, "PodCertificate key"},
			{s.PodCertificate.CredentialBundlePath, "PodCertificate credential bundle"},
		} {
			if f.path != "" {
				out = append(out, f)
			}
		}
		return out
	}
	return nil
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func keyFiles(items []corev1.KeyToPath, source string) []volumeFile {
	out := make([]volumeFile, 0, len(items))
	for _, it := range items {
		out = append(out, volumeFile{it.Path, source})
	}
	return out
}

func downwardFiles(items []corev1.DownwardAPIVolumeFile, source string) []volumeFile {
	out := make([]volumeFile, 0, len(items))
	for _, it := range items {
		out = append(out, volumeFile{it.Path, source})
	}
	return out
}

// pathClashes compares each file with the files before it (addFiles).
func pathClashes(files []volumeFile) []string {
	_, clashes := addFiles(nil, files)
	return clashes
}

// addFiles appends files (trailing slashes dropped) to earlier, comparing
// each with the files before it: "<file> with <earlier file>" for each
// earlier file at the same path, above it or under it. Empty paths clash
// with nothing.
func addFiles(earlier, files []volumeFile) ([]volumeFile, []string) {
	var clashes []string
	for _, f := range files {
		f.path = strings.TrimRight(f.path, "/")
		if f.path != "" {
			for _, e := range earlier {
				if e.path != "" && (strings.HasPrefix(e.path+"/", f.path+"/") || strings.HasPrefix(f.path+"/", e.path+"/")) {
					clashes = append(clashes, fmt.Sprintf("%s with %s", f, e))
				}
			}
		}
		earlier = append(earlier, f)
	}
	return earlier, clashes
}
