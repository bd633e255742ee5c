//! Boards: a state drawn as a grid when the game's rules have one, found
//! from the fluents, never from the game's name.
//!
//! A relation of fluents is a board when all its arguments are constants,
//! two of them (or four: a board of boards, as sudoku's
//! `(cell ?i ?j ?k ?l ?v)`) range over small domains, the coordinates, and
//! one more, the content, holds one value per square in every state seen
//! (`(cell 1 2 b)`, connect four's `(cell ?x ?y red)`). A relation with two
//! numbered arguments and no content is a board of marks (lights out's
//! `(on 2 3)`, a maze's `(at 1 1)`). The domains come from the relaxed
//! reachable model of the rules (every fluent `init` and `next` can make),
//! so an empty row is still drawn; when the rules do not ground quickly they
//! come from the states shown.
//!
//! Layout: the first coordinate gives the rows, the second the columns, in
//! increasing order; a board with letters for one coordinate and numbers
//! for the other is drawn as chess draws it, letters left to right and the
//! highest number on top. A coordinate that a move names on its own (connect
//! four's `(drop ?x)` over the values of `?x` in `(cell ?x ?y ?p)`) runs
//! across, and the other rises from the bottom, as pieces dropped fall. A board of boards puts the first two coordinates
//! outside (which small board) and the last two inside. The fluents of
//! other relations are listed beside the board.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::gdl::print::term_to_string;
use crate::gdl::{kw, Game, Sym, Term};
use crate::reasoner::ground::{self, Limits};

/// Coordinates with more values than this are not a board's.
const MAX_SIDE: usize = 26;
/// A board of boards: at most this many values on each of its coordinates.
const MAX_INNER_SIDE: usize = 9;

/// How a game's states are drawn: a board and the rest listed, or only the
/// list of fluents.
#[derive(Clone, Debug)]
pub struct View {
    board: Option<Board>,
}

/// One coordinate: the argument position and its values in drawing order.
#[derive(Clone, Debug)]
struct Axis {
    pos: usize,
    values: Vec<Term>,
}

/// A relation drawn as a grid.
#[derive(Clone, Debug)]
struct Board {
    rel: Sym,
    arity: usize,
    /// The content's argument; `None` for a board of marks.
    content: Option<usize>,
    /// Outer axis first when nested.
    rows: Vec<Axis>,
    cols: Vec<Axis>,
}

/// How to draw: plain text, or with ANSI colours.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colour when standard output is a terminal and `NO_COLOR` is unset or
    /// empty (<https://no-color.org>).
    pub fn for_stdout() -> Style {
        use std::io::IsTerminal;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }
}

impl View {
    /// Finds the board of `game`, if it has one. `seen` are states that will
    /// be drawn (their fluents, without `true`): they check that a content
    /// argument holds one value per square, and give the domains when the
    /// rules do not ground within a small budget.
    pub fn of(game: &Game, seen: &[Vec<Term>]) -> View {
        let (mut universe, dropped) = reachable(game).unwrap_or_default();
        universe.extend(seen.iter().flatten().cloned());
        universe.sort();
        universe.dedup();
        let mut groups: BTreeMap<(Sym, usize), Vec<&Term>> = BTreeMap::new();
        for t in &universe {
            if let Term::Func(f, args) = t {
                groups.entry((*f, args.len())).or_default().push(t);
            }
        }
        let board = groups
            .iter()
            .filter_map(|(&(rel, arity), terms)| {
                let board = find_board(game, rel, arity, terms, seen, &dropped)?;
                let squares: usize = board
                    .rows
                    .iter()
                    .chain(&board.cols)
                    .map(|a| a.values.len())
                    .product();
                let contents = board.content.map_or(1, |p| {
                    let mut v: Vec<&Term> = terms.iter().map(|t| &t.args()[p]).collect();
                    v.sort();
                    v.dedup();
                    v.len()
                });
                Some(((squares, std::cmp::Reverse(contents)), board))
            })
            // The most squares, then the fewest kinds of content (hex's
            // `(cell c 1 red)` over its `(connected 3 c 1)`, a group per
            // square); ties to the first relation by name.
            .max_by(|(n, a), (m, b)| {
                n.cmp(m)
                    .then_with(|| game.symbols.name(b.rel).cmp(game.symbols.name(a.rel)))
            })
            .map(|(_, b)| b);
        View { board }
    }

    /// Whether a board was found.
    pub fn has_board(&self) -> bool {
        self.board.is_some()
    }

