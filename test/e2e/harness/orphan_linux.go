package harness

import (
	"os/exec"
	"syscall"
)

// dieWithTests makes cmd's process get SIGKILL when the test binary exits,
// even by go test's timeout panic, which runs no cleanup: an orphaned
// server would keep its ports and whatever file locks it inherited.
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
