// Package eventratelimit compares pkg/admission/plugins/eventratelimit with
// upstream's plugin/pkg/admission/eventratelimit: configuration errors, and
// the decisions and 429 errors over sequences of event requests.
package eventratelimit
