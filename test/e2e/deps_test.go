package e2e

// The tests run the admitd binary they build; importing its command makes
// `go test` re-run them whenever admitd's sources change, instead of
// reporting a cached result.
import _ "github.com/admitd/admitd/internal/cli"
