#!/usr/bin/env bash
# Times zwarm as whole processes on state dirs of 1,000, 10,000 and 100,000
# settled sessions (sessions/internal/mkstate) and prints each figure
# against its goal (docs/performance.md, "At 100,000 sessions"):
#
#   cmd/zwarm/testdata/scale.sh [RUNS] [SIZES...]
#
# RUNS (default 11) runs of each command after a warm-up, output to
# /dev/null; each cell is the median wall time. The sizes are timed in
# turn, run by run, so that the machine's drift falls on all of them.
# SIZES default to 1000 10000 100000 (the last needs about 3 GB of disk
# and a minute to make). STATE_DIRS=DIR keeps the state dirs in DIR
# between runs of the script; ZWARM=PATH times that zwarm binary (an older
# build, say) instead of building this checkout's.
#
# Then `zwarm dash`, under tmux (needed for it; DASH_RUNS, default 5, runs
# a size): the time from its start until the header shows the count of
# every status as `zwarm ls --json` gives them (and no "loading"), the
# peak resident memory (VmHWM), and the clock ticks (utime+stime) it uses
# idle over 20 s once loaded; once more with the sessions dir changed
# since the listing cache was written (as a spawn a minute ago leaves it:
# the dir's names are read), and once without the cache (sessions.index
# removed: the dashboard makes it first, reading every record).
set -euo pipefail
runs=${1:-11}
shift || true
sizes=("${@:-1000 10000 100000}")
# shellcheck disable=SC2206
sizes=(${sizes[*]})
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=${STATE_DIRS:-$tmp}
mkdir -p "$keep"

if [ -n "${ZWARM:-}" ]; then
	cp "$ZWARM" "$tmp/zwarm"
else
	go build -o "$tmp/zwarm" ./cmd/zwarm
fi
go build -o "$tmp/mkstate" ./sessions/internal/mkstate
go build -o "$tmp/floor" ./sessions/internal/floor
for n in "${sizes[@]}"; do
	d="$keep/s$n"
	if [ ! -d "$d/sessions" ]; then
		"$tmp/mkstate" -dir "$d" -n "$n"
	fi
	# A state dir in use: its last session was not created this very
	# second, and an earlier listing left its cache (sessions.index).
	touch -d '1 hour ago' "$d/sessions"
	"$tmp/zwarm" --state-dir "$d" ls >/dev/null
done

