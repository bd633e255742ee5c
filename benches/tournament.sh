#!/usr/bin/env bash
# The tournament of the issue "A legal move at every turn": every valid
# multi-player game of the corpus (manifest.tsv: two roles or more, canonical)
# once, our player (`ggp-asp serve`, started once, its log kept) against the
# referee's random players through the HTTP protocol, as a game manager runs
# it. Games `ggp-asp check` rejects are skipped and listed. Prints a table:
# games played, errors and late replies, the 10 slowest replies, our score
# and the engine our player used per game. A benchmark, not for CI: every
# match runs on the clocks given.
#
#   benches/tournament.sh | tee tournament.txt               # start 10 s, play 2 s
#   benches/tournament.sh --limit 3 --start 3 --play 1       # a quick try
#   benches/tournament.sh --games 'chess|checkers' --seat 1 --jobs 2
#
# Options: --seat N (our role, 0 the first; the last one on games with fewer
# roles), --start S (10), --play S (2), --games REGEX (game names, bash =~),
# --jobs N (matches at once, 4: matches wait on their clocks, so several at
# once finish sooner), --limit N (only the first N valid games), --port P
# (19147), --out DIR (target/tournament/DATE-TIME: the player's log, each
# match's JSON and log, results.jsonl).
# Environment: GAMES (../shared/games), BIN (target/release/ggp-asp),
# SERVE_ARGS (more flags for `ggp-asp serve`, split at spaces).
set -euo pipefail
usage="usage: $0 [--seat N] [--start S] [--play S] [--games REGEX] [--jobs N] [--limit N] [--port P] [--out DIR]"
seat=0 start=10 play=2 filter='' jobs=4 limit=0 port=19147 out=''
while [ $# -gt 0 ]; do
  case $1 in
    --seat | --start | --play | --games | --jobs | --limit | --port | --out)
      if [ $# -lt 2 ]; then
        echo "$usage" >&2
        exit 2
      fi
      case $1 in
        --seat) seat=$2 ;;
        --start) start=$2 ;;
        --play) play=$2 ;;
        --games) filter=$2 ;;
        --jobs) jobs=$2 ;;
        --limit) limit=$2 ;;
        --port) port=$2 ;;
        --out) out=$2 ;;
      esac
      shift 2
      ;;
    *)
      echo "$usage" >&2
      exit 2
      ;;
  esac
done
bin=${BIN:-target/release/ggp-asp}
games=${GAMES:-../shared/games}
out=${out:-target/tournament/$(date +%Y%m%d-%H%M%S)}
read -ra serve_args <<<"${SERVE_ARGS:-}"
url=http://127.0.0.1:$port
mkdir -p "$out/matches"

