//! Goal support: whether goal 100 can still hold at the end of any line from
//! a state, told from the ground rules; the forward search prunes and focuses
//! with it.
//!
//! sudoku's empty grid judges only the final state, and any digit may be
//! written into any empty cell: a plain search fills 81 cells before it
//! learns anything. Read as a constraint problem it is easy, and the rules
//! say enough to read it so, when
//! - goal 100 is *monotone in the state*: the ground rules it reaches read
//!   `true` atoms only positively (sudoku's, once split by
//!   [`crate::gdl::split`]: "row 1 has a 1 in cell 3 and no 1 elsewhere" is a
//!   conjunction of per-cell facts);
//! - some fluents are *permanent*: their only way out of the next state is a
//!   rule copying them (`(<= (next (mark ?i ?j ?m)) (true (mark ?i ?j ?m)))`
//!   with nothing else in the body), so once true they stay true, and a
//!   `(not (true f))` over one of them fails for good;
//! - *unique-value invariants* (proven, see [`crate::asp::invariants`]) group
//!   fluents of which a state holds at most one: a cell's nine digits.
//!
//! From a state `s`, the fluents any later state may hold are over-estimated
//! by the relaxed reachability: `next` rules fired to a fixpoint with every
//! legal move at once, positive `true` literals read from what was reached,
//! `not (true f)` false only for the permanent fluents of `s`, and any other
//! negative literal taken as true. The final state holds none of the siblings
//! of a permanent fluent of `s`; and a candidate `g` whose group's other
//! candidates, taken away, leave goal 100 underivable is in no final state
//! with goal 100 either (such a state holds `g` and, by the invariant, no
//! sibling; the goal is monotone). Repeating that until nothing changes is
//! arc consistency: a digit twice in a row, a cell with no digit left, a
//! digit with no cell left in a row — each leaves goal 100 underivable, and
//! the state is a dead end. Each step is sound, so a dead end is a proof that
//! no line from `s` ends with goal 100 (not of what it would score below).

use std::collections::{HashMap, HashSet};

use crate::gdl::split::Unique;
use crate::gdl::{kw, Game, Phase, Relation, Term};
use crate::reasoner::ground::{AtomId, GroundProgram, GroundRule};

/// What an atom stands for in the relaxed reachability.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `(true f)`: the fluent's index.
    True(u32),
    /// `(next f)`: the fluent's index.
    Next(u32),
    /// `(does r m)`: its `legal` atom.
    Does(u32),
    Other,
}

/// The analysis of one game; see the module's documentation.
pub struct Support {
    /// Local atom numbers: `kind` and the rules over them.
    kind: Vec<Kind>,
    /// The rules of everything but goal 100, for the reachability.
    play: Vec<GroundRule>,
    /// The rules goal 100 reaches, dependencies first (no `not` among them).
    goal_rules: Vec<GroundRule>,
    /// Per atom, the goal rules that read it (see [`Counts`]); empty when
    /// the goal's rules are recursive, which counting cannot follow.
    readers: Vec<Vec<u32>>,
    goal: u32,
    fluents: Vec<Term>,
    index: HashMap<Term, u32>,
    /// Each fluent's `true` atom, if it has one.
    true_atom: Vec<Option<u32>>,
    permanent: Vec<bool>,
    /// Each fluent's unique-value group, and the groups' fluents.
    group_of: Vec<Option<u32>>,
    groups: Vec<Vec<u32>>,
}

/// What the analysis of a state found.
pub struct Analysis {
    /// The candidates of each group still open (no permanent fluent of the
    /// state in it): fluent indices.
    pub open: Vec<Vec<u32>>,
}