    /// The state's board and, beside it, its other fluents; without a board,
    /// the fluents one per line.
    pub fn render(&self, game: &Game, state: &[Term], style: Style) -> String {
        let mut sorted: Vec<&Term> = state.iter().collect();
        sorted.sort();
        let Some(board) = &self.board else {
            let mut out = String::new();
            for t in sorted {
                let _ = writeln!(out, "{}", term_to_string(t, &game.symbols));
            }
            return out;
        };
        let (on_board, rest): (Vec<&Term>, Vec<&Term>) =
            sorted.into_iter().partition(|t| board.owns(t));
        let grid = board.draw(game, &on_board, style);
        let others: Vec<String> = rest
            .iter()
            .map(|t| term_to_string(t, &game.symbols))
            .collect();
        beside(&grid, &others)
    }
}

/// A state as a grid of texts, for a page to draw (the service's boards):
/// the same board as [`View::render`], its squares by row and column.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Grid {
    /// The columns' names (empty for a board of boards).
    pub columns: Vec<String>,
    /// Each row's name (empty for a board of boards) and its squares: the
    /// content, `#` for a mark, `None` for an empty square.
    pub rows: Vec<(String, Vec<Option<String>>)>,
    /// A board of boards: a rule after every this many rows and columns.
    pub block: Option<(usize, usize)>,
    /// The state's other fluents.
    pub others: Vec<String>,
}

impl View {
    /// The state as a [`Grid`]: `None` without a board (the page lists the
    /// fluents then).
    pub fn grid(&self, game: &Game, state: &[Term]) -> Option<Grid> {
        let board = self.board.as_ref()?;
        let mut sorted: Vec<&Term> = state.iter().collect();
        sorted.sort();
        let (on_board, rest): (Vec<&Term>, Vec<&Term>) =
            sorted.into_iter().partition(|t| board.owns(t));
        let name = |t: &Term| term_to_string(t, &game.symbols);
        let squares = board.squares(game, &on_board);
        let nested = board.rows.len() == 2;
        let rows = product(&board.rows)
            .into_iter()
            .map(|r| {
                let label = if nested {
                    String::new()
                } else {
                    name(&board.rows[0].values[r[0]])
                };
                let cells = product(&board.cols)
                    .into_iter()
                    .map(|c| squares.get(&(r.clone(), c)).cloned())
                    .collect();
                (label, cells)
            })
            .collect();
        Some(Grid {
            columns: if nested {
                Vec::new()
            } else {
                board.cols[0].values.iter().map(name).collect()
            },
            rows,
            block: nested.then(|| (board.rows[1].values.len(), board.cols[1].values.len())),
            others: rest.iter().map(|t| name(t)).collect(),
        })
    }
}

impl Board {
    fn owns(&self, t: &Term) -> bool {
        matches!(t, Term::Func(f, args) if *f == self.rel && args.len() == self.arity)
    }

    /// The grid's lines: a header of column names (for a flat board), then
    /// one line per row with its name.
    /// Square (row indices, column indices) -> its content's text (`#` on a
    /// board of marks).
    fn squares(
        &self,
        game: &Game,
        fluents: &[&Term],
    ) -> BTreeMap<(Vec<usize>, Vec<usize>), String> {
        let name = |t: &Term| term_to_string(t, &game.symbols);
        let mut squares: BTreeMap<(Vec<usize>, Vec<usize>), String> = BTreeMap::new();
        for t in fluents {
            let args = t.args();
            let index = |axes: &[Axis]| -> Option<Vec<usize>> {
                axes.iter()
                    .map(|a| a.values.iter().position(|v| *v == args[a.pos]))
                    .collect()
            };
            let (Some(r), Some(c)) = (index(&self.rows), index(&self.cols)) else {
                continue;
            };
            let text = match self.content {
                Some(p) => name(&args[p]),
                None => "#".to_string(),
            };
            squares.insert((r, c), text);
        }
        squares
    }

    fn draw(&self, game: &Game, fluents: &[&Term], style: Style) -> Vec<String> {
        let name = |t: &Term| term_to_string(t, &game.symbols);
        let squares = self.squares(game, fluents);
        let width = squares
            .values()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(1);
        let row_keys = product(&self.rows);
        let col_keys = product(&self.cols);
        let nested = self.rows.len() == 2;
        let label_width = if nested {
            0
        } else {
            self.rows[0]
                .values
                .iter()
                .map(|v| name(v).chars().count())
                .max()
                .unwrap_or(1)
        };
        let cell = |text: Option<&String>| -> String {
            match text {
                Some(t) => {
                    let padded = format!("{t:>width$}");
                    paint(&padded, t, style)
                }
                None => {
                    let dot = format!("{:>width$}", ".");
                    if style.color {
                        format!("\x1b[2m{dot}\x1b[0m")
                    } else {
                        dot
                    }
                }
            }
        };
        let mut lines = Vec::new();
        if !nested {
            let header: Vec<String> = self.cols[0]
                .values
                .iter()
                .map(|v| format!("{:>width$}", name(v)))
                .collect();
            lines.push(format!("{:label_width$} {}", "", header.join(" ")));
        }
        for (ri, r) in row_keys.iter().enumerate() {
            if nested && ri > 0 && r[1] == 0 {
                // A rule between the outer rows.
                let inner = self.cols[1].values.len();
                let block = "-".repeat(width * inner + inner - 1);
                let blocks = vec![block; self.cols[0].values.len()];
                lines.push(blocks.join("-+-"));
            }
            let mut line = String::new();
            if !nested {
                let _ = write!(line, "{:>label_width$} ", name(&self.rows[0].values[r[0]]));
            }
            for (ci, c) in col_keys.iter().enumerate() {
                if ci > 0 {
                    line.push_str(if nested && c[1] == 0 { " | " } else { " " });
                }
                line.push_str(&cell(squares.get(&(r.clone(), c.clone()))));
            }
            lines.push(line);
        }
        lines
    }
}

