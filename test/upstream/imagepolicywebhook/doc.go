// Package imagepolicywebhook holds a differential test of admitd's
// ImagePolicyWebhook admission plugin against upstream's
// (plugin/pkg/admission/imagepolicy of k8s.io/kubernetes v1.37.2): both
// plugins call the same real HTTPS backend on 127.0.0.1 (client
// certificate and CA from the same kubeconfig), which answers both with
// the same script, over upstream's own test tables and generated requests
// and answers; they must build and fail to build alike, and reach the same
// decision with the same status and message, send the same review bytes,
// record the same audit annotations and leave the same pod annotations. It
// has no non-test code.
package imagepolicywebhook
