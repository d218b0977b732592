package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A LandSpec is a worker's change on its way into a branch: what Plan
// checks, without changing anything.
type LandSpec struct {
	// Who names the change in errors ("1a2b3c4d"), and in the commands
	// they suggest.
	Who string
	// Worktree is the worker's; GitDir the repository's.
	Worktree *Worktree
	GitDir   string
	// From..Head is the change. With Pending, the worktree holds work
	// Head lacks: it is measured as a commit of what the worktree holds,
	// made as the landing will make it, on no ref.
	From, Head string
	Pending    bool
	Target     Target
	Strategy   Strategy
}

// A LandPlan is what a landing would make, checked: the tree it gives the
// target branch, and how it gets there.
type LandPlan struct {
	// Head is the change's last commit (a snapshot of the worktree when
	// the spec was Pending: Uncommitted).
	Head        string
	Uncommitted bool
	Files       []FileStat
	Stat        Stat
	// Empty is a change of nothing; InBranch one the target has already
	// (landed by hand, or by another worker's same change).
	Empty, InBranch bool
	// Tree is the target's tree with the change; FromBranch says it was
	// merged three way from a commit the branch has, not applied alone.
	Tree       string
	FromBranch bool
}

// OverlapError is a landing that would overwrite uncommitted work in the
// checkout that has the target branch: nothing was changed.
type OverlapError struct {
	Checkout string
	Files    []string
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%s has uncommitted changes to %s", e.Checkout, strings.Join(e.Files, ", "))
}

// PlanLanding checks what landing sp would do and makes its tree in
// memory (git merge-tree, or the change applied three way): nothing in the
// repository changes but objects. A conflict is a *ConflictError; a
// checkout the landing would overwrite, an *OverlapError.
func PlanLanding(ctx context.Context, sp LandSpec) (*LandPlan, error) {
	p := &LandPlan{Head: sp.Head}
	fail := func(err error) (*LandPlan, error) { return nil, fmt.Errorf("land %s: %w", sp.Who, err) }
	if sp.Pending {
		head, err := sp.Worktree.Snapshot(ctx)
		if err != nil {
			return fail(err)
		}
		p.Head, p.Uncommitted = head, true
	}
	var err error
	if p.Files, p.Stat, err = sp.Worktree.Changes(ctx, sp.From, p.Head); err != nil {
		return fail(err)
	}
	if p.Stat.Empty() {
		p.Empty = true
		return p, nil
	}
	if err := sp.refuseWhatCannotLand(ctx, p); err != nil {
		return nil, err
	}
	if p.Tree, err = sp.tree(ctx, p); err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return nil, err
		}
		return fail(err)
	}
	if targetTree, _ := TreeOf(ctx, sp.GitDir, sp.Target.Commit); targetTree == p.Tree {
		p.InBranch = true
		return p, nil
	}
	// The checkout the landing updates must not lose a thing: what it
	// changes is what the merged tree changes, whatever the strategy.
	if sp.Target.Checkout != "" {
		hit, err := Overlap(ctx, sp.Target.Checkout, sp.Target.Commit, p.Tree)
		if err != nil {
			return fail(err)
		}
		if len(hit) > 0 {
			return nil, &OverlapError{Checkout: sp.Target.Checkout, Files: hit}
		}
	}
	return p, nil
}

