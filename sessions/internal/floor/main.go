// Command floor is the yardstick of `zwarm ls`: the least a listing can do
// without a cache, reading and decoding every sessions/*/meta.json of a
// state dir, and printing one line per session.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := filepath.Join(os.Args[1], "sessions")
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "meta.json"))
		if err != nil {
			continue
		}
		var s struct {
			ID, Task, Status, Model string
		}
		if json.Unmarshal(data, &s) == nil {
			fmt.Fprintf(out, "%s\t%s\t%s\t%s\n", s.ID, s.Status, s.Model, s.Task)
		}
	}
}
