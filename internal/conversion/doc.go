// Package conversion converts custom resources between the versions of
// their definition, as apiextensions-apiserver does: strategy None
// relabels apiVersion, strategy Webhook sends a ConversionReview
// (apiextensions.k8s.io/v1 or v1beta1, the first of the definition's
// conversionReviewVersions this server speaks) to the definition's
// conversion webhook and checks its answer as upstream does, with
// upstream's error messages.
//
// NewFactory's ConverterFor is the registry.ConverterFactory the server
// installs in its catalogue; every read, write, watch event and admission
// conversion of a custom resource goes through the converter it builds.
package conversion