// refuseWhatCannotLand refuses a change that would land broken or land
// more than it shows: a link to a commit the repository lacks, zwarm's
// own state, or a strategy the branch's history does not allow.
func (sp LandSpec) refuseWhatCannotLand(ctx context.Context, p *LandPlan) error {
	if links, err := MissingGitlinks(ctx, sp.GitDir, sp.From, p.Head); err != nil {
		return fmt.Errorf("land %s: %w", sp.Who, err)
	} else if len(links) > 0 {
		return fmt.Errorf("land %s: its change makes %s a link to a commit this repository does not have (a repository of the worker's own, committed as a submodule); landed, it would point nowhere and the files would be gone. "+
			"Have the worker commit those files instead (zwarm inject %s \"remove the nested repository's .git and commit its files\")", sp.Who, strings.Join(links, ", "), sp.Who)
	}
	for _, f := range p.Files {
		// At any depth: zwarm takes the nearest .zwarm above where it runs
		// for its state dir, so a subdirectory's is one too (the per-turn
		// commit leaves out only the top's).
		if slices.Contains(strings.Split(f.Path, "/"), StateDirName) {
			return fmt.Errorf("land %s: its change writes %s, zwarm's own state, which is never landed (it could name programs zwarm runs); look at it with zwarm diff %s", sp.Who, f.Path, sp.Who)
		}
	}
	// A change that starts from a commit the branch has merges three way
	// (git merge-tree); one that starts from a commit it lacks (the
	// uncommitted work spawn --with-changes started from, or a part landed
	// before as a squash) lands as that change alone, applied three way.
	// A branch reset below its base no longer descends from it: what
	// lands is what diff shows, the change from..head, applied alone.
	linear := IsAncestor(ctx, sp.GitDir, sp.From, p.Head)
	p.FromBranch = linear && IsAncestor(ctx, sp.GitDir, sp.From, sp.Target.Commit)
	switch {
	case !linear && sp.Strategy != Squash:
		return fmt.Errorf("land %s: its branch no longer descends from %s, where its change starts (it was reset below it): a %s would not land the change zwarm diff shows; land it with --squash", sp.Who, Abbrev(sp.From), sp.Strategy)
	case sp.Strategy == Merge && !p.FromBranch:
		return fmt.Errorf("land %s: its change starts from %s, which %s does not have (the uncommitted work it was spawned --with-changes from, or a part landed before): a merge would land that too; land it with --squash", sp.Who, Abbrev(sp.From), sp.Target.Branch)
	case sp.Strategy == Rebase:
		if n, err := Merges(ctx, sp.GitDir, sp.From, p.Head); err != nil {
			return fmt.Errorf("land %s: %w", sp.Who, err)
		} else if n > 0 {
			return fmt.Errorf("land %s: its branch has a merge (zwarm update makes one), which a rebase would drop: land it with --squash or --merge", sp.Who)
		}
	case sp.Strategy == Merge:
		yours, err := yoursBroughtIn(ctx, sp.GitDir, p.Head, sp.From, sp.Target.Commit)
		if err != nil {
			return fmt.Errorf("land %s: %w", sp.Who, err)
		}
		if len(yours) > 0 {
			// A worker's merge of one of your branches (with -s ours,
			// its changes dropped) would pass for that branch merged.
			return fmt.Errorf("land %s: its branch has merged %s of your branches or tags that %s lacks (%s): a merge would mark them merged into %s, whatever of their changes the worker kept; land it with --squash, which lands only the change zwarm diff shows",
				sp.Who, plural(len(yours), "commit"), sp.Target.Branch, describeCommits(ctx, sp.GitDir, yours), sp.Target.Branch)
		}
	}
	return nil
}

// yoursBroughtIn are the commits on your branches and tags (a worker's
// zwarm/ branch is none of yours) that merging head would bring into a
// branch that has the commits not, through a merge on head's branch
// (newest first): the worker's own commits, on its branch's line, are not
// yours though a branch of yours has them too (one made to try them).
func yoursBroughtIn(ctx context.Context, gitDir, head string, not ...string) ([]string, error) {
	g := git{dir: gitDir}
	args := []string{"rev-list", head}
	for _, n := range not {
		args = append(args, "^"+n)
	}
	brought, err := g.run(ctx, append(args, "--")...)
	if err != nil || strings.TrimSpace(brought) == "" {
		return nil, err
	}
	line, err := g.run(ctx, append(append([]string{"rev-list", "--first-parent"}, args[1:]...), "--")...)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, c := range strings.Fields(line) {
		own[c] = true
	}
	refs, err := g.run(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/tags/")
	if err != nil {
		return nil, err
	}
	var tips strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(refs), "\n") {
		if commit, name, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(name, "refs/heads/"+BranchFor("")) {
			tips.WriteString(commit + "\n")
		}
	}
	for _, n := range not {
		tips.WriteString("^" + n + "\n")
	}
	g.stdin = strings.NewReader(tips.String())
	reachable, err := g.run(ctx, "rev-list", "--stdin", "--")
	if err != nil {
		return nil, err
	}
	theirs := map[string]bool{}
	for _, c := range strings.Fields(reachable) {
		theirs[c] = true
	}
	var yours []string
	for _, c := range strings.Fields(brought) {
		if theirs[c] && !own[c] {
			yours = append(yours, c)
		}
	}
	return yours, nil
}

// describeCommits names the first three of commits, with their subjects.
func describeCommits(ctx context.Context, gitDir string, commits []string) string {
	shown := commits[:min(3, len(commits))]
	out, err := git{dir: gitDir}.run(ctx, append([]string{"show", "-s", "--format=%h %s"}, shown...)...)
	if err != nil {
		return strings.Join(shown, ", ")
	}
	desc := strings.Join(strings.Split(strings.TrimSpace(out), "\n"), "; ")
	if len(commits) > len(shown) {
		desc += fmt.Sprintf("; and %d more", len(commits)-len(shown))
	}
	return desc
}

// tree is the target's tree with the change.
func (sp LandSpec) tree(ctx context.Context, p *LandPlan) (string, error) {
	if p.FromBranch {
		return MergeTree(ctx, sp.GitDir, sp.Target.Commit, p.Head)
	}
	return ApplyTree(ctx, sp.GitDir, sp.Target.Commit, sp.From, p.Head)
}
