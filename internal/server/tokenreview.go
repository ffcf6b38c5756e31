package server

import (
	"log/slog"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// tokenReviewer answers TokenReview for the tokens of --token-auth-file,
// valid for the issuer's API audiences; nil without a token file. (The API
// server then tries Config.ServiceAccountAuthenticators.) The file
// is read again (quietly: newAuthenticator already warned about it).
func tokenReviewer(o Options, issuer *serviceaccount.Issuer) (auth.AudienceTokenAuthenticator, error) {
	if o.TokenAuthFile == "" {
		return nil, nil
	}
	tokens, err := auth.LoadTokenFile(o.TokenAuthFile, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	return auth.AudienceAgnostic(tokens, issuer.Audiences), nil
}