# The games: multi-player, canonical, loaded by `ggp-asp check`.
selected=()
rejected=()
while IFS=$'\t' read -r name file roles; do
  if [ -n "$filter" ] && ! [[ $name =~ $filter ]]; then
    continue
  fi
  if [ "$limit" -gt 0 ] && [ ${#selected[@]} -ge "$limit" ]; then
    break
  fi
  if "$bin" check "$games/$file" >/dev/null 2>>"$out/check.log"; then
    selected+=("$name"$'\t'"$file"$'\t'"$roles")
  else
    rejected+=("$name")
  fi
done < <(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["roles"] >= 2 && $col["canonical"] == "yes" {
    print $col["name"] "\t" $col["file"] "\t" $col["roles"] }' "$games/manifest.tsv")

# Our player, started once; its log (plain text: no colour codes in a file)
# names the engine of every match.
"$bin" serve --port "$port" "${serve_args[@]}" >"$out/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  if grep -q "listening on" "$out/serve.log"; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "$0: the player did not start:" >&2
    cat "$out/serve.log" >&2
    exit 1
  fi
  sleep 0.1
done
if ! grep -q "listening on" "$out/serve.log"; then
  echo "$0: the player does not listen on port $port" >&2
  exit 1
fi

# One match: our player in seat $seat, random players elsewhere. Its JSON
# record gets the game's name, our seat and the engines our log names for
# the match (in order of appearance, joined by '>').
stamp=$(date +%s)
play_one() {
  local name=$1 file=$2 roles=$3 i=$4
  local ours=$((seat < roles ? seat : roles - 1))
  local id="tournament.$stamp.$i.${name//[^A-Za-z0-9_.-]/_}"
  local players=() r
  for ((r = 0; r < roles; r++)); do
    if [ "$r" -eq "$ours" ]; then
      players+=(--player "$url")
    else
      players+=(--player random)
    fi
  done
  local json="$out/matches/$name.json"
  if ! "$bin" match "$games/$file" "${players[@]}" --start "$start" --play "$play" \
    --seed "$((i + 1))" --match-id "$id" --json >"$json.tmp" 2>"$out/matches/$name.log"; then
    echo "tournament: $name: the match did not run (see $out/matches/$name.log)" >&2
    rm -f "$json.tmp"
    return
  fi
  local engines
  engines=$(grep -F "match $id:" "$out/serve.log" |
    grep -oE 'engine[ =:]+(prover|propnet|hybrid)' | sed -E 's/^engine[ =:]+//' |
    awk '!seen[$0]++' | paste -sd '>' -) || true
  jq -c --arg game "$name" --argjson seat "$ours" --arg engines "${engines:-?}" \
    '. + {game: $game, seat: $seat, our_engines: $engines}' "$json.tmp" >"$json"
  rm -f "$json.tmp"
  jq -r '"tournament: \(.game): \(.moves | length) steps, our score \(.goals[.roles[.seat]])"' \
    "$json" >&2
}

pids=()
i=0
for line in "${selected[@]}"; do
  IFS=$'\t' read -r name file roles <<<"$line"
  while [ "$(jobs -rp | grep -cvx "$server")" -ge "$jobs" ]; do
    wait -n || true
  done
  play_one "$name" "$file" "$roles" "$i" &
  pids+=($!)
  i=$((i + 1))
done
for p in "${pids[@]}"; do
  wait "$p" || true
done
if ! kill -0 "$server" 2>/dev/null; then
  echo "tournament: the player ended during the tournament (see $out/serve.log)" >&2
fi

shopt -s nullglob
records=("$out"/matches/*.json)
cat /dev/null "${records[@]}" >"$out/results.jsonl"

# The table. A reply is late when it came after its clock (the referee then
# played a random move for it); errors are every reply the referee could not
# use (late, illegal, refused or failed).
echo "tournament: start ${start} s, play ${play} s, our seat $seat, ${#selected[@]} games chosen, output in $out"
if [ ${#rejected[@]} -gt 0 ]; then
  echo "skipped (ggp-asp check rejects them, see $out/check.log): ${rejected[*]}"
fi
unplayed=()
for line in "${selected[@]}"; do
  name=${line%%$'\t'*}
  if [ ! -f "$out/matches/$name.json" ]; then
    unplayed+=("$name")
  fi
done
if [ ${#unplayed[@]} -gt 0 ]; then
  echo "did not run (see $out/matches/GAME.log): ${unplayed[*]}"
fi
jq -rs '
  def ours: .roles[.seat];
  def starts: [{game, reply: "START", s: .reply_times.start_s[ours], clock: .reply_times.start_clock_s}];
  def plays: . as $m | [.reply_times.play_s[ours] | to_entries[]
    | {game: $m.game, reply: "PLAY \(.key + 1)", s: .value, clock: $m.reply_times.play_clock_s}];
  def replies: starts + plays;
  def late: [replies[] | select(.s > .clock)] | length;
  def errors: . as $m | [.errors[] | select(.role == ($m | ours))];
  (map(errors) | add // []) as $errs
  | "games played: \(length); our mean score: \(if length > 0 then (map(.goals[ours] // 0) | add / length * 10 | round / 10) else "-" end)",
    "errors: \($errs | length)\(if $errs == [] then "" else " (\($errs | group_by(.kind) | map("\(.[0].kind) \(length)") | join(", ")))" end)",
    "late replies: \(map(late) | add // 0)",
    ""
' "$out/results.jsonl"
echo "the 10 slowest replies"
jq -rs '
  def ours: .roles[.seat];
  ["game", "reply", "seconds", "clock"],
  ([.[] | . as $m
     | ([{reply: "START", s: .reply_times.start_s[ours], clock: .reply_times.start_clock_s}]
        + [.reply_times.play_s[ours] | to_entries[]
           | {reply: "PLAY \(.key + 1)", s: .value, clock: $m.reply_times.play_clock_s}])[]
     | [$m.game, .reply, .s, .clock]]
   | sort_by(-.[2]) | .[:10][])
  | @tsv' "$out/results.jsonl" | column -t -s $'\t'
echo
echo "per game"
jq -rs '
  def ours: .roles[.seat];
  ["game", "roles", "our role", "steps", "our score", "others", "errors", "worst s", "our engine"],
  (sort_by(.game)[] | . as $m
   | [.game, (.roles | length), ours, (.moves | length), (.goals[ours] // "-"),
      ([.roles[] | select(. != ($m | ours)) | $m.goals[.] // "-"] | map(tostring) | join("/")),
      ([.errors[] | select(.role == ($m | ours))] | length),
      ([.reply_times.start_s[ours]] + .reply_times.play_s[ours] | max),
      .our_engines])
  | @tsv' "$out/results.jsonl" | column -t -s $'\t'
