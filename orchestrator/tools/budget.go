package tools

import "encoding/json"

// Bounds of the answers that list workers: a model's client takes a tool's
// answer whole into its context, and some refuse one past a limit (tens of
// kilobytes), so an answer naming 1,000 workers, or 20,000 files, would be
// lost or cost the model its context. What is left out is counted, and the
// answer says how to see it.
const (
	listAnswerBytes = 30000
	waitAnswerBytes = 40000
	filesShown      = 200
)

// budget spends an answer's bytes on its entries, in order.
type budget struct{ left int }

// take reports whether entry fits what is left, and spends its size if so.
func (b *budget) take(entry any) bool {
	j, _ := json.Marshal(entry)
	if len(j)+1 > b.left {
		b.left = 0 // later entries are left out too: the answer keeps its order
		return false
	}
	b.left -= len(j) + 1
	return true
}
