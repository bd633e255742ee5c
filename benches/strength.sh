#!/usr/bin/env bash
# The issue "Play to win"'s series: one player option against plain UCT at
# 1 s a move, 40 matches a game, seats alternated, pinned to one core (both
# players of a match share it, as the docs' tables were measured). One JSON
# line per game on stdout (bench arena --json), per-match lines on stderr.
#
#   benches/strength.sh 1 uct+mast connectFour breakthrough checkers \
#       connectFourSimultaneous 3pConnectFour > mast.jsonl 2> mast.log
#   MATCHES=20 SEED=2 benches/strength.sh 0 mcm checkers
#
# Environment: MATCHES (40), PLAY (1 s), SEED (1), GAMES (../shared/games),
# BIN (target/release/ggp-asp), MODEL (a model file, for the nn-* players).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 CORE PLAYER GAME..." >&2
  exit 2
fi
core=$1
player=$2
shift 2
bin=${BIN:-target/release/ggp-asp}
games=${GAMES:-../shared/games}
model=()
if [ -n "${MODEL:-}" ]; then
  model=(--model "$MODEL")
fi
for game in "$@"; do
  taskset -c "$core" "$bin" bench arena "$games/$game.kif" --player "$player" \
    --opponent uct --matches "${MATCHES:-40}" --play "${PLAY:-1}" \
    --seed "${SEED:-1}" "${model[@]}" --json
done