impl Support {
    /// The analysis over the ground rules `g` of `game`, or `None` when its
    /// first role has no goal 100, or goal 100 reads some state through
    /// `not`.
    pub fn new(game: &Game, g: &GroundProgram, unique: &[Unique]) -> Option<Support> {
        let pool = &g.pool;
        let n = g.atoms.len();
        let functor = |a: AtomId| pool.functor(g.atoms[a as usize]);
        let arg = |a: AtomId, i: usize| pool.args(g.atoms[a as usize])[i];

        // Fluents: the arguments of `true` and `next` atoms.
        let mut fluent_of_term: HashMap<u32, u32> = HashMap::new();
        let mut fluents: Vec<Term> = Vec::new();
        let mut fluent = |t: u32, fluents: &mut Vec<Term>| -> u32 {
            *fluent_of_term.entry(t).or_insert_with(|| {
                fluents.push(pool.to_term(t));
                fluents.len() as u32 - 1
            })
        };
        let legal_of = g.legal_of_does();
        let mut kind = vec![Kind::Other; n];
        for a in 0..n as AtomId {
            let f = functor(a);
            if f == kw::TRUE {
                kind[a as usize] = Kind::True(fluent(arg(a, 0), &mut fluents));
            } else if f == kw::NEXT {
                kind[a as usize] = Kind::Next(fluent(arg(a, 0), &mut fluents));
            } else if let Some(l) = legal_of[a as usize] {
                kind[a as usize] = Kind::Does(l);
            }
        }
        let mut true_atom = vec![None; fluents.len()];
        for (a, k) in kind.iter().enumerate() {
            if let Kind::True(f) = k {
                true_atom[*f as usize] = Some(a as u32);
            }
        }
        let is_static = |a: AtomId| {
            let t = pool.to_term(g.atoms[a as usize]);
            t.relation()
                .is_some_and(|r| game.relations.get(&r) == Some(&Phase::Static))
        };

        // Permanent: a `next` rule copying the fluent with nothing else but
        // static atoms (exact in the ground program, so true) in its body.
        let mut permanent = vec![false; fluents.len()];
        for r in &g.rules {
            let Kind::Next(f) = kind[r.head as usize] else {
                continue;
            };
            let copies = r.neg.is_empty()
                && r.pos.iter().any(|&p| kind[p as usize] == Kind::True(f))
                && r.pos
                    .iter()
                    .all(|&p| kind[p as usize] == Kind::True(f) || is_static(p));
            if copies {
                permanent[f as usize] = true;
            }
        }

        // Goal 100 and the rules it reaches.
        let goal = g.first_role_goal100(game)?;
        let goal_rules = goal_rules(g, goal)?;
        let readers = readers(n, &goal_rules);
        let play = g.rules.clone();

        // Unique-value groups over the fluents.
        let mut group_key: HashMap<(Relation, Vec<Term>), u32> = HashMap::new();
        let mut group_of = vec![None; fluents.len()];
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (i, f) in fluents.iter().enumerate() {
            let Some(rel) = f.relation() else { continue };
            let Some(u) = unique.iter().find(|u| u.fluent == rel) else {
                continue;
            };
            let key: Vec<Term> = u.key.iter().map(|&p| f.args()[p].clone()).collect();
            let next = groups.len() as u32;
            let gi = *group_key.entry((rel, key)).or_insert(next);
            if gi == next {
                groups.push(Vec::new());
            }
            groups[gi as usize].push(i as u32);
            group_of[i] = Some(gi);
        }
        let index = fluents
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i as u32))
            .collect();
        Some(Support {
            kind,
            play,
            goal_rules,
            readers,
            goal,
            fluents,
            index,
            true_atom,
            permanent,
            group_of,
            groups,
        })
    }

    /// Whether the analysis can say anything: some fluent is permanent.
    pub fn informative(&self) -> bool {
        self.permanent.iter().any(|&p| p)
    }

    /// Whether it groups fluents by unique-value invariants.
    pub fn has_groups(&self) -> bool {
        self.groups.iter().any(|g| g.len() > 1)
    }

    /// What it found, for the progress line.
    pub fn describe(&self) -> String {
        let permanent = self.permanent.iter().filter(|&&p| p).count();
        let groups = self.groups.iter().filter(|g| g.len() > 1).count();
        format!(
            "{permanent} of {} fluents stay once true, {groups} groups of values one at a time, goal 100 read through {} rules",
            self.fluents.len(),
            self.goal_rules.len()
        )
    }

    /// The fluent with index `i`.
    pub fn fluent(&self, i: u32) -> &Term {
        &self.fluents[i as usize]
    }

    /// The analysis of the state holding `state`; `None` when no line from it
    /// ends with goal 100.
    pub fn analyse(&self, state: &[Term]) -> Option<Analysis> {
        self.analyse_by(state, true)
    }

    /// [`Support::analyse`], by counting where the goal's rules allow it
    /// (`counting`), else by evaluating them whole at every question.
    fn analyse_by(&self, state: &[Term], counting: bool) -> Option<Analysis> {
        let here: Vec<u32> = state
            .iter()
            .filter_map(|f| self.index.get(f).copied())
            .collect();
        let mut certain = vec![false; self.fluents.len()];
        for &f in &here {
            certain[f as usize] = self.permanent[f as usize];
        }
        let mut possible = self.reach(&here, &certain);
        // The final state holds no sibling of a permanent fluent of `s`.
        let mut open = vec![true; self.groups.len()];
        for &f in &here {
            if certain[f as usize] {
                if let Some(g) = self.group_of[f as usize] {
                    open[g as usize] = false;
                    for &sib in &self.groups[g as usize] {
                        possible[sib as usize] = sib == f;
                    }
                }
            }
        }
        match self.counts(&possible).filter(|_| counting) {
            Some(mut counts) => self.consistent(&mut counts, &open, &mut possible)?,
            None => self.consistent(&mut Whole(self), &open, &mut possible)?,
        }
        let open = self
            .groups
            .iter()
            .enumerate()
            .filter(|(gi, _)| open[*gi])
            .map(|(_, group)| {
                group
                    .iter()
                    .copied()
                    .filter(|&f| possible[f as usize])
                    .collect()
            })
            .collect();
        Some(Analysis { open })
    }

    /// Arc consistency over the `open` groups: each candidate without which
    /// (its group's other candidates taken away) goal 100 is underivable
    /// leaves `possible`; `None` when goal 100 is underivable. `goal`
    /// answers the questions: by counting or by whole evaluation.
    fn consistent(
        &self,
        goal: &mut impl GoalOracle,
        open: &[bool],
        possible: &mut [bool],
    ) -> Option<()> {
        if !goal.holds(possible) {
            return None;
        }
        loop {
            let mut changed = false;
            for (gi, group) in self.groups.iter().enumerate() {
                if !open[gi] {
                    continue;
                }
                let candidates: Vec<u32> = group
                    .iter()
                    .copied()
                    .filter(|&f| possible[f as usize])
                    .collect();
                if candidates.len() < 2 {
                    continue;
                }
                for &c in &candidates {
                    let others: Vec<u32> = candidates
                        .iter()
                        .copied()
                        .filter(|&o| o != c && possible[o as usize])
                        .collect();
                    if !goal.holds_without(possible, &others) {
                        goal.drop_fluent(possible, c);
                        changed = true;
                    }
                }
            }
            if !goal.holds(possible) {
                return None;
            }
            if !changed {
                return Some(());
            }
        }
    }

    /// The goal's rules counted under `possible`, when they are not
    /// recursive.
    fn counts(&self, possible: &[bool]) -> Option<Counts<'_>> {
        if self.readers.is_empty() {
            return None;
        }
        let mut atom = vec![false; self.kind.len()];
        for (f, &on) in possible.iter().enumerate() {
            if let (true, Some(a)) = (on, self.true_atom[f]) {
                atom[a as usize] = true;
            }
        }
        let mut missing = Vec::with_capacity(self.goal_rules.len());
        let mut support = vec![0u32; self.kind.len()];
        // Dependencies first, and no recursion: one pass.
        for r in &self.goal_rules {
            let m = r.pos.iter().filter(|&&p| !atom[p as usize]).count() as u32;
            if m == 0 {
                support[r.head as usize] += 1;
                atom[r.head as usize] = true;
            }
            missing.push(m);
        }
        Some(Counts {
            s: self,
            atom,
            missing,
            support,
            undo: Vec::new(),
        })
    }

    /// The fluents any state reachable from the one holding `here` may hold
    /// (see the module's documentation), as a flag per fluent.
    fn reach(&self, here: &[u32], certain: &[bool]) -> Vec<bool> {
        let mut fluent = vec![false; self.fluents.len()];
        for &f in here {
            fluent[f as usize] = true;
        }
        let mut atom = vec![false; self.kind.len()];
        loop {
            for (a, k) in self.kind.iter().enumerate() {
                if let Kind::True(f) = k {
                    atom[a] = fluent[*f as usize];
                }
            }
            // The rules to a fixpoint under these fluents; `does` atoms
            // follow their `legal` atoms.
            loop {
                let mut changed = false;
                for r in &self.play {
                    if atom[r.head as usize] {
                        continue;
                    }
                    let pos_ok = r.pos.iter().all(|&p| match self.kind[p as usize] {
                        Kind::Does(l) => atom[l as usize],
                        _ => atom[p as usize],
                    });
                    let neg_ok = r.neg.iter().all(|&q| match self.kind[q as usize] {
                        Kind::True(f) => !certain[f as usize],
                        _ => true,
                    });
                    if pos_ok && neg_ok {
                        atom[r.head as usize] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            let mut grew = false;
            for (a, k) in self.kind.iter().enumerate() {
                if let Kind::Next(f) = k {
                    if atom[a] && !fluent[*f as usize] {
                        fluent[*f as usize] = true;
                        grew = true;
                    }
                }
            }
            if !grew {
                return fluent;
            }
        }
    }

    /// Whether goal 100 is derived when exactly the fluents flagged in
    /// `fluent` hold.
    fn goal_holds(&self, fluent: &[bool]) -> bool {
        let mut atom = vec![false; self.kind.len()];
        for (f, &on) in fluent.iter().enumerate() {
            if let (true, Some(a)) = (on, self.true_atom[f]) {
                atom[a as usize] = true;
            }
        }
        // Dependencies first: one pass, unless the goal's rules are recursive.
        loop {
            let mut changed = false;
            for r in &self.goal_rules {
                if !atom[r.head as usize] && r.pos.iter().all(|&p| atom[p as usize]) {
                    atom[r.head as usize] = true;
                    changed = true;
                }
            }
            if atom[self.goal as usize] {
                return true;
            }
            if !changed {
                return false;
            }
        }
    }
}

/// Answers arc consistency's questions: does goal 100 hold under
/// `possible`, with some fluents taken away?
trait GoalOracle {
    fn holds(&mut self, possible: &[bool]) -> bool;
    /// Whether it holds with `taken` taken out of `possible` for the question
    /// only.
    fn holds_without(&mut self, possible: &mut [bool], taken: &[u32]) -> bool;
    /// Takes `f` out of `possible` for good.
    fn drop_fluent(&mut self, possible: &mut [bool], f: u32);
}

/// The goal's rules evaluated whole at every question.
struct Whole<'a>(&'a Support);

impl GoalOracle for Whole<'_> {
    fn holds(&mut self, possible: &[bool]) -> bool {
        self.0.goal_holds(possible)
    }

    fn holds_without(&mut self, possible: &mut [bool], taken: &[u32]) -> bool {
        for &f in taken {
            possible[f as usize] = false;
        }
        let holds = self.0.goal_holds(possible);
        for &f in taken {
            possible[f as usize] = true;
        }
        holds
    }

    fn drop_fluent(&mut self, possible: &mut [bool], f: u32) {
        possible[f as usize] = false;
    }
}

