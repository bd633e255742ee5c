//! The first step: gates from the ground rules, component by component in
//! topological order. A component that does not depend on the inputs is
//! folded to constants; a non-recursive atom becomes an OR of ANDs, factored
//! and shared; a recursive component becomes a loop of ORs.

use hashbrown::HashMap;

use super::{Block, Builder};
use crate::reasoner::ground::AtomId;
use crate::reasoner::propnet::lit::{Lit, Node};
use crate::reasoner::propnet::PropnetError;

/// A literal of a simplified rule: an atom of the component being built
/// (read positively), or a literal of a node built before it.
#[derive(Clone, Copy, Debug)]
enum RuleLit {
    Member(AtomId),
    Outside(Lit),
}

/// Per atom of a component, its rules simplified: each a list of literals.
type Simplified = Vec<Vec<Vec<RuleLit>>>;

impl Builder {
    /// A gate over `lits`, or the existing gate with the same kind and inputs.
    ///
    /// An OR over more than half of one role's `does` inputs is built as NOT of
    /// the OR over the others: a gate reading `does` is only read while a legal
    /// joint move is set, when exactly one `does` input of each role holds, and
    /// the complement is the smaller fan-in (a frame rule's "any move that does
    /// not touch this cell" becomes "not a move that touches it").
    pub(super) fn gate(&mut self, and: bool, lits: &[Lit]) -> Result<Node, PropnetError> {
        let mut key = lits.to_vec();
        key.sort_unstable();
        key.dedup();
        if let Some(&n) = self.dedup.get(&(and, key.clone())) {
            return Ok(n);
        }
        let mut body = key.clone();
        if !and {
            for r in 0..self.role_does.len() {
                let total = self.role_does[r].len();
                let mine: Vec<Lit> = body
                    .iter()
                    .copied()
                    .filter(|&l| !l.negated() && self.does_role.get(&l.node()) == Some(&r))
                    .collect();
                if mine.len() * 2 <= total || mine.len() < 2 {
                    continue;
                }
                let rest: Vec<Lit> = self.role_does[r]
                    .iter()
                    .map(|&n| Lit::pos(n))
                    .filter(|l| mine.binary_search(l).is_err())
                    .collect();
                body.retain(|l| mine.binary_search(l).is_err());
                let comp = self.junction(false, &rest)?;
                body.push(!comp);
                body.sort_unstable();
            }
            if body.contains(&Lit::TRUE) || body.contains(&!Lit::FALSE) {
                self.dedup.insert((and, key), Node::TRUE);
                return Ok(Node::TRUE);
            }
            if let [l] = body[..] {
                if !l.negated() {
                    self.dedup.insert((and, key), l.node());
                    return Ok(l.node());
                }
            }
        }
        let n = self.push_gate(and, &body)?;
        self.dedup.insert((and, key), n);
        Ok(n)
    }

    /// A literal for the AND (or OR) of `lits`: the literal itself when alone.
    pub(super) fn junction(&mut self, and: bool, lits: &[Lit]) -> Result<Lit, PropnetError> {
        match lits {
            [] => Ok(Lit::constant(and)),
            [l] => Ok(*l),
            _ => Ok(Lit::pos(self.gate(and, lits)?)),
        }
    }

    /// A new gate, depending on `does` when one of its inputs does.
    pub(super) fn push_gate(&mut self, and: bool, lits: &[Lit]) -> Result<Node, PropnetError> {
        if self.gates.len() >= self.max_nodes {
            return Err(PropnetError::TooManyNodes {
                limit: self.max_nodes,
            });
        }
        let mv = lits.iter().any(|&l| self.gates.is_move(l.node()));
        Ok(self.gates.push(and, lits, mv))
    }

    /// Components of the atom graph (body atom -> head), dependencies first.
    fn components(&self) -> Vec<Vec<AtomId>> {
        let n = self.gp.atoms.len();
        let mut deps: Vec<Vec<AtomId>> = vec![Vec::new(); n];
        for r in &self.gp.rules {
            deps[r.head as usize].extend(r.pos.iter().chain(&r.neg));
        }
        crate::gdl::graph::strongly_connected(deps.len(), |v, i| {
            deps[v].get(i).map(|&w| w as usize)
        })
        .into_iter()
        .map(|c| c.into_iter().map(|a| a as AtomId).collect())
        .collect()
    }

    pub(super) fn build_gates(&mut self) -> Result<(), PropnetError> {
        let rules_of = self.gp.rules_by_head();
        // Per atom: its position in the component being built (u32::MAX: outside).
        let mut comp_pos = vec![u32::MAX; self.gp.atoms.len()];
        for comp in self.components() {
            if comp.len() == 1
                && (self.node_of[comp[0] as usize].is_some()
                    || self.konst[comp[0] as usize].is_some())
            {
                continue; // an input, or a `does` of no role
            }
            for (i, &a) in comp.iter().enumerate() {
                comp_pos[a as usize] = i as u32;
            }
            let result = self.build_component(&comp, &comp_pos, &rules_of);
            for &a in &comp {
                comp_pos[a as usize] = u32::MAX;
            }
            result?;
        }
        Ok(())
    }

