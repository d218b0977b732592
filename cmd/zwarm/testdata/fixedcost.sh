#!/usr/bin/env bash
# Times what a one-session command costs beyond its work, as whole
# processes (the fixed cost of docs/performance.md):
#
#   cmd/zwarm/testdata/fixedcost.sh [RUNS]
#
# In a small repository where a settled worker (the scripted fake agent)
# changed one file, it runs in turn, RUNS times after a warm-up:
#   zwarm diff --stat ID                     zwarm, built static as installed
#   floor diff --stat BASE zwarm/ID          a program that links every
#                                            library zwarm links and whose
#                                            main only runs git with its
#                                            arguments: the start of such a
#                                            binary, and git's work
#   git diff --stat BASE zwarm/ID            the work alone
# and prints each one's median wall time and the medians of the
# run-by-run differences from git's (bash's EPOCHREALTIME: no process is
# started to read the clock).
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
export ZWARM_STATE_DIR="$tmp/state" ZWARM_CODEX_BIN="$tmp/codex" FAKEAGENT_SCRIPT="$tmp/script.json"
cat >"$FAKEAGENT_SCRIPT" <<'EOF'
{"default": [
  {"run": "echo changed >> f7.txt"},
  {"out": "{\"type\":\"thread.started\",\"thread_id\":\"t\"}"},
  {"out": "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"done\"}}"},
  {"out": "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,\"output_tokens\":1}}"}
]}
EOF
cd "$repo"
id=$("$tmp/zwarm" spawn "change a file")
"$tmp/zwarm" wait "$id" >/dev/null
base=$(git merge-base main "zwarm/$id")

zw=("$tmp/zwarm" diff --stat "${id:0:8}")
fl=("$tmp/floor" diff --stat "$base" "zwarm/$id")
gt=(git diff --stat "$base" "zwarm/$id")
us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for c in zw fl gt; do : >"$tmp/$c"; done
: >"$tmp/dzw" && : >"$tmp/dfl"
for i in $(seq 0 "$runs"); do
	t0=$(us); "${zw[@]}" >/dev/null; t1=$(us)
	"${fl[@]}" >/dev/null; t2=$(us)
	"${gt[@]}" >/dev/null; t3=$(us)
	[ "$i" -eq 0 ] && continue # the warm-up
	echo $((t1 - t0)) >>"$tmp/zw"
	echo $((t2 - t1)) >>"$tmp/fl"
	echo $((t3 - t2)) >>"$tmp/gt"
	echo $(((t1 - t0) - (t3 - t2))) >>"$tmp/dzw"
	echo $(((t2 - t1) - (t3 - t2))) >>"$tmp/dfl"
done
ms() { median <"$1" | awk '{printf "%.2f ms", $1/1000}'; }
echo "$runs runs each, in turn; medians:"
echo "  zwarm diff --stat ID           $(ms "$tmp/zw")   above git: $(ms "$tmp/dzw")"
echo "  floor diff --stat BASE BRANCH  $(ms "$tmp/fl")   above git: $(ms "$tmp/dfl")"
echo "  git diff --stat BASE BRANCH    $(ms "$tmp/gt")"
