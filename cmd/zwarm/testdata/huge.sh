#!/usr/bin/env bash
# Peak memory of zwarm's readers on huge sessions (docs/performance.md,
# "Huge sessions"), on state dirs made by sessions/internal/mkstate:
#
#   cmd/zwarm/testdata/huge.sh
#
# one session whose turn has 3 million lines of codex events (1.4 GB), and
# one whose turn holds the marker of a cut 500 MB line among 100,000 lines.
# Needs GNU time (/usr/bin/time) for the peaks, tmux for the dashboard's.
set -euo pipefail
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
sock="zwarm-huge-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/zwarm" ./cmd/zwarm
go build -o "$tmp/mkstate" ./sessions/internal/mkstate
"$tmp/mkstate" -dir "$tmp/lines" -n 1 -turns 1 -turn-lines 3000000
"$tmp/mkstate" -dir "$tmp/cut" -n 1 -turns 1 -turn-lines 100000 -cut-line

for d in lines cut; do
	for c in "show" "logs" "logs --raw"; do
		/usr/bin/time -f '%e s, peak %M kB' -o "$tmp/peak" "$tmp/zwarm" --state-dir "$tmp/$d" $c 3f2a >/dev/null
		echo "$d: zwarm $c: $(cat "$tmp/peak")"
	done
done

# The dashboard on the 3-million-line session: its first frame, then keys.
tmux -L "$sock" new-session -d -s huge -x 200 -y 50 "$tmp/zwarm --state-dir $tmp/lines dash"
sleep 5
pid=$(tmux -L "$sock" list-panes -t huge -F '#{pane_pid}')
for k in j k G g Tab j k Tab; do tmux -L "$sock" send-keys -t huge "$k"; sleep 0.3; done
echo "lines: zwarm dash: peak $(awk '/VmHWM/{print $2}' "/proc/$pid/status") kB"