/// Counting visits only the goal rules that read a fluent taken away (on
/// the empty sudoku, 729 questions a pass over 22,652 goal rules each were
/// a search's whole time when each was evaluated whole).
impl GoalOracle for Counts<'_> {
    fn holds(&mut self, _: &[bool]) -> bool {
        self.goal_holds()
    }

    fn holds_without(&mut self, _: &mut [bool], taken: &[u32]) -> bool {
        for &f in taken {
            self.remove(f);
        }
        let holds = self.goal_holds();
        self.restore();
        holds
    }

    fn drop_fluent(&mut self, possible: &mut [bool], f: u32) {
        possible[f as usize] = false;
        self.remove(f);
        self.keep();
    }
}

/// Goal 100's rules evaluated by counting: per rule, its positive literals
/// that are false; per atom, its rules with none. Taking a fluent away
/// visits the rules that read it, and an atom whose last rule fails goes
/// false in turn (sound without recursion: no atom supports itself).
/// Changes since the last [`Counts::keep`] are logged, so that
/// [`Counts::restore`] puts them back.
struct Counts<'a> {
    s: &'a Support,
    atom: Vec<bool>,
    missing: Vec<u32>,
    support: Vec<u32>,
    undo: Vec<Undo>,
}

/// One change of [`Counts`], to undo.
#[derive(Clone, Copy)]
enum Undo {
    /// The atom went false.
    Atom(u32),
    /// The rule lost one more literal.
    Rule(u32),
}

