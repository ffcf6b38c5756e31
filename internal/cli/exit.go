package cli

import "errors"

// ExitError is an error with the process exit status it calls for.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit status for an error Execute returned: an
// ExitError's code, else 1.
func ExitCode(err error) int {
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return 1
}

// usageError marks err as a usage or configuration error (exit status 2).
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: 2, Err: err}
}
