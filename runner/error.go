package runner

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Exit statuses of tmac run and tmac tune, carried by Error.
const (
	StatusFailed   = 1 // a failed check, compilation or launch
	StatusUsage    = 2 // bad options or arguments
	StatusNoDevice = 3 // no usable GPU
)

// Error is why a run did not succeed: the exit status tmac gives it and
// what to report, in order. Errs holds diagnostics (any other error is
// reported as a diagnostic without a location, "error: ..."), lines of
// the command (Messagef: "tmac run: error: ...") and input read failures
// ("tmac: error: ..."). A failed check has no Errs: its report says why.
type Error struct {
	Status  int
	Errs    []error
	Sources *ir.SourceMgr // renders the diagnostics' source lines
}

func (e *Error) Error() string {
	if len(e.Errs) == 0 {
		return fmt.Sprintf("exit status %d", e.Status)
	}
	var parts []string
	for _, err := range e.Errs {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "; ")
}

// Report writes e's messages to w as the command cmd ("tmac run")
// reports them.
func (e *Error) Report(w io.Writer, cmd string) {
	for _, err := range e.Errs {
		var m *message
		var r *readError
		switch {
		case errors.As(err, &m):
			fmt.Fprintf(w, "%s: error: %s\n", cmd, m.text)
		case errors.As(err, &r):
			fmt.Fprintln(w, "tmac: error:", r.err)
		default:
			for _, d := range ir.AsDiagnostics(err) {
				fmt.Fprint(w, d.Render(e.Sources))
			}
		}
	}
}

// message is an error reported as a line of the command's own.
type message struct{ text string }

func (m *message) Error() string { return m.text }

// Messagef makes an error that Error.Report writes as a line of the
// command's own ("tmac tune build: error: ...") rather than as a
// diagnostic.
func Messagef(format string, args ...any) error {
	return &message{fmt.Sprintf(format, args...)}
}

// readError is an input that could not be read.
type readError struct{ err error }

func (r *readError) Error() string { return r.err.Error() }

// usage makes a usage error (exit status 2).
func usage(format string, args ...any) *Error {
	return &Error{Status: StatusUsage, Errs: []error{Messagef(format, args...)}}
}

// failed makes an error of exit status 1 reporting errs.
func failed(sm *ir.SourceMgr, errs ...error) *Error {
	return &Error{Status: StatusFailed, Errs: errs, Sources: sm}
}
