#!/usr/bin/env python3
"""Fifteen-puzzle instances for puzzles/, with their optima found here,
independently of the solver: IDA* with the Manhattan distance (admissible, so
the first plan found at the final threshold is shortest).

Each instance is a seeded random walk of the blank from the goal (no move
undoing the one before); the walk's length only sets how far from the goal it
lands. The script writes puzzles/fifteenN.kif (N the optimum) and prints a line
per instance for puzzles/README.md, with the states IDA* expanded.

Three deeper instances come from the literature: Korf's 1985 set of 100
(instances 2, 1 and 3, optima 55, 57 and 59), turned to this goal (blank last)
by a half turn of the board and the tile numbers t -> 16 - t, which maps moves
to moves and keeps every optimum. Their optima are the paper's: IDA* with the
Manhattan distance needs 15 to 566 million expansions for them, hours here in
Python; `--korf` solves the first of them (55) again.

    python3 tools/fifteen.py            # writes the instances below
    python3 tools/fifteen.py --check    # solves them again, writes nothing
    python3 tools/fifteen.py --check --korf   # and Korf's instance 2 (minutes)
"""

import argparse
import random
import sys
from pathlib import Path

SIDE = 4
GOAL = tuple(list(range(1, SIDE * SIDE)) + [0])
# (seed, walk length): the instances of growing depth.
INSTANCES = [(1, 20), (2, 40), (3, 60), (5, 90)]
MOVES = {"up": -SIDE, "down": SIDE, "left": -1, "right": 1}
# (number, board with Korf's goal 0 1 2 ... 15 (blank first), optimum): Korf,
# "Depth-first iterative-deepening: an optimal admissible tree search",
# Artificial Intelligence 27 (1985), table of the 100 random instances.
KORF = [
    (2, "13 5 4 10 9 12 8 14 2 3 7 1 0 15 11 6", 55),
    (1, "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3", 57),
    (3, "14 7 8 2 13 11 10 4 9 12 5 0 3 6 1 15", 59),
]


def from_korf(board):
    """A board of Korf's (goal: blank first, then 1..15) for this goal (1..15,
    blank last): a half turn of the board, tile t renamed 16 - t."""
    tiles = [int(t) for t in board.split()]
    ours = [0] * (SIDE * SIDE)
    for i, t in enumerate(tiles):
        ours[SIDE * SIDE - 1 - i] = 0 if t == 0 else SIDE * SIDE - t
    return tuple(ours)


def neighbours(blank):
    r, c = divmod(blank, SIDE)
    out = []
    if r > 0:
        out.append(("up", blank - SIDE))
    if r < SIDE - 1:
        out.append(("down", blank + SIDE))
    if c > 0:
        out.append(("left", blank - 1))
    if c < SIDE - 1:
        out.append(("right", blank + 1))
    return out


def walk(seed, length):
    rng = random.Random(seed)
    board = list(GOAL)
    blank = board.index(0)
    back = None
    for _ in range(length):
        options = [(d, to) for d, to in neighbours(blank) if to != back]
        _, to = rng.choice(options)
        board[blank], board[to] = board[to], 0
        back, blank = blank, to
    return tuple(board)


