#!/usr/bin/env bash
# Times zwarm as whole processes beside the yardsticks of
# docs/performance.md, on state dirs made by sessions/internal/mkstate:
#
#   cmd/zwarm/testdata/processes.sh [RUNS]
#
# Needs jq for the show row and tmux for the idle-dashboard row; GNU time
# (/usr/bin/time) adds each command's peak memory. Each pair runs A and B in
# turn, RUNS times after one warm-up, output to /dev/null (as piped); it
# prints the median wall time of each and the median of the ratios A/B taken
# run by run, which docs/performance.md quotes.
set -euo pipefail
runs=${1:-10}
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/zwarm" ./cmd/zwarm
go build -o "$tmp/mkstate" ./sessions/internal/mkstate
go build -o "$tmp/floor" ./sessions/internal/floor
"$tmp/mkstate" -dir "$tmp/s1k" -n 1000
"$tmp/mkstate" -dir "$tmp/s10k" -n 10000
# A real codex session of two turns, each grown to 50 MB (as
# BenchmarkShowSession100MB reads it).
"$tmp/mkstate" -dir "$tmp/big" -n 1 -turns 2 -turn-mb 50 -recorded
# A state dir in use: its last session was not created this very second,
# and an earlier listing left its cache (sessions.index).
touch -d '1 hour ago' "$tmp/s1k/sessions" "$tmp/s10k/sessions"
"$tmp/zwarm" --state-dir "$tmp/s1k" ls >/dev/null
"$tmp/zwarm" --state-dir "$tmp/s10k" ls >/dev/null
big=$(ls "$tmp/big/sessions" | grep -v '^\.' | head -1)

now() { date +%s%N; }

# median reads numbers, one a line, and prints the middle one.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

pair() { # A B [PREP]: times command A against command B; PREP runs untimed before each A
	echo "== $1   vs   $2${3:+   (before each A: $3)}"
	$1 >/dev/null 2>&1 || true # warm-up: caches and the page cache
	$2 >/dev/null 2>&1 || true
	: >"$tmp/a" && : >"$tmp/b" && : >"$tmp/r"
	for _ in $(seq "$runs"); do
		${3:-true}
		t0=$(now); $1 >/dev/null 2>&1 || true; t1=$(now)
		$2 >/dev/null 2>&1 || true; t2=$(now)
		echo "$(((t1 - t0) / 1000))" >>"$tmp/a"
		echo "$(((t2 - t1) / 1000))" >>"$tmp/b"
		awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) 'BEGIN{print a/b}' >>"$tmp/r"
	done
	printf 'A wall   %8.3f s (median of %d)\n' "$(median <"$tmp/a" | awk '{print $1/1e6}')" "$runs"
	printf 'B wall   %8.3f s\n' "$(median <"$tmp/b" | awk '{print $1/1e6}')"
	printf 'A/B wall %8.3f (median of the run-by-run ratios)\n' "$(median <"$tmp/r")"
	if [ -x /usr/bin/time ]; then
		for c in "$1" "$2"; do
			/usr/bin/time -f '%M' -o "$tmp/peak" $c >/dev/null 2>&1 || true
			echo "peak $(awk '{printf "%.1f", $1/1024}' "$tmp/peak") MiB: $c"
		done
	fi
}

pair "$tmp/zwarm --state-dir $tmp/s1k ls" "$tmp/floor $tmp/s1k"
# The first listing of a state dir (or one after its cache was lost)
# rebuilds the cache from every meta.json.
cp "$tmp/s1k/sessions.index" "$tmp/index.keep"
pair "$tmp/zwarm --state-dir $tmp/s1k ls" "$tmp/floor $tmp/s1k" "rm -f $tmp/s1k/sessions.index"
cp "$tmp/index.keep" "$tmp/s1k/sessions.index"
pair "$tmp/zwarm --state-dir $tmp/s10k ls" "$tmp/zwarm --state-dir $tmp/s1k ls"
pair "$tmp/zwarm --state-dir $tmp/big show $big" "jq -c . $tmp/big/sessions/$big/turns/turn_1.jsonl $tmp/big/sessions/$big/turns/turn_2.jsonl"

if command -v tmux >/dev/null; then
	echo "== idle zwarm dash, 1,000 settled sessions, 30 s"
	sock="zwarm-bench-$$"
	tmux -L "$sock" new-session -d -x 120 -y 40 "$tmp/zwarm --state-dir $tmp/s1k dash"
	sleep 3 # let it load
	pid=$(pgrep -n -f "$tmp/zwarm --state-dir $tmp/s1k dash")
	ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
	hz=$(getconf CLK_TCK)
	t0=$(ticks)
	sleep 30
	t1=$(ticks)
	tmux -L "$sock" kill-server
	echo "clock ticks: $((t1 - t0)) in 30 s at $hz Hz = $(awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN{printf "%.2f", 100*d/hz/30}')% of a core"
fi
