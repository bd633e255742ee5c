#!/usr/bin/env bash
# Engine speed side by side: random playouts per second of Sancho's propositional
# network (the 2014 champion, ../shared/tools/sancho; driver in
# benches/sancho_speed/SanchoSpeed.java, Sancho's own rollout call
# ForwardDeadReckonPropnetStateMachine.getDepthChargeResult) and of ours, one
# thread each, both pinned to the same core, one after the other. Ours twice:
# its own playout loop (`ggp-asp bench playouts --engine propnet`, the call
# the search's playouts make: the counterpart of Sancho's rollout call), and
# through the generic state-machine calls (`ggp-asp simulate --engine
# propnet`: legal moves, a copied next state, per step). Uniformly random joint moves from the initial
# state to the end, the goals read at the end. Prints a markdown table; the
# drivers' own lines go to stderr. A measuring instrument, like
# ../shared/tools/sancho itself: no test or CI may need it. Needs a JDK (javac).
#
#   benches/sancho_speed.sh                      # ticTacToe connectFour breakthrough checkers reversi
#   CORE=0 SECONDS_EACH=5 benches/sancho_speed.sh connectFour breakthrough
#   nice benches/sancho_speed.sh > speed.md      # beside other work
#
# Environment: CORE (1: the core both run on), SECONDS_EACH (10: Sancho's timed
# run, after WARMUP seconds, 2, for its JIT), OURS_SECONDS (5: about how long
# ggp-asp's run lasts; its playout count comes from a short trial run),
# SANCHO_TIMEOUT (300: seconds Sancho may take in all, building its network
# included), METHOD (depthcharge, or generic: Sancho's machine through
# ggp-base's generic StateMachine calls), JAVA_OPTS (-Xmx4g, as Sancho's run.sh),
# GAMES (../shared/games), SANCHO (../shared/tools/sancho),
# BIN (target/release/ggp-asp).
set -euo pipefail
bin=${BIN:-target/release/ggp-asp}
games=${GAMES:-../shared/games}
sancho=$(cd "${SANCHO:-../shared/tools/sancho}" && pwd)
core=${CORE:-1}
secs=${SECONDS_EACH:-10}
warmup=${WARMUP:-2}
ours_secs=${OURS_SECONDS:-5}
sancho_timeout=${SANCHO_TIMEOUT:-300}
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
  set -- ticTacToe connectFour breakthrough checkers reversi
fi
for g in "$@"; do
  [ -f "$games/$g.kif" ] || { echo "$0: no game $games/$g.kif" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "$0: no binary $bin (cargo build --release, or BIN=...)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp=$(printf '%s:' "$sancho"/lib/*.jar)
javac -nowarn -d "$tmp/classes" -cp "$cp" "$here/sancho_speed/SanchoSpeed.java"
# Sancho's configuration, as its run.sh sets it up (it reads data/cfg/$HOSTNAME.properties)
mkdir -p "$tmp/work/data/cfg"
cp "$sancho/data/cfg/bench.properties" "$tmp/work/data/cfg/"
read -r -a java_opts <<< "${JAVA_OPTS:--Xmx4g}"

# a rate as a whole number; anything else (a failure) as it is
fmt() { if [[ $1 =~ ^[0-9.]+$ ]]; then printf '%.0f' "$1"; else printf '%s' "$1"; fi; }
# field after KEY on a line: `field "playouts/s" LINE`
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<< "$2"; }

echo "| game | Sancho playouts/s (its rollout call) | ggp-asp playouts/s (its playout loop) | ratio (ggp-asp / Sancho) | ggp-asp playouts/s (generic calls) | avg length Sancho / ggp-asp |"
echo "|---|---:|---:|---:|---:|---:|"
for g in "$@"; do
  kif=$(cd "$(dirname "$games/$g.kif")" && pwd)/$g.kif
  s_rate='failed' s_len='-'
  status=0
  s_line=$(cd "$tmp/work" && HOSTNAME=bench METHOD=${METHOD:-depthcharge} \
    timeout -k 10 "$sancho_timeout" taskset -c "$core" java "${java_opts[@]}" \
    -cp "$tmp/classes:$cp" SanchoSpeed "$kif" "$secs" "$warmup" 2> "$tmp/sancho-$g.err") || status=$?
  if [ "$status" -eq 0 ] && [ -n "$s_line" ]; then
    echo "sancho: $s_line" >&2
    s_rate=$(field playouts/s "$s_line")
    s_len=$(sed -n 's/.* avg_length=\([^ ]*\).*/\1/p' <<< "$s_line")
  else
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
      s_rate="timeout (${sancho_timeout} s)"
    elif grep -q OutOfMemoryError "$tmp/sancho-$g.err"; then
      s_rate="out of memory (${java_opts[*]})"
    fi
    echo "sancho: $g failed, exit $status; last lines of its stderr:" >&2
    tail -5 "$tmp/sancho-$g.err" >&2 || true
  fi

  # ggp-asp: a short trial sizes the timed run to about OURS_SECONDS
  o_rate='failed' o_len='-'
  trial=$(taskset -c "$core" "$bin" simulate "$kif" --engine propnet --playouts 200 2>&1) || trial=''
  t_rate=$(awk '/^speed:/ { print $2 }' <<< "$trial")
  if [ -n "$t_rate" ]; then
    n=$(awk -v r="$t_rate" -v s="$ours_secs" 'BEGIN { n = int(r * s); print (n < 20 ? 20 : n) }')
    out=$(taskset -c "$core" "$bin" simulate "$kif" --engine propnet --playouts "$n" 2>&1) || out=''
    o_rate=$(awk '/^speed:/ { print $2 }' <<< "$out")
    o_len=$(awk '/^playouts:/ { print $NF }' <<< "$out")
    echo "ggp-asp: $g $(grep -E '^(engine|playouts|speed):' <<< "$out" | tr '\n' ' ' || true)" >&2
    [ -n "$o_rate" ] || o_rate='failed'
  else
    echo "ggp-asp: $g failed: $(tail -3 <<< "$trial")" >&2
  fi

  # ggp-asp's own playout loop, timed by `bench playouts`
  l_rate='failed'
  loop=$(taskset -c "$core" "$bin" bench playouts "$kif" --engine propnet --threads 1 \
    --seconds "$ours_secs" --json 2>/dev/null) || loop=''
  l_rate=$(sed -n 's/.*"playouts_per_s":\([0-9.]*\).*/\1/p' <<< "$loop")
  [ -n "$l_rate" ] || l_rate='failed'
  echo "ggp-asp: $g playout loop $l_rate playouts/s" >&2

  ratio='-'
  if [[ $s_rate =~ ^[0-9.]+$ && $l_rate =~ ^[0-9.]+$ ]]; then
    ratio=$(awk -v a="$l_rate" -v b="$s_rate" 'BEGIN { printf "%.2f", a / b }')
  fi
  echo "| $g | $(fmt "$s_rate") | $(fmt "$l_rate") | $ratio | $(fmt "$o_rate") | $s_len / $o_len |"
done