now() { date +%s%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# The newest session (the last mkstate made) and the fifth newest.
newest() { printf '%08x-%04x-4000-8000-%012x' $((0x3f2a0000 + $1 - 1)) $((($1 - 1) % 0xffff)) $(($1 - 1)); }
fifth() { printf '%08x-%04x-4000-8000-%012x' $((0x3f2a0000 + $1 - 5)) $((($1 - 5) % 0xffff)) $(($1 - 5)); }

# what NAME CMD...: the command for size $n, with @DIR, @ID, @PREFIX, @ID5
# and @PREFIX5 (the fifth newest's 8 characters) replaced.
declare -A cmds
add() { cmds[$1]=$2; order+=("$1"); }
order=()
add "show ID" "zwarm show @ID"
add "show PREFIX" "zwarm show @PREFIX"
add "logs ID" "zwarm logs @ID5"
add "logs PREFIX" "zwarm logs @PREFIX5"
add "kill ID (settled)" "zwarm kill @ID"
add "wait ID" "zwarm wait @ID5"
add "wait PREFIX" "zwarm wait @PREFIX5"
add "ls" "zwarm ls"
add "ls --json" "zwarm ls --json"
add "ls --status running" "zwarm ls --status running"
add "ls --source run:ID" "zwarm ls --source run:0199a213-81c0-7800-8aa1-bbab2a035a53"
add "ls -L 20" "zwarm ls -L 20"
add "floor (every meta.json)" "floor"

expand() { # NAME N
	local c=${cmds[$1]} d="$keep/s$2" id id5
	id=$(newest "$2")
	id5=$(fifth "$2")
	c=${c//@ID5/$id5}
	c=${c//@ID/$id}
	c=${c//@PREFIX5/${id5:0:8}}
	c=${c//@PREFIX/${id:0:8}}
	case $c in
	zwarm*) echo "$tmp/zwarm --state-dir $d ${c#zwarm }" ;;
	floor) echo "$tmp/floor $d" ;;
	esac
}

declare -A med
for name in "${order[@]}"; do
	for n in "${sizes[@]}"; do
		$(expand "$name" "$n") >/dev/null 2>&1 || true # warm-up
		: >"$tmp/t.$n"
	done
	for _ in $(seq "$runs"); do
		for n in "${sizes[@]}"; do
			c=$(expand "$name" "$n")
			t0=$(now)
			$c >/dev/null 2>&1 || true
			echo "$((($(now) - t0) / 1000))" >>"$tmp/t.$n"
		done
	done
	for n in "${sizes[@]}"; do
		med[$name,$n]=$(median <"$tmp/t.$n" | awk '{printf "%.1f", $1/1000}')
	done
done

# rm, last: each run removes another of the old sessions (from a random
# place, so that the next run of the script finds some to remove).
for n in "${sizes[@]}"; do : >"$tmp/t.$n"; done
from=$((10 + RANDOM % (${sizes[0]} - 20 - runs)))
for r in $(seq "$from" $((from + runs - 1))); do
	for n in "${sizes[@]}"; do
		id=$(printf '%08x-%04x-4000-8000-%012x' $((0x3f2a0000 + r)) $((r % 0xffff)) "$r")
		t0=$(now)
		"$tmp/zwarm" --state-dir "$keep/s$n" rm "$id" >/dev/null 2>&1 || true
		echo "$((($(now) - t0) / 1000))" >>"$tmp/t.$n"
	done
done
order+=("rm ID")
for n in "${sizes[@]}"; do med["rm ID",$n]=$(median <"$tmp/t.$n" | awk '{printf "%.1f", $1/1000}'); done

# shows HEADER WANT: the header says every line of WANT, and is not
# loading.
shows() {
	local line
	[[ $1 != *loading* ]] || return 1
	while read -r line; do
		[[ $1 == *"$line"* ]] || return 1
	done <<<"$2"
}

# counts N: what the dashboard's header must say of the state dir of size
# N, every status's count, as ls gives them.
counts() {
	"$tmp/zwarm" --state-dir "$keep/s$1" ls --json | grep -o '^    "status": "[a-z]*"' | sed 's/.*: "//; s/"$//' | sort | uniq -c |
		awk '{printf "%s %s\n", $1, $2}'
}

# dashrun N WANT [idle]: one run of the dashboard in tmux, on the state dir
# of size N, until its header says WANT; prints "MS KB TICKS" (TICKS only
# with idle: 20 s idling).
killdash() {
	local s
	for s in "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/zwarm-scale-$$-"*; do
		tmux -L "${s##*/}" kill-server 2>/dev/null || true
		rm -f "$s"
	done
}
trap 'killdash; rm -rf "$tmp"' EXIT
dashrun() {
	local d="$keep/s$1" want=$2 h pid t0 ms="" ticks=- sock
	# A server of its own each run: one just killed may still be exiting.
	sock="zwarm-scale-$$-$(now)"
	t0=$(now)
	tmux -L "$sock" new-session -d -s dash -x 200 -y 50 "$tmp/zwarm --state-dir $d dash"
	pid=$(tmux -L "$sock" list-panes -t dash -F '#{pane_pid}')
	while [ $((($(now) - t0) / 1000000)) -lt 60000 ]; do
		h=$(tmux -L "$sock" capture-pane -p -t dash | head -1)
		if shows "$h" "$want"; then
			ms=$((($(now) - t0) / 1000000))
			break
		fi
		sleep 0.01
	done
	if [ "${3:-}" = idle ]; then
		sleep 3 # the check of every record, right after the first frame
		local a b
		a=$(awk '{print $14+$15}' "/proc/$pid/stat")
		sleep 20
		b=$(awk '{print $14+$15}' "/proc/$pid/stat")
		ticks=$((b - a))
	else
		sleep 1
	fi
	echo "${ms:-never} $(awk '/VmHWM/{print $2}' "/proc/$pid/status") $ticks"
	tmux -L "$sock" kill-server 2>/dev/null || true
}

declare -A dms dkb dticks tms tkb cms ckb
if command -v tmux >/dev/null; then
	for n in "${sizes[@]}"; do
		# A state dir in use, its cache written by the last listing.
		touch -d '1 hour ago' "$keep/s$n/sessions"
		"$tmp/zwarm" --state-dir "$keep/s$n" ls >/dev/null
		want=$(counts "$n")
		: >"$tmp/d.$n"
		for r in $(seq "${DASH_RUNS:-5}"); do
			if [ "$r" = "${DASH_RUNS:-5}" ]; then dashrun "$n" "$want" idle; else dashrun "$n" "$want"; fi >>"$tmp/d.$n"
		done
		sed "s/^/dash at $n: ms, KiB, ticks: /" "$tmp/d.$n" >&2
		dms[$n]=$(awk '{print $1}' "$tmp/d.$n" | median)
		dkb[$n]=$(awk '{print $2}' "$tmp/d.$n" | sort -g | tail -1)
		dticks[$n]=$(tail -1 "$tmp/d.$n" | awk '{print $3}')
		# As a spawn or an rm a minute ago leaves it.
		touch -d '1 minute ago' "$keep/s$n/sessions"
		read -r tms[$n] tkb[$n] _ < <(dashrun "$n" "$want")
		rm -f "$keep/s$n/sessions.index"
		read -r cms[$n] ckb[$n] _ < <(dashrun "$n" "$want")
	done
fi

# serve's first screen: from starting zwarm serve to the page's first 200
# sessions read (the page itself, then GET /api/sessions), as a browser
# opening the link does.
declare -A sms
if command -v curl >/dev/null; then
	for n in "${sizes[@]}"; do
		: >"$tmp/w.$n"
		for _ in $(seq "$runs"); do
			t0=$(now)
			"$tmp/zwarm" --state-dir "$keep/s$n" serve --addr 127.0.0.1:0 --token scale >"$tmp/link" 2>/dev/null &
			spid=$!
			until [ -s "$tmp/link" ]; do sleep 0.002; done
			base=$(sed -n 's|/#token=.*||p' "$tmp/link" | head -1)
			curl -sf -o /dev/null "$base/" && curl -sf -o /dev/null -H "Authorization: Bearer scale" "$base/api/sessions?limit=200"
			echo "$((($(now) - t0) / 1000))" >>"$tmp/w.$n"
			kill "$spid"
			wait "$spid" 2>/dev/null || true
		done
		sms[$n]=$(median <"$tmp/w.$n" | awk '{printf "%.1f", $1/1000}')
	done
fi

lo=${sizes[0]}
hi=${sizes[${#sizes[@]} - 1]}
printf '%-26s' "median wall ms"
for n in "${sizes[@]}"; do printf '%10s' "$n"; done
printf '   %s\n' "goal at $hi"
verdict() { awk -v a="$1" -v b="$2" -v k="$3" 'BEGIN{printf "%.2fx %s (at most %sx)", a/b, (a <= k*b ? "ok" : "MISSED"), k}'; }
for name in "${order[@]}"; do
	printf '%-26s' "$name"
	for n in "${sizes[@]}"; do printf '%10s' "${med[$name,$n]}"; done
	h=${med[$name,$hi]}
	case $name in
	show* | logs* | kill* | wait* | rm*) printf '   %s of %s' "$(verdict "$h" "${med[$name,$lo]}" 1.5)" "$lo" ;;
	"ls --json" | "ls --status running" | "ls --source"*) printf '   %s of ls' "$(verdict "$h" "${med[ls,$hi]}" 1.2)" ;;
	"ls -L 20") printf '   %s of %s' "$(verdict "$h" "${med[$name,$lo]}" 2)" "$lo" ;;
	esac
	echo
done
if [ -n "${sms[$hi]:-}" ]; then
	printf '%-26s' "serve: first screen, ms"
	for n in "${sizes[@]}"; do printf '%10s' "${sms[$n]}"; done
	printf '   %s at %s\n' "$(awk -v a="${sms[$hi]}" 'BEGIN{printf "%s (at most 1000)", (a <= 1000 ? "ok" : "MISSED")}')" "$hi"
fi
printf '%-26s   %s\n' "ls --json vs floor" "$(verdict "${med[ls --json,$hi]}" "${med[floor (every meta.json),$hi]}" 1) at $hi"
printf '%-26s   %s\n' "ls --status running" "$(verdict "${med[ls --status running,$hi]}" "${med[ls --status running,$lo]}" 2) of $lo"
if command -v tmux >/dev/null; then
	echo
	printf '%-26s' "dash"
	for n in "${sizes[@]}"; do printf '%10s' "$n"; done
	printf '   %s\n' "goal"
	goal() { awk -v a="$1" -v k="$2" 'BEGIN{printf "%s (at most %s)", (a != "never" && a <= k ? "ok" : "MISSED"), k}'; }
	printf '%-26s' "first frame, exact, ms"
	for n in "${sizes[@]}"; do printf '%10s' "${dms[$n]}"; done
	printf '   %s at %s\n' "$(goal "${dms[$hi]}" 1000)" "$hi"
	printf '%-26s' "peak RSS, MiB"
	for n in "${sizes[@]}"; do printf '%10s' "$((dkb[$n] / 1024))"; done
	printf '   %s at %s\n' "$(goal "$((dkb[$hi] / 1024))" 150)" "$hi"
	printf '%-26s' "idle ticks in 20 s"
	for n in "${sizes[@]}"; do printf '%10s' "${dticks[$n]}"; done
	printf '   %s at %s\n' "$(goal "${dticks[$hi]}" 4)" "$hi"
	printf '%-26s' "dir changed: first frame"
	for n in "${sizes[@]}"; do printf '%10s' "${tms[$n]}"; done
	printf '   %s at %s\n' "$(goal "${tms[$hi]}" 1000)" "$hi"
	printf '%-26s' "dir changed: peak RSS, MiB"
	for n in "${sizes[@]}"; do printf '%10s' "$((tkb[$n] / 1024))"; done
	printf '   %s at %s\n' "$(goal "$((tkb[$hi] / 1024))" 150)" "$hi"
	printf '%-26s' "no cache: first frame, ms"
	for n in "${sizes[@]}"; do printf '%10s' "${cms[$n]}"; done
	echo
	printf '%-26s' "no cache: peak RSS, MiB"
	for n in "${sizes[@]}"; do printf '%10s' "$((ckb[$n] / 1024))"; done
	echo
else
	echo "dash: not measured (no tmux)"
fi