    /// Folds or compiles one component of atoms (`comp_pos` marks its members).
    fn build_component(
        &mut self,
        comp: &[AtomId],
        comp_pos: &[u32],
        rules_of: &[Vec<usize>],
    ) -> Result<(), PropnetError> {
        let recursive = comp.len() > 1
            || rules_of[comp[0] as usize]
                .iter()
                .any(|&r| self.gp.rules[r].pos.contains(&comp[0]));
        let (simplified, outside_dynamic) = self.simplify(comp, comp_pos, rules_of, recursive)?;
        if !recursive {
            let a = comp[0];
            let rs = &simplified[0];
            if rs.is_empty() {
                self.konst[a as usize] = Some(false);
            } else if rs.len() == 1 && rs[0].is_empty() {
                self.konst[a as usize] = Some(true);
            } else {
                let start = self.gates.next_node();
                let node = self.atom_gate(rs)?;
                self.node_of[a as usize] = Some(node);
                self.blocks.push(Block {
                    start,
                    end: self.gates.next_node(),
                    recursive: false,
                });
            }
            Ok(())
        } else if !outside_dynamic {
            self.fold_constant(comp, comp_pos, &simplified);
            Ok(())
        } else {
            self.compile_loop(comp, &simplified)
        }
    }

    /// The rules of each atom of `comp` with constant literals folded: a rule
    /// with a false literal is dropped, true literals are left out, and an
    /// atom with a rule left empty has that rule only. Also whether any
    /// literal read a node outside the component (even in a dropped rule).
    fn simplify(
        &self,
        comp: &[AtomId],
        comp_pos: &[u32],
        rules_of: &[Vec<usize>],
        recursive: bool,
    ) -> Result<(Simplified, bool), PropnetError> {
        let mut simplified = Vec::with_capacity(comp.len());
        let mut outside_dynamic = false;
        for &a in comp {
            let mut rs = Vec::new();
            let mut always = false;
            for &ri in &rules_of[a as usize] {
                let found = self.simplify_rule(a, ri, comp_pos, recursive, &mut outside_dynamic)?;
                let Some(lits) = found else {
                    continue;
                };
                if lits.is_empty() {
                    always = true;
                }
                rs.push(lits);
            }
            if always {
                rs = vec![Vec::new()];
            }
            simplified.push(rs);
        }
        Ok((simplified, outside_dynamic))
    }

    /// Rule `ri` of atom `a` simplified, or `None` when a literal is false;
    /// sets `outside_dynamic` when it reads a node outside the component.
    fn simplify_rule(
        &self,
        a: AtomId,
        ri: usize,
        comp_pos: &[u32],
        recursive: bool,
        outside_dynamic: &mut bool,
    ) -> Result<Option<Vec<RuleLit>>, PropnetError> {
        let r = &self.gp.rules[ri];
        let mut lits = Vec::new();
        for (&x, neg) in r
            .pos
            .iter()
            .map(|x| (x, false))
            .chain(r.neg.iter().map(|x| (x, true)))
        {
            if recursive && comp_pos[x as usize] != u32::MAX {
                if neg {
                    return Err(PropnetError::Rules(format!(
                        "ground atom {} depends on itself through 'not'",
                        self.atom_text(a)
                    )));
                }
                lits.push(RuleLit::Member(x));
                continue;
            }
            match (self.konst[x as usize], self.node_of[x as usize]) {
                (Some(v), _) if v == neg => return Ok(None),
                (Some(_), _) => {}
                // Atoms without a rule are false (no node, no constant yet).
                (None, None) if !neg => return Ok(None),
                (None, None) => {}
                (None, Some(node)) => {
                    *outside_dynamic = true;
                    lits.push(RuleLit::Outside(Lit::new(node, neg)));
                }
            }
        }
        Ok(Some(lits))
    }

