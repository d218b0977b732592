#!/usr/bin/env bash
# Times what a one-session command costs beyond its work, as whole
# processes (the fixed cost of docs/performance.md):
#
#   cmd/zwarm/testdata/fixedcost.sh [RUNS]
#   BEFORE=/path/to/an/earlier/zwarm cmd/zwarm/testdata/fixedcost.sh [RUNS]
#
# In a small repository set up as a person sets one up (`zwarm init`: the
# state dir .zwarm/ inside it, with the commented config.toml every
# command reads), where a settled worker (the scripted fake agent)
# changed one file, it runs in turn, RUNS times after a warm-up:
#   zwarm diff --stat ID                     zwarm, built static as installed
#   before diff --stat ID                    BEFORE, if given: another build
#   floor diff --stat BASE zwarm/ID          a program that links every
#                                            library zwarm links and whose
#                                            main only runs git with its
#                                            arguments: the start of such a
#                                            binary, and git's work
#   git diff --stat BASE zwarm/ID            the work alone
# and prints each one's median wall time and the medians of the
# run-by-run differences from git's. The rounds take every order of the
# commands in turn: which process ran just before moved a command's time
# by up to a millisecond on a small virtual machine. The clock is bash's
# EPOCHREALTIME: no process is started to read it.
set -euo pipefail
runs=${1:-100}
cd "$(dirname "$0")/../../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -o "$tmp/zwarm" ./cmd/zwarm
go build -o "$tmp/codex" ./sessions/internal/fakeagent
mkdir "$tmp/floorsrc"
{
	echo 'package main'
	echo 'import ('
	echo '"os"'
	echo '"os/exec"'
	go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./cmd/zwarm |
		grep -v -e '^github.com/zwarm/' -e /internal | sed 's/.*/_ "&"/'
	echo ')'
	echo 'func main() { c := exec.Command("git", os.Args[1:]...); c.Stdout = os.Stdout; c.Run() }'
} >"$tmp/floorsrc/main.go"
mv "$tmp/floorsrc" ./zz-floor-$$ && trap 'rm -rf "$tmp" ./zz-floor-$$' EXIT
CGO_ENABLED=0 go build -o "$tmp/floor" ./zz-floor-$$
rm -rf ./zz-floor-$$

export GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1 XDG_DATA_HOME="$tmp/data"
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' >"$GIT_CONFIG_GLOBAL"
repo="$tmp/repo"
mkdir "$repo"
for i in $(seq 1 50); do echo "line $i" >"$repo/f$i.txt"; done
git -C "$repo" init -q -b main && git -C "$repo" add -A && git -C "$repo" commit -q -m init
unset ZWARM_STATE_DIR
export ZWARM_CODEX_BIN="$tmp/codex" FAKEAGENT_SCRIPT="$tmp/script.json"
cat >"$FAKEAGENT_SCRIPT" <<'EOF'
{"default": [
  {"run": "echo changed >> f7.txt"},
  {"out": "{\"type\":\"thread.started\",\"thread_id\":\"t\"}"},
  {"out": "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"done\"}}"},
  {"out": "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,\"output_tokens\":1}}"}
]}
EOF
cd "$repo"
"$tmp/zwarm" init >/dev/null
id=$("$tmp/zwarm" spawn "change a file")
"$tmp/zwarm" wait "$id" >/dev/null
base=$(git merge-base main "zwarm/$id")

declare -A cmd=(
	[zwarm]="$tmp/zwarm diff --stat ${id:0:8}"
	[floor]="$tmp/floor diff --stat $base zwarm/$id"
	[git]="git diff --stat $base zwarm/$id"
)
names=(zwarm floor git)
if [ -n "${BEFORE:-}" ]; then
	cmd[before]="$BEFORE diff --stat ${id:0:8}"
	names=(zwarm before floor git)
fi
# orders prints every order of its arguments, one to a line.
orders() {
	if [ $# -le 1 ]; then echo "$@"; return; fi
	local i rest
	for ((i = 1; i <= $#; i++)); do
		rest=("${@:1:i-1}" "${@:i+1}")
		orders "${rest[@]}" | sed "s/^/${!i} /"
	done
}
mapfile -t order < <(orders "${names[@]}")
for c in "${names[@]}"; do : >"$tmp/t.$c" && : >"$tmp/d.$c"; done
for i in $(seq 0 "$runs"); do
	declare -A took=()
	for c in ${order[i % ${#order[@]}]}; do
		t0=${EPOCHREALTIME/./}
		${cmd[$c]} >/dev/null
		t1=${EPOCHREALTIME/./}
		took[$c]=$((t1 - t0))
	done
	[ "$i" -eq 0 ] && continue # the warm-up
	for c in "${names[@]}"; do
		echo "${took[$c]}" >>"$tmp/t.$c"
		echo $((took[$c] - took[git])) >>"$tmp/d.$c"
	done
done
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ms() { median <"$1" | awk '{printf "%5.2f ms", $1/1000}'; }
echo "$runs runs each, in turn, in each of the ${#order[@]} orders alike; medians:"
for c in "${names[@]}"; do
	line=$(printf '  %-7s %s' "$c" "$(ms "$tmp/t.$c")")
	[ "$c" != git ] && line+="   above git: $(ms "$tmp/d.$c")"
	echo "$line"
done
