// Package conversion holds differential tests of internal/conversion, the
// CRD conversion webhook client, against apiextensions-apiserver's webhook
// converter (k8s.io/apiextensions-apiserver v0.37.2): the requests both
// send to the same webhook for the same definitions and objects, what they
// make of its answers, and their errors for bad answers. It has no
// non-test code.
package conversion
