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
# SIZES default to 1000 10000 100000 (the last needs about 1.5 GB of disk
# and a minute to make). STATE_DIRS=DIR keeps the state dirs in DIR
# between runs of the script; ZWARM=PATH times that zwarm binary (an older
# build, say) instead of building this checkout's.
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

# what NAME CMD...: the command for size $n, with @DIR, @ID, @PREFIX and
# @ID5 replaced.
declare -A cmds
add() { cmds[$1]=$2; order+=("$1"); }
order=()
add "show ID" "zwarm show @ID"
add "show PREFIX" "zwarm show @PREFIX"
add "logs ID" "zwarm logs @ID5"
add "kill ID (settled)" "zwarm kill @ID"
add "wait ID" "zwarm wait @ID5"
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
printf '%-26s   %s\n' "ls --json vs floor" "$(verdict "${med[ls --json,$hi]}" "${med[floor (every meta.json),$hi]}" 1) at $hi"
printf '%-26s   %s\n' "ls --status running" "$(verdict "${med[ls --status running,$hi]}" "${med[ls --status running,$lo]}" 2) of $lo"
