#!/usr/bin/env bash
# The issue "Beat Sancho"'s series: our player against Sancho (the 2014 GGP
# champion, ../shared/tools/sancho, a measuring instrument: never needed by
# the tests or CI), one core each (`taskset`), seats alternated, through the
# HTTP match protocol. Sancho is started once for the series on its core
# and stopped at the end; its logs (its view of every position) stay in its
# working folder, named on stderr. One JSON line per game on stdout (bench
# arena --json), per-match lines on stderr; with MATCHES_DIR each match's
# record (moves, errors, our move reports) as its own JSON file, through
# `match --json`, for reading a lost match move by move.
#
#   benches/sancho.sh connectFour breakthrough > sancho.jsonl 2> sancho.log
#   START=60 PLAY=15 MATCHES=20 benches/sancho.sh breakthrough
#   MATCHES=2 MATCHES_DIR=/tmp/lost benches/sancho.sh breakthrough
#
# Environment: PLAYER (auto), MATCHES (20), START (20 s), PLAY (5 s), SEED
# (1), OURS (core 0), THEIRS (core 1), PORT (9148), GAMES (../shared/games),
# BIN (target/release/ggp-asp), SANCHO (../shared/tools/sancho).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 GAME..." >&2
  exit 2
fi
bin=${BIN:-target/release/ggp-asp}
games=${GAMES:-../shared/games}
sancho=${SANCHO:-../shared/tools/sancho}
port=${PORT:-9148}
url=http://127.0.0.1:$port
command -v java >/dev/null || {
  echo "error: Sancho needs a Java runtime (apt-get install -y default-jre-headless)" >&2
  exit 1
}
taskset -c "${THEIRS:-1}" "$sancho/run.sh" "$port" >&2 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
# It listens a few seconds after it starts.
for _ in $(seq 60); do
  if curl -s -m 2 -d '(INFO)' "$url" >/dev/null 2>&1; then break; fi
  sleep 1
done
curl -s -m 2 -d '(INFO)' "$url" >/dev/null || {
  echo "error: Sancho did not answer INFO on $url" >&2
  exit 1
}
for game in "$@"; do
  if [ -n "${MATCHES_DIR:-}" ]; then
    mkdir -p "$MATCHES_DIR"
    for i in $(seq 0 $((${MATCHES:-20} - 1))); do
      players=(--player "${PLAYER:-auto}" --player "$url")
      if [ $((i % 2)) -eq 1 ]; then players=(--player "$url" --player "${PLAYER:-auto}"); fi
      taskset -c "${OURS:-0}" "$bin" match "$games/$game.kif" "${players[@]}" \
        --start "${START:-20}" --play "${PLAY:-5}" --seed "$((${SEED:-1} + i))" \
        --json > "$MATCHES_DIR/$game-$i.json"
      echo "$game match $i: $(jq -c '.goals' "$MATCHES_DIR/$game-$i.json")" >&2
    done
  else
    taskset -c "${OURS:-0}" "$bin" bench arena "$games/$game.kif" \
      --player "${PLAYER:-auto}" --opponent "$url" --matches "${MATCHES:-20}" \
      --start "${START:-20}" --play "${PLAY:-5}" --seed "${SEED:-1}" --json
  fi
done
