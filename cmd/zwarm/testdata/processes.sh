#!/usr/bin/env bash
# Times zwarm as whole processes beside the yardsticks of the README's
# Performance section, on state dirs made by sessions/internal/mkstate:
#
#   cmd/zwarm/testdata/processes.sh [RUNS]
#
# Needs farm-bench (or hyperfine) to time, jq for the show row, tmux for the
# idle-dashboard row. Each pair runs A and B in turn; the README quotes the
# medians.
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
"$tmp/mkstate" -dir "$tmp/big" -n 1 -turns 1 -turn-mb 100
# A state dir in use: its last session was not created this very second,
# and an earlier listing left its cache (sessions.index).
touch -d '1 hour ago' "$tmp/s1k/sessions" "$tmp/s10k/sessions"
"$tmp/zwarm" --state-dir "$tmp/s1k" ls >/dev/null
"$tmp/zwarm" --state-dir "$tmp/s10k" ls >/dev/null
big=$(ls "$tmp/big/sessions" | grep -v '^\.' | head -1)

pair() { # A B: times command A against command B
	echo "== $1   vs   $2"
	if command -v farm-bench >/dev/null; then
		farm-bench -n "$runs" --vs "$2" -- $1 | grep -E ' wall s|A/B wall|peak'
	else
		hyperfine -N -w 1 -r "$runs" "$1" "$2"
	fi
}

pair "$tmp/zwarm --state-dir $tmp/s1k ls" "$tmp/floor $tmp/s1k"
pair "$tmp/zwarm --state-dir $tmp/s10k ls" "$tmp/zwarm --state-dir $tmp/s1k ls"
pair "$tmp/zwarm --state-dir $tmp/big show $big" "jq -c . $tmp/big/sessions/$big/turns/turn_1.jsonl"

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
