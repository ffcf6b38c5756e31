package server

import (
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"k8s.io/klog/v2"
)

// debugFlagRoutes are kube-apiserver's /debug/flags, served beside the
// profiles: an index of the flags a running server lets its
// administrators change, and /debug/flags/v, where a PUT of a number
// sets the klog verbosity (of the libraries that log through klog) and,
// when level is not nil, admitd's own log level (4 and above: debug, as
// the Kubernetes logging conventions read V(4)).
func debugFlagRoutes(level *slog.LevelVar) map[string]http.Handler {
	index := http.HandlerFunc(debugFlagsIndex)
	return map[string]http.Handler{
		"/debug/flags":   index,
		"/debug/flags/":  index,
		"/debug/flags/v": verbosityHandler(level),
	}
}

func debugFlagsIndex(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintf(w, "<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\nflags:<br>\n<table>\n"+
		"<tr>%s<br>\n</table>\n<br>\nfull flags configurable<br>\n</body>\n</html>\n", html.EscapeString("v"))
}

// maxVerbosityBody bounds what a PUT to /debug/flags/v is read of: a
// number is a few bytes.
const maxVerbosityBody = 1 << 10

func verbosityHandler(level *slog.LevelVar) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			writeFlagAnswer(w, http.StatusNotAcceptable, "unsupported http method")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxVerbosityBody))
		if err != nil {
			writeFlagAnswer(w, http.StatusBadRequest, "error reading request body: "+err.Error())
			return
		}
		answer, err := setVerbosity(string(body), level)
		if err != nil {
			writeFlagAnswer(w, http.StatusBadRequest, err.Error())
			return
		}
		writeFlagAnswer(w, http.StatusOK, answer)
	})
}

// setVerbosity sets the log verbosity to val, a number as klog's -v.
func setVerbosity(val string, level *slog.LevelVar) (string, error) {
	v, err := strconv.ParseUint(val, 10, 32)
	if err != nil {
		return "", err
	}
	var klogLevel klog.Level
	if err := klogLevel.Set(val); err != nil {
		return "", fmt.Errorf("failed set klog.logging.verbosity %s: %v", val, err)
	}
	if level != nil {
		level.Set(slogLevel(v))
	}
	return "successfully set klog.logging.verbosity to " + val, nil
}

// slogLevel is admitd's log level for a klog verbosity.
func slogLevel(v uint64) slog.Level {
	if v >= 4 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func writeFlagAnswer(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, text)
}