def manhattan(board):
    h = 0
    for i, t in enumerate(board):
        if t:
            g = t - 1
            h += abs(i // SIDE - g // SIDE) + abs(i % SIDE - g % SIDE)
    return h


def ida_star(start):
    """The shortest plan (directions of the blank) and the states expanded."""
    board = list(start)
    path = []
    expanded = 0

    def search(blank, g, bound, h, back):
        nonlocal expanded
        f = g + h
        if f > bound:
            return f
        if h == 0:
            return True
        expanded += 1
        best = None
        for d, to in neighbours(blank):
            if to == back:
                continue
            t = board[to]
            g_t = t - 1
            # The tile moves from `to` to `blank`: its distance changes by one.
            before = abs(to // SIDE - g_t // SIDE) + abs(to % SIDE - g_t % SIDE)
            after = abs(blank // SIDE - g_t // SIDE) + abs(blank % SIDE - g_t % SIDE)
            board[blank], board[to] = t, 0
            path.append(d)
            r = search(to, g + 1, bound, h - before + after, blank)
            if r is True:
                return True
            path.pop()
            board[blank], board[to] = 0, t
            if best is None or r < best:
                best = r
        return best if best is not None else float("inf")

    blank = board.index(0)
    bound = manhattan(board)
    while True:
        r = search(blank, 0, bound, manhattan(board), None)
        if r is True:
            return list(path), expanded
        bound = r


def kif(name, start, optimum, expanded, seed, length, korf=None):
    limit = optimum + 4
    rows = [" ".join(" _" if t == 0 else f"{t:>2}" for t in start[r * SIDE:(r + 1) * SIDE]) for r in range(SIDE)]
    goal_rows = [" ".join(" _" if t == 0 else f"{t:>2}" for t in GOAL[r * SIDE:(r + 1) * SIDE]) for r in range(SIDE)]
    out = [
        f"; {name}.kif -- the sliding fifteen-puzzle, written for ggp-asp (tools/fifteen.py).",
        ";",
        "; Rules: fifteen numbered tiles and one blank on a 4x4 board; a move slides the",
        "; blank up, down, left or right (the neighbouring tile takes its place). The",
        "; goal is the order 1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 blank.",
        ";",
        ";   Start:          Goal:",
    ]
    for a, b in zip(rows, goal_rows):
        out.append(f";   {a}     {b}")
    if korf is None:
        out += [
            ";",
            f"; Known optimum: {optimum} moves (IDA* with the Manhattan distance in",
            f"; tools/fifteen.py, {expanded} states expanded; the start is a random walk of",
            f"; {length} moves from the goal, seed {seed}). The game ends when the goal order",
            f"; is reached (goal 100) or after {limit} moves (goal 0).",
        ]
    else:
        out += [
            ";",
            f"; Known optimum: {optimum} moves: Korf's instance {korf} (Artificial",
            "; Intelligence 27, 1985), turned to this goal by a half turn of the board",
            "; and the tile numbers t -> 16 - t (tools/fifteen.py). The game ends when",
            f"; the goal order is reached (goal 100) or after {limit} moves (goal 0).",
        ]
    out += [
        "",
        "(role player)",
        "",
    ]
    for i, t in enumerate(start):
        r, c = divmod(i, SIDE)
        out.append(f"(init (cell {r + 1} {c + 1} {'b' if t == 0 else t}))")
    out += [
        "(init (step 0))",
        "",
        "; The blank moves in direction ?d from (?r ?c) to (?r2 ?c2).",
        "(<= (neighbour up ?r ?c ?r2 ?c) (index ?c) (coordsucc ?r2 ?r))",
        "(<= (neighbour down ?r ?c ?r2 ?c) (index ?c) (coordsucc ?r ?r2))",
        "(<= (neighbour left ?r ?c ?r ?c2) (index ?r) (coordsucc ?c2 ?c))",
        "(<= (neighbour right ?r ?c ?r ?c2) (index ?r) (coordsucc ?c ?c2))",
        "",
        "(<= (legal player (move ?d))",
        "    (true (cell ?r ?c b))",
        "    (neighbour ?d ?r ?c ?r2 ?c2))",
        "",
        "; The cell the blank moves into; its tile moves to where the blank was.",
        "(<= (target ?r2 ?c2)",
        "    (does player (move ?d))",
        "    (true (cell ?r ?c b))",
        "    (neighbour ?d ?r ?c ?r2 ?c2))",
        "",
        "(<= (next (cell ?r2 ?c2 b))",
        "    (target ?r2 ?c2))",
        "(<= (next (cell ?r ?c ?t))",
        "    (true (cell ?r ?c b))",
        "    (target ?r2 ?c2)",
        "    (true (cell ?r2 ?c2 ?t)))",
        "(<= (next (cell ?r ?c ?t))",
        "    (true (cell ?r ?c ?t))",
        "    (distinct ?t b)",
        "    (not (target ?r ?c)))",
        "",
        "(<= (next (step ?n2))",
        "    (true (step ?n))",
        "    (succ ?n ?n2))",
        "",
        "(<= solved",
    ]
    cells = []
    for i, t in enumerate(GOAL):
        r, c = divmod(i, SIDE)
        cells.append(f"(true (cell {r + 1} {c + 1} {'b' if t == 0 else t}))")
    for k in range(0, len(cells), 4):
        out.append("    " + " ".join(cells[k:k + 4]) + (")" if k + 4 >= len(cells) else ""))
    out += [
        "",
        "(<= terminal solved)",
        f"(<= terminal (true (step {limit})))",
        "",
        "(<= (goal player 100) solved)",
        "(<= (goal player 0) (not solved))",
        "",
        "(index 1) (index 2) (index 3) (index 4)",
        "(coordsucc 1 2) (coordsucc 2 3) (coordsucc 3 4)",
        "",
        " ".join(f"(succ {n} {n + 1})" for n in range(limit)),
        "",
    ]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="solve again, write nothing")
    ap.add_argument("--korf", action="store_true", help="with --check: Korf's instance 2 too (minutes)")
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    for seed, length in INSTANCES:
        start = walk(seed, length)
        plan, expanded = ida_star(start)
        name = f"fifteen{len(plan)}"
        print(f"| `{name}.kif` | 1 | fifteen-puzzle, seed {seed}, walk {length} | {len(plan)} | {len(plan) + 4} | IDA* expanded {expanded} |")
        if not args.check:
            (root / "puzzles" / f"{name}.kif").write_text(kif(name, start, len(plan), expanded, seed, length))
            (root / "tests" / "data" / f"{name}.solution").write_text(
                f"; an optimal solution of puzzles/{name}.kif ({len(plan)} moves), from tools/fifteen.py\n"
                + "".join(f"((move {d}))\n" for d in plan))
    for number, board, optimum in KORF:
        start = from_korf(board)
        name = f"fifteen{optimum}"
        if args.check:
            if args.korf and number == 2:
                plan, expanded = ida_star(start)
                assert len(plan) == optimum, (number, len(plan))
                print(f"Korf's instance {number}: {len(plan)} moves, IDA* expanded {expanded}")
            continue
        print(f"| `{name}.kif` | 1 | fifteen-puzzle, Korf's instance {number} | {optimum} | {optimum + 4} |")
        (root / "puzzles" / f"{name}.kif").write_text(kif(name, start, optimum, 0, 0, 0, korf=number))
    return 0


if __name__ == "__main__":
    sys.exit(main())