impl Counts<'_> {
    fn goal_holds(&self) -> bool {
        self.atom[self.s.goal as usize]
    }

    /// Takes fluent `f` away.
    fn remove(&mut self, f: u32) {
        let Some(a) = self.s.true_atom[f as usize] else {
            return;
        };
        let mut falling = vec![a];
        while let Some(a) = falling.pop() {
            if !self.atom[a as usize] {
                continue;
            }
            self.atom[a as usize] = false;
            self.undo.push(Undo::Atom(a));
            for &r in &self.s.readers[a as usize] {
                self.missing[r as usize] += 1;
                self.undo.push(Undo::Rule(r));
                if self.missing[r as usize] == 1 {
                    let head = self.s.goal_rules[r as usize].head;
                    self.support[head as usize] -= 1;
                    if self.support[head as usize] == 0 {
                        falling.push(head);
                    }
                }
            }
        }
    }

    /// Puts back everything taken away since the last [`Counts::keep`].
    fn restore(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Atom(a) => self.atom[a as usize] = true,
                Undo::Rule(r) => {
                    self.missing[r as usize] -= 1;
                    if self.missing[r as usize] == 0 {
                        let head = self.s.goal_rules[r as usize].head;
                        self.support[head as usize] += 1;
                    }
                }
            }
        }
    }

    /// Keeps what was taken away: [`Counts::restore`] no longer undoes it.
    fn keep(&mut self) {
        self.undo.clear();
    }
}

