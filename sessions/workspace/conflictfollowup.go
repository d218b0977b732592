package workspace

import (
	"fmt"
	"strings"
)

// ConflictFollowUp asks the worker to resolve an update's conflicts.
func ConflictFollowUp(from, tip string, files []string) string {
	return fmt.Sprintf("zwarm merged %s (now at %s) into your branch, and these files conflict: %s. "+
		"Resolve the conflicts in them, keeping what both sides meant, and mark each file resolved (git add, or git rm for a deletion); "+
		"check that the code still builds and its tests pass. zwarm commits the result, concluding the merge, when you finish.",
		from, Abbrev(tip), strings.Join(files, ", "))
}
