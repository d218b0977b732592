package sessionstest

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadOnlyView is dir seen through a read-only bind mount, unmounted when
// the test ends: a state dir its user may read but not write (chmod does
// not stop root). A machine that allows no mount skips the test.
func ReadOnlyView(t testing.TB, dir string) string {
	t.Helper()
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o700)
	if err := unix.Mount(dir, ro, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount a read-only view here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ro, unix.MNT_DETACH) })
	if err := unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	return ro
}
