#!/usr/bin/env bash
# Runs a command beside N processes that each keep a core busy, as on a shared
# machine, and prints the command's wall time; the hogs stop with it.
#
#   benches/busy.sh 2 cargo test --release              # the suite beside two hogs
#   benches/busy.sh 1 target/release/ggp-asp bench solve puzzles --timeout 60
#   benches/busy.sh 0 taskset -c 0 cargo test --release # one core, no hog
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 HOGS COMMAND [ARG]..." >&2
  exit 2
fi
hogs=$1
shift
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for _ in $(seq 1 "$hogs"); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
start=$(date +%s%N)
status=0
"$@" || status=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "busy.sh: $hogs hog(s), exit $status, $((ms / 1000)).$(printf %03d $((ms % 1000))) s" >&2
exit $status
