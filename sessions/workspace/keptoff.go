package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
)

// KeptOff lists the commits zwarm kept of the worker's turns on branch
// (under keepRefs) that none of holders reaches: a turn's work the worker
// moved its branch off (git reset) and no landing took. Empty holders are
// left out, as are those the repository lacks; a repository that is gone
// keeps nothing.
func KeptOff(ctx context.Context, commonDir, branch string, holders ...string) (map[string]bool, error) {
	if _, err := os.Stat(commonDir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	args := []string{"rev-list", "--ignore-missing", "--glob=" + keepRefs(branch) + "*", "--not"}
	for _, h := range holders {
		if h != "" {
			args = append(args, h)
		}
	}
	out, err := git{dir: commonDir}.run(ctx, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	off := map[string]bool{}
	for _, c := range strings.Fields(out) {
		off[c] = true
	}
	return off, nil
}
