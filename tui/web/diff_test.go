package web

import "testing"

func TestSplitDiff(t *testing.T) {
	patch := "diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n" +
		"diff --git a/dir/b c.txt b/dir/b c.txt\nnew file mode 100644\n--- /dev/null\n+++ b/dir/b c.txt\n@@ -0,0 +1 @@\n+diff --git inside\n" +
		"diff --git a/gone.bin b/gone.bin\ndeleted file mode 100644\nBinary files a/gone.bin and /dev/null differ\n"
	files := splitDiff(patch)
	if len(files) != 3 || files[0].Path != "a.go" || files[1].Path != "dir/b c.txt" || files[2].Path != "gone.bin" {
		t.Fatalf("%+v", files)
	}
	whole := ""
	for _, f := range files {
		whole += f.Patch
	}
	if whole != patch {
		t.Fatalf("the parts do not make the whole:\n%q\nwant\n%q", whole, patch)
	}
}