    /// A recursive component that reads no dynamic node: its least fixpoint,
    /// now, as constants.
    fn fold_constant(&mut self, comp: &[AtomId], comp_pos: &[u32], simplified: &Simplified) {
        let mut val = vec![false; comp.len()];
        loop {
            let mut changed = false;
            for (i, rs) in simplified.iter().enumerate() {
                if val[i] {
                    continue;
                }
                let v = rs.iter().any(|lits| {
                    lits.iter().all(|&l| match l {
                        RuleLit::Member(x) => val[comp_pos[x as usize] as usize],
                        RuleLit::Outside(_) => unreachable!("no dynamic literal"),
                    })
                });
                if v {
                    val[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (i, &a) in comp.iter().enumerate() {
            self.konst[a as usize] = Some(val[i]);
        }
    }

    /// A dynamic recursive component: every atom gets a node first, so the
    /// gates can refer to each other; the loop runs over all of them.
    fn compile_loop(
        &mut self,
        comp: &[AtomId],
        simplified: &Simplified,
    ) -> Result<(), PropnetError> {
        let start = self.gates.next_node();
        for &a in comp {
            // Placeholder, filled in below.
            self.node_of[a as usize] = Some(self.push_gate(false, &[])?);
        }
        for (i, &a) in comp.iter().enumerate() {
            let node = self.node_of[a as usize].expect("placed");
            let lits = self.rule_lits(&simplified[i])?;
            self.gates.set(node, false, &lits);
        }
        let block = Block {
            start,
            end: self.gates.next_node(),
            recursive: true,
        };
        // Moves reach every node of the loop if they reach one.
        let mv = block.nodes().any(|n| {
            self.gates
                .inputs(n)
                .iter()
                .any(|&l| self.gates.is_move(l.node()))
        });
        for n in block.nodes() {
            self.gates.is_move[n.idx()] = mv;
        }
        self.blocks.push(block);
        Ok(())
    }

    /// The literal of a simplified rule's literal, once the component's atoms
    /// have nodes.
    fn rule_lit(&self, l: RuleLit) -> Lit {
        match l {
            RuleLit::Member(x) => Lit::pos(self.node_of[x as usize].expect("member has a node")),
            RuleLit::Outside(l) => l,
        }
    }

    /// The OR inputs for an atom's rules: each rule's literal, or an AND node.
    fn rule_lits(&mut self, rs: &[Vec<RuleLit>]) -> Result<Vec<Lit>, PropnetError> {
        let mut out = Vec::new();
        for lits in rs {
            let enc: Vec<Lit> = lits.iter().map(|&l| self.rule_lit(l)).collect();
            if enc.len() == 1 {
                out.push(enc[0]);
            } else if enc.is_empty() {
                out.push(Lit::TRUE);
            } else {
                out.push(Lit::pos(self.gate(true, &enc)?));
            }
        }
        Ok(out)
    }

    /// The node of a non-recursive atom with rules `rs` (their literals are all
    /// nodes outside the atom's component), built by [`Builder::or_of_ands`].
    fn atom_gate(&mut self, rs: &[Vec<RuleLit>]) -> Result<Node, PropnetError> {
        let enc: Vec<Vec<Lit>> = rs
            .iter()
            .map(|r| r.iter().map(|&l| self.rule_lit(l)).collect())
            .collect();
        let lit = self.or_of_ands(enc)?;
        if !lit.negated() {
            Ok(lit.node())
        } else {
            self.gate(true, &[lit])
        }
    }

    /// A literal for the OR of the ANDs `rules`, factored greedily: the literal
    /// shared by the most rules is pulled out of them, `OR(AND(a, b1), AND(a, b2))`
    /// = `AND(a, OR(b1, b2))`, recursively, and equal gates are shared. Frame rules
    /// ("a cell keeps its piece unless a move touches it") then cost one OR over
    /// the moves per cell instead of one AND per cell and move.
    ///
    /// The counts are kept as rules are pulled out, and each literal's rules
    /// are listed once, so a step costs what it removes rather than a pass
    /// over every rule left (with comp2006_ENDGAME's 2,900 rules per `next`
    /// atom, those passes had been most of its compile).
    fn or_of_ands(&mut self, mut rules: Vec<Vec<Lit>>) -> Result<Lit, PropnetError> {
        for r in rules.iter_mut() {
            r.sort_unstable();
            r.dedup();
        }
        if rules.iter().any(|r| r.is_empty()) {
            return Ok(Lit::TRUE);
        }
        // Per literal: the rules (in order) it is in, and how many of them
        // are still to be covered.
        let mut occurs: HashMap<Lit, Vec<u32>> = HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            for &l in r {
                occurs.entry(l).or_default().push(i as u32);
            }
        }
        let mut freq: HashMap<Lit, usize> = occurs.iter().map(|(&l, v)| (l, v.len())).collect();
        let mut alive = vec![true; rules.len()];
        let mut left = rules.len();
        let mut alts = Vec::new();
        while left > 0 {
            let best = freq
                .iter()
                .filter(|&(_, &n)| n > 0)
                .max_by_key(|&(&l, &n)| (n, std::cmp::Reverse(l)))
                .map(|(&l, &n)| (l, n));
            match best {
                Some((l, n)) if n >= 2 => {
                    let mut rests: Vec<Vec<Lit>> = Vec::with_capacity(n);
                    for &i in &occurs[&l] {
                        let i = i as usize;
                        if !alive[i] {
                            continue;
                        }
                        alive[i] = false;
                        left -= 1;
                        let r = std::mem::take(&mut rules[i]);
                        for x in &r {
                            if let Some(c) = freq.get_mut(x) {
                                *c -= 1;
                            }
                        }
                        rests.push(r.into_iter().filter(|&x| x != l).collect());
                    }
                    let inner = self.or_of_ands(rests)?;
                    let alt = if inner == Lit::TRUE {
                        l
                    } else {
                        self.junction(true, &[l, inner])?
                    };
                    alts.push(alt);
                }
                _ => {
                    for (i, r) in rules.iter().enumerate() {
                        if alive[i] {
                            alts.push(self.junction(true, r)?);
                        }
                    }
                    left = 0;
                }
            }
        }
        self.junction(false, &alts)
    }
}