/// Every index tuple over the axes, the first axis slowest.
fn product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..a.values.len()).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// A content value in its colour: the same value the same colour in every
/// state of a run.
fn paint(padded: &str, value: &str, style: Style) -> String {
    if !style.color {
        return padded.to_string();
    }
    const PALETTE: [u8; 6] = [31, 34, 32, 33, 35, 36];
    let h = value
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
    let code = PALETTE[h as usize % PALETTE.len()];
    format!("\x1b[1;{code}m{padded}\x1b[0m")
}

/// `left`'s lines with `right`'s beside them, two spaces apart; the longer
/// list goes on below the shorter.
fn beside(left: &[String], right: &[String]) -> String {
    let visible = |s: &str| strip_ansi(s).chars().count();
    let width = left.iter().map(|l| visible(l)).max().unwrap_or(0);
    let mut out = String::new();
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map(String::as_str).unwrap_or("");
        match right.get(i) {
            Some(r) => {
                let pad = width - visible(l);
                let _ = writeln!(out, "{l}{}  {r}", " ".repeat(pad));
            }
            None => {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The fluents of the rules' relaxed reachable model, and the values of
/// each move with one argument (`(drop ?x)`: the columns), when grounding
/// the rules takes little: 3 s of CPU and 256 MiB (hex's 60 MiB and 20
/// million join steps fit; a game that needs more is drawn from the states
/// shown).
fn reachable(game: &Game) -> Option<(Vec<Term>, Vec<Vec<Term>>)> {
    let limits = Limits {
        max_memory: 256 << 20,
        max_join_steps: 200_000_000,
        max_time: std::time::Duration::from_secs(3),
    };
    let gp = ground::ground(game, &limits).ok()?;
    let arg = |t: u32, i: usize| gp.pool.args(t).get(i).map(|&f| gp.pool.to_term(f));
    let fluents = gp
        .atoms
        .iter()
        .filter(|&&t| gp.pool.functor(t) == kw::TRUE)
        .filter_map(|&t| arg(t, 0))
        .collect();
    let mut moves: BTreeMap<Sym, Vec<Term>> = BTreeMap::new();
    for &t in &gp.atoms {
        if gp.pool.functor(t) != kw::LEGAL {
            continue;
        }
        if let Some(Term::Func(f, args)) = arg(t, 1) {
            if let [a @ Term::Const(_)] = &args[..] {
                moves.entry(f).or_default().push(a.clone());
            }
        }
    }
    let dropped = moves
        .into_values()
        .map(|mut v| {
            v.sort();
            v.dedup();
            v
        })
        .collect();
    Some((fluents, dropped))
}

/// The board `rel/arity` makes, if it makes one (see the module documentation).
fn find_board(
    game: &Game,
    rel: Sym,
    arity: usize,
    terms: &[&Term],
    seen: &[Vec<Term>],
    dropped: &[Vec<Term>],
) -> Option<Board> {
    if terms
        .iter()
        .any(|t| t.args().iter().any(|a| !matches!(a, Term::Const(_))))
    {
        return None;
    }
    let domain = |pos: usize| -> Vec<Term> {
        let mut v: Vec<Term> = terms.iter().map(|t| t.args()[pos].clone()).collect();
        v.sort();
        v.dedup();
        sort_values(game, &mut v);
        v
    };
    let numeric = |values: &[Term]| values.iter().all(|v| number(game, v).is_some());
    match arity {
        2 => {
            let (a, b) = (domain(0), domain(1));
            let letters = |values: &[Term]| {
                values
                    .iter()
                    .all(|v| game.symbols.name(v.name().expect("a constant")).len() == 1)
            };
            // Two numbered coordinates, or a letter and a number: a board of
            // marks. Two named ones (blocks' `(on a b)`) are a relation, not
            // a board.
            let board_like = (numeric(&a) && numeric(&b))
                || (numeric(&a) && letters(&b))
                || (letters(&a) && numeric(&b));
            if !board_like || !sides_fit(&[&a, &b], MAX_SIDE) || a.len() * b.len() < 4 {
                return None;
            }
            Some(orient(
                game,
                rel,
                arity,
                None,
                vec![(0, a), (1, b)],
                dropped,
            ))
        }
        3 | 5 => {
            // The content is usually last; a few games put it first.
            let candidates: Vec<usize> = if arity == 3 {
                vec![2, 0, 1]
            } else {
                vec![4, 0]
            };
            for content in candidates {
                let coords: Vec<usize> = (0..arity).filter(|&p| p != content).collect();
                let domains: Vec<Vec<Term>> = coords.iter().map(|&p| domain(p)).collect();
                let refs: Vec<&Vec<Term>> = domains.iter().collect();
                let max = if arity == 3 { MAX_SIDE } else { MAX_INNER_SIDE };
                let squares: usize = domains.iter().map(Vec::len).product();
                if !sides_fit(&refs, max) || squares < 4 {
                    continue;
                }
                if !one_value_per_square(rel, arity, content, seen) {
                    continue;
                }
                let axes: Vec<(usize, Vec<Term>)> = coords.into_iter().zip(domains).collect();
                return Some(if arity == 3 {
                    orient(game, rel, arity, Some(content), axes, dropped)
                } else {
                    let mut it = axes.into_iter().map(|(pos, values)| Axis { pos, values });
                    let (a, b, c, d) = (it.next()?, it.next()?, it.next()?, it.next()?);
                    Board {
                        rel,
                        arity,
                        content: Some(content),
                        rows: vec![a, c],
                        cols: vec![b, d],
                    }
                });
            }
            None
        }
        _ => None,
    }
}

/// Rows and columns of a flat board (see the module documentation).
fn orient(
    game: &Game,
    rel: Sym,
    arity: usize,
    content: Option<usize>,
    axes: Vec<(usize, Vec<Term>)>,
    dropped: &[Vec<Term>],
) -> Board {
    let mut axes: Vec<Axis> = axes
        .into_iter()
        .map(|(pos, values)| Axis { pos, values })
        .collect();
    let numeric = |a: &Axis| a.values.iter().all(|v| number(game, v).is_some());
    let (first_num, second_num) = (numeric(&axes[0]), numeric(&axes[1]));
    let named_alone = |a: &Axis| {
        let mut values = a.values.clone();
        values.sort();
        dropped.contains(&values)
    };
    let (first_dropped, second_dropped) = (named_alone(&axes[0]), named_alone(&axes[1]));
    let across = if first_dropped != second_dropped {
        // Dropped pieces: the column a move names across, the rows rising.
        Some(if first_dropped { 0 } else { 1 })
    } else if first_num != second_num {
        // Files and ranks: letters across, the highest rank on top.
        Some(if first_num { 1 } else { 0 })
    } else {
        None
    };
    if let Some(across) = across {
        if across == 1 {
            axes.swap(0, 1);
        }
        axes[1].values.reverse();
        let (cols, rows) = (axes.remove(0), axes.remove(0));
        return Board {
            rel,
            arity,
            content,
            rows: vec![rows],
            cols: vec![cols],
        };
    }
    let (rows, cols) = (axes.remove(0), axes.remove(0));
    Board {
        rel,
        arity,
        content,
        rows: vec![rows],
        cols: vec![cols],
    }
}

fn sides_fit(domains: &[&Vec<Term>], max: usize) -> bool {
    domains.iter().all(|d| (2..=max).contains(&d.len()))
}

/// Whether, in every state seen, no two fluents of the relation agree on
/// every argument but `content`.
fn one_value_per_square(rel: Sym, arity: usize, content: usize, seen: &[Vec<Term>]) -> bool {
    seen.iter().all(|state| {
        let mut keys: Vec<Vec<&Term>> = state
            .iter()
            .filter(|t| matches!(t, Term::Func(f, a) if *f == rel && a.len() == arity))
            .map(|t| {
                t.args()
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != content)
                    .map(|(_, a)| a)
                    .collect()
            })
            .collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        keys.len() == n
    })
}

fn number(game: &Game, t: &Term) -> Option<i64> {
    match t {
        Term::Const(s) => game.symbols.name(*s).parse().ok(),
        _ => None,
    }
}

/// Numbers in numeric order, else names in alphabetical order.
fn sort_values(game: &Game, values: &mut [Term]) {
    if values.iter().all(|v| number(game, v).is_some()) {
        values.sort_by_key(|v| number(game, v));
    } else {
        values.sort_by(|a, b| {
            let name = |t: &Term| t.name().map(|s| game.symbols.name(s).to_string());
            name(a).cmp(&name(b))
        });
    }
}
