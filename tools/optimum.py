#!/usr/bin/env python3
"""Independent check of the optima stated in the puzzles' headers.

Each puzzle is modelled again here, directly in Python (not from its GDL), and
solved by breadth-first search (Lights Out: by enumerating its solution sets).
The shortest solution is written to tests/data/NAME.solution, one joint move per
line, in the format `ggp-asp simulate GAME --trace --replay FILE` reads; the
Rust tests replay those files on the GDL rules and expect goal 100 at a
terminal state, so the two models are checked against each other.

Run from the repository root: python3 tools/optimum.py
"""

import itertools
import os
from collections import deque

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def bfs(start, moves, is_goal):
    """Shortest move list from start to a goal state; moves(s) yields (move, next)."""
    parent = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if is_goal(s):
            path = []
            while parent[s] is not None:
                s, m = parent[s]
                path.append(m)
            return path[::-1], len(parent)
        for m, t in moves(s):
            if t not in parent:
                parent[t] = (s, m)
                queue.append(t)
    return None, len(parent)


def write(name, plan):
    with open(os.path.join(OUT, name + ".solution"), "w") as f:
        f.write(f"; an optimal solution of puzzles/{name}.kif ({len(plan)} moves), from tools/optimum.py\n")
        for m in plan:
            # A joint move is a list of one move per role; a move with arguments
            # is itself a list, a move without is a constant.
            move = f"({m})" if " " in m else m
            f.write(f"({move})\n")


def eight_puzzle():
    start = (3, 2, 1, 6, 7, 4, 0, 8, 5)  # 0 is the blank
    goal = (1, 2, 3, 4, 5, 6, 7, 8, 0)
    dirs = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}

    def moves(s):
        i = s.index(0)
        r, c = divmod(i, 3)
        for d, (dr, dc) in dirs.items():
            rr, cc = r + dr, c + dc
            if 0 <= rr < 3 and 0 <= cc < 3:
                t = list(s)
                j = rr * 3 + cc
                t[i], t[j] = t[j], t[i]
                yield f"move {d}", tuple(t)

    plan, seen = bfs(start, moves, lambda s: s == goal)
    return plan, seen


def lights_out():
    n = 5
    on = {(1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 1), (2, 3), (2, 4), (2, 5), (3, 2), (3, 3),
          (3, 5), (4, 1), (4, 3), (4, 4), (4, 5), (5, 1), (5, 2), (5, 3), (5, 4), (5, 5)}

    def press(board, r, c):
        for dr, dc in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
            if 1 <= r + dr <= n and 1 <= c + dc <= n:
                board ^= {(r + dr, c + dc)}
        return board

    # Light chasing: any choice for row 1 fixes the presses of rows 2 to 5; the
    # choices that leave row 5 dark are all the solutions (as sets of presses).
    solutions = []
    for first in itertools.product([0, 1], repeat=n):
        board = set(on)
        presses = []
        for c in range(1, n + 1):
            if first[c - 1]:
                board = press(board, 1, c)
                presses.append((1, c))
        for r in range(2, n + 1):
            for c in range(1, n + 1):
                if (r - 1, c) in board:
                    board = press(board, r, c)
                    presses.append((r, c))
        if not board:
            solutions.append(presses)
    best = min(solutions, key=len)
    assert sum(len(s) == len(best) for s in solutions) == 1
    return [f"press {r} {c}" for r, c in best], len(solutions)


def hanoi():
    discs = 5
    start = tuple("a" * discs)  # start[d] is the peg of disc d + 1

    def moves(s):
        for f in "abc":
            on_f = [d for d in range(discs) if s[d] == f]
            if not on_f:
                continue
            top = min(on_f)
            for t in "abc":
                on_t = [d for d in range(discs) if s[d] == t]
                if t != f and (not on_t or min(on_t) > top):
                    u = list(s)
                    u[top] = t
                    yield f"move {f} {t}", tuple(u)

    return bfs(start, moves, lambda s: s == tuple("c" * discs))


def buttons():
    def moves(s):
        p, q, r, x = s
        yield "a", (1 - p, q, r, x)
        yield "b", (q, p, r, x)
        yield "c", (p, r, q, x)
        yield "d", (p, q, x, r)

    return bfs((0, 0, 0, 0), moves, lambda s: s == (1, 1, 1, 1))


def maze():
    rows = ["S.#....", "#.#.##.", "....#..", ".####.#", "...#...", "##.#.#.", ".....#G"]
    dirs = {"north": (-1, 0), "south": (1, 0), "west": (0, -1), "east": (0, 1)}

    def moves(s):
        for d, (dr, dc) in dirs.items():
            r, c = s[0] + dr, s[1] + dc
            if 0 <= r < 7 and 0 <= c < 7 and rows[r][c] != "#":
                yield f"move {d}", (r, c)

    return bfs((0, 0), moves, lambda s: rows[s[0]][s[1]] == "G")


def blocks():
    # A state maps each block to what it stands on ("table" or a block).
    start = (("a", "table"), ("b", "table"), ("c", "a"), ("d", "b"))
    goal = (("a", "b"), ("b", "c"), ("c", "d"), ("d", "table"))

    def moves(s):
        under = dict(s)
        clear = [x for x in under if x not in under.values()]
        for x in clear:
            for y in clear:
                if x != y:
                    yield f"stack {x} {y}", tuple(sorted({**under, x: y}.items()))
            if under[x] != "table":
                yield f"unstack {x}", tuple(sorted({**under, x: "table"}.items()))

    return bfs(start, moves, lambda s: s == goal)


def sudoku4():
    # The 4x4 sudoku of sudoku4.kif: blank cells are 0. Every solution fills
    # the blanks, one per move, so the optimum is their number; the search
    # enumerates all solutions (to confirm there is one) and fills in row order.
    grid = [[1, 0, 0, 4], [0, 0, 0, 0], [2, 1, 0, 0], [4, 0, 2, 0]]
    blanks = [(r, c) for r in range(4) for c in range(4) if grid[r][c] == 0]

    def fits(r, c, v):
        box = [(rr, cc) for rr in range(4) for cc in range(4) if (rr // 2, cc // 2) == (r // 2, c // 2)]
        return all(grid[r][k] != v and grid[k][c] != v for k in range(4)) and all(
            grid[rr][cc] != v for rr, cc in box
        )

    solutions = []

    def fill(i):
        if i == len(blanks):
            solutions.append([f"fill {r + 1} {c + 1} {grid[r][c]}" for r, c in blanks])
            return
        r, c = blanks[i]
        for v in range(1, 5):
            if fits(r, c, v):
                grid[r][c] = v
                fill(i + 1)
                grid[r][c] = 0

    fill(0)
    assert len(solutions) == 1
    return solutions[0], len(solutions)


def main():
    for name, solve in [("8puzzle", eight_puzzle), ("lightsout", lights_out), ("hanoi", hanoi),
                        ("buttons", buttons), ("maze", maze), ("blocks", blocks), ("sudoku4", sudoku4)]:
        plan, size = solve()
        write(name, plan)
        print(f"{name}: optimum {len(plan)} ({size} states or solutions examined)")


if __name__ == "__main__":
    main()
