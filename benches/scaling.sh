#!/usr/bin/env bash
# How the search scales with threads, measured as the issue "Scale out" asks
# where no machine with many cores is at hand: CPU time per playout and per
# UCT iteration as threads grow past the cores (threads then take turns; a
# cost that grows with them is contention: a lock, a shared counter, memory).
# Run it on an otherwise idle machine; JSON lines on stdout.
#
#   benches/scaling.sh > scaling.jsonl          # connectFour and breakthrough
#   benches/scaling.sh checkers > checkers.jsonl
#
# Environment: THREADS (1,2,4,8,16), SECONDS_EACH (3), GAMES (../shared/games),
# BIN (target/release/ggp-asp).
set -euo pipefail
bin=${BIN:-target/release/ggp-asp}
games=${GAMES:-../shared/games}
threads=${THREADS:-1,2,4,8,16}
secs=${SECONDS_EACH:-3}
if [ $# -eq 0 ]; then
  set -- connectFour breakthrough
fi
for g in "$@"; do
  "$bin" bench playouts "$games/$g.kif" --engine propnet --seconds "$secs" \
    --threads "$threads" --json
  for scheme in root tree; do
    "$bin" bench search "$games/$g.kif" --seconds "$secs" --threads "$threads" \
      --parallel "$scheme" --json
  done
done
