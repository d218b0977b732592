package proc

import (
	"fmt"
	"os"
	"syscall"
)

// StartDetached starts argv in a session of its own (setsid), with stdin
// and stdout on /dev/null and stderr to stderr, and names it: it runs on
// whatever becomes of the terminal and the process that started it.
func StartDetached(argv []string, stderr *os.File) (*Ref, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Files: []*os.File{devnull, devnull, stderr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, err
	}
	defer p.Release()
	ref, err := RefOf(p.Pid)
	if err != nil {
		return nil, fmt.Errorf("the process exited at once: %w", err)
	}
	return ref, nil
}
