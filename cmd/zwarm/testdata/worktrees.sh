#!/usr/bin/env bash
# Times zwarm spawn and zwarm diff --stat as whole processes in a git
# repository of 20,000 source files (400 directories, about 30 MB), the
# worktree figures of docs/performance.md:
#
#   cmd/zwarm/testdata/worktrees.sh [RUNS]
#
# The worker is the scripted fake agent (it changes five files and
# finishes), so only zwarm and git are timed. spawn returns once the session
# is recorded and its supervisor started; the supervisor makes the worktree
# after that, and each spawn is waited for, untimed, before the next. Prints
# the median, the fastest and the slowest of RUNS runs after a warm-up, and
# each command's peak memory when GNU time (/usr/bin/time) is there.
set -euo pipefail
runs=${1:-10}
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/zwarm" ./cmd/zwarm
go build -o "$tmp/codex" ./sessions/internal/fakeagent

repo="$tmp/api"
mkdir -p "$repo"
body=$(printf '// Package code is generated for the benchmark; each line is a realistic width.\n%.0s' $(seq 18))
for d in $(seq 0 399); do
	for s in 0 1 2 3 4; do
		dir=$(printf '%s/pkg%03d/sub%d' "$repo" "$d" "$s")
		mkdir -p "$dir"
		for f in $(seq 0 9); do
			printf 'package p%d\n\n%s\n' "$d" "$body" >"$(printf '%s/file%05d.go' "$dir" $((d * 50 + s * 10 + f)))"
		done
	done
done
export GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1 XDG_DATA_HOME="$tmp/data"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' >"$GIT_CONFIG_GLOBAL"
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -q -m init
echo "repository: $(git -C "$repo" ls-files | wc -l) files"

export ZWARM_STATE_DIR="$tmp/state" ZWARM_CODEX_BIN="$tmp/codex" FAKEAGENT_SCRIPT="$tmp/script.json"
cat >"$FAKEAGENT_SCRIPT" <<'EOF'
{"default": [
  {"run": "for i in 1 2 3 4 5; do echo '// changed' >> $(printf 'pkg%03d/sub0/file%05d.go' $i $((i*50))); done"},
  {"out": "{\"type\":\"thread.started\",\"thread_id\":\"t\"}"},
  {"out": "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"done\"}}"},
  {"out": "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,\"output_tokens\":1}}"}
]}
EOF

now() { date +%s%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
report() { # NAME FILE
	printf '%-40s median %6.1f ms  (%.1f to %.1f ms, %d runs)\n' "$1" \
		"$(median <"$2" | awk '{print $1/1e6}')" "$(sort -g "$2" | head -1 | awk '{print $1/1e6}')" \
		"$(sort -g "$2" | tail -1 | awk '{print $1/1e6}')" "$runs"
}
peak() { # COMMAND...
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$tmp/peak" "$@" >/dev/null 2>&1 || true
		echo "  peak $(awk '{printf "%.1f", $1/1024}' "$tmp/peak") MiB"
	fi
}

cd "$repo"
: >"$tmp/spawn"
for i in $(seq 0 "$runs"); do
	t0=$(now)
	id=$("$tmp/zwarm" spawn "change five files")
	t1=$(now)
	"$tmp/zwarm" wait "$id" >/dev/null
	[ "$i" -gt 0 ] && echo $((t1 - t0)) >>"$tmp/spawn" # the first is the warm-up
	last=$id
done
report "zwarm spawn (in the 20,000-file repo)" "$tmp/spawn"
: >"$tmp/diff"
for i in $(seq 0 "$runs"); do
	t0=$(now)
	"$tmp/zwarm" diff --stat "$last" >/dev/null
	t1=$(now)
	[ "$i" -gt 0 ] && echo $((t1 - t0)) >>"$tmp/diff"
done
report "zwarm diff --stat (5 of 20,000 changed)" "$tmp/diff"
peak "$tmp/zwarm" diff --stat "$last"
"$tmp/zwarm" diff --stat "$last" | tail -1