/// Per atom (of `n`), the rules of `rules` that read it positively; empty
/// when a rule reads an atom whose rules come at or after it (recursion, or
/// an order counting cannot follow in one pass).
fn readers(n: usize, rules: &[GroundRule]) -> Vec<Vec<u32>> {
    let mut last_rule_of = vec![None; n];
    for (i, r) in rules.iter().enumerate() {
        last_rule_of[r.head as usize] = Some(i);
    }
    let mut readers = vec![Vec::new(); n];
    for (i, r) in rules.iter().enumerate() {
        for &p in &r.pos {
            if last_rule_of[p as usize].is_some_and(|last| last >= i) {
                return Vec::new();
            }
            readers[p as usize].push(i as u32);
        }
    }
    readers
}

/// The rules `goal` reaches through their bodies, in an order that puts a
/// rule after the rules of the atoms it reads (where the rules allow);
/// `None` when one of them reads an atom through `not`.
fn goal_rules(g: &GroundProgram, goal: AtomId) -> Option<Vec<GroundRule>> {
    let mut rules_of: HashMap<AtomId, Vec<usize>> = HashMap::new();
    for (i, r) in g.rules.iter().enumerate() {
        rules_of.entry(r.head).or_default().push(i);
    }
    // Depth-first from the goal, emitting an atom's rules once the atoms
    // they read are out (post-order); each frame keeps its atom's children.
    let children = |a: AtomId| -> Vec<AtomId> {
        rules_of
            .get(&a)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .flat_map(|&i| g.rules[i].pos.iter().copied())
            .collect()
    };
    let mut seen: HashSet<AtomId> = HashSet::from([goal]);
    let mut order: Vec<usize> = Vec::new();
    let mut stack: Vec<(AtomId, Vec<AtomId>, usize)> = vec![(goal, children(goal), 0)];
    while let Some((a, kids, at)) = stack.pop() {
        if let Some(&c) = kids.get(at) {
            stack.push((a, kids, at + 1));
            if seen.insert(c) {
                stack.push((c, children(c), 0));
            }
            continue;
        }
        for &i in rules_of.get(&a).map(Vec::as_slice).unwrap_or(&[]) {
            if !g.rules[i].neg.is_empty() {
                return None;
            }
            order.push(i);
        }
    }
    Some(order.into_iter().map(|i| g.rules[i].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::Support;
    use crate::gdl::parser::parse_ground_terms;
    use crate::gdl::split::split;
    use crate::gdl::split::tests::{row, ROW};
    use crate::gdl::{parse, Game};
    use crate::reasoner::ground::{ground, Limits};

    /// The row of [`crate::gdl::split`]'s tests, split: its goal is then
    /// monotone, and the marks stay once made.
    fn support() -> (Game, Support) {
        let (game, unique) = row();
        let (game, _) = split(&game, &unique).expect("splits");
        let g = ground(&game, &Limits::default()).unwrap();
        let s = Support::new(&game, &g, &unique).expect("monotone goal");
        (game, s)
    }

    /// Open groups' candidates in a state, as (cell, digits) counts.
    fn open(game: &Game, s: &Support, state: &str) -> Option<Vec<usize>> {
        let state = parse_ground_terms(&format!("({state})"), &game.symbols).unwrap();
        let a = s.analyse(&state)?;
        Some(a.open.iter().map(Vec::len).collect())
    }

    #[test]
    fn a_repeated_digit_is_a_dead_end_and_the_rest_narrows() {
        let (game, s) = support();
        assert!(s.informative() && s.has_groups());
        assert_eq!(open(&game, &s, ""), Some(vec![3, 3, 3]));
        // Cells 2 and 3 keep 2 and 3.
        assert_eq!(open(&game, &s, "(mark 1 1)"), Some(vec![2, 2]));
        // Two cells filled: the last has one digit left.
        assert_eq!(open(&game, &s, "(mark 1 1) (mark 3 2)"), Some(vec![1]));
        assert_eq!(open(&game, &s, "(mark 1 1) (mark 2 1)"), None);
        assert_eq!(
            open(&game, &s, "(mark 1 1) (mark 2 2) (mark 3 3)"),
            Some(vec![])
        );
    }

    /// Counting answers every question as evaluating the goal's rules whole
    /// does: the same candidates left, the same dead ends, in every state of
    /// the row (each cell empty or holding one of the three digits).
    #[test]
    fn counting_and_whole_evaluation_agree() {
        let (game, s) = support();
        assert!(
            !s.readers.is_empty(),
            "the row's goal rules are not recursive"
        );
        let mut dead = 0;
        for code in 0..64 {
            let marks: Vec<String> = (0..3)
                .filter_map(|cell| {
                    let digit = (code >> (2 * cell)) & 3;
                    (digit > 0).then(|| format!("(mark {} {digit})", cell + 1))
                })
                .collect();
            let state =
                parse_ground_terms(&format!("({})", marks.join(" ")), &game.symbols).unwrap();
            let by_counts = s.analyse_by(&state, true).map(|a| a.open);
            let whole = s.analyse_by(&state, false).map(|a| a.open);
            assert_eq!(by_counts, whole, "{marks:?}");
            dead += usize::from(whole.is_none());
        }
        assert!(dead > 10, "{dead} dead ends");
    }

    /// A goal that reads the state through `not` gets no analysis.
    #[test]
    fn a_goal_through_negation_is_not_analysed() {
        let text = ROW.replace("(<= (goal p 100) good)", "(<= (goal p 100) (not open))");
        let game = Game::new(parse(&text, "row.kif").unwrap()).unwrap();
        let g = ground(&game, &Limits::default()).unwrap();
        assert!(Support::new(&game, &g, &[]).is_none());
    }
}
