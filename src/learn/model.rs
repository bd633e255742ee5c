//! A learned model on disk: the network, the inputs it reads (the game's
//! fluents, as KIF text), the exploration constant tuned for the game, and a
//! hash of the rules it was trained on. A versioned JSON file; a file that is
//! truncated, of another format version or of other rules is refused with a
//! message that says which.

use std::path::Path;

use anyhow::{bail, Context, Result};
use hashbrown::HashMap;
use serde::{Deserialize, Serialize};

use super::ccnn::{Cascade, UnitReport};
use crate::gdl::parser::parse_ground_terms;
use crate::gdl::print::term_to_string;
use crate::gdl::{Game, Term};
use crate::reasoner::StateMachine;

/// What the file says it is.
pub const FORMAT: &str = "ggp-asp-model";
/// The format version this build writes; it reads this one and version 1
/// (whose values are all the first role's, [`Perspective::FirstRole`]).
pub const VERSION: u32 = 2;

/// Whose value the network gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Perspective {
    /// The first role's, whoever is to move (format version 1). With only
    /// the winner's states kept, who is to move says who won: the network
    /// learnt the turn, not the position.
    #[default]
    FirstRole,
    /// The role to move's (the one role with a choice; the first role where
    /// none or several have one): the winner's own estimate of its states,
    /// as the examples are.
    Mover,
}

impl Perspective {
    /// The role whose value the network gives at `state`.
    pub fn role<M: StateMachine>(self, machine: &M, state: &M::State) -> usize {
        match self {
            Perspective::FirstRole => 0,
            Perspective::Mover => mover(machine, state).unwrap_or(0),
        }
    }
}

/// The role with a choice at `state`, if exactly one has.
pub fn mover<M: StateMachine>(m: &M, state: &M::State) -> Option<usize> {
    let mut moves = Vec::new();
    let mut found = None;
    for r in 0..m.num_roles() {
        m.legal_moves(state, r, &mut moves);
        if moves.len() > 1 {
            if found.is_some() {
                return None;
            }
            found = Some(r);
        }
    }
    found
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Model {
    pub format: String,
    pub version: u32,
    /// [`rules_hash`] of the game trained on.
    pub rules_hash: String,
    pub roles: Vec<String>,
    /// Input `i` is 1 when fluent `fluents[i]` holds.
    pub fluents: Vec<String>,
    /// The value (0..1) of a state for the role [`Model::perspective`] says.
    pub network: Cascade,
    /// Absent in version 1 files: the first role's.
    #[serde(default)]
    pub perspective: Perspective,
    /// What the network learnt as a state's value (informative: the values
    /// are read alike); absent in older files: UCT's estimates.
    #[serde(default)]
    pub target: Target,
    /// UCT's exploration constant for the game, tuned by the cross-entropy
    /// method.
    pub exploration: f64,
    pub reports: Vec<UnitReport>,
    pub examples: usize,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

/// What the network learns as a state's value, always for the role to move
/// ([`Perspective::Mover`]).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// UCT's value estimate at the state (the method's): what self-play's
    /// few hundred iterations of random playouts saw, which a searcher with
    /// a thousand times more playouts already knows better.
    #[default]
    Estimate,
    /// The match's result: how the match went on from the state when both
    /// sides played UCT, which no playout from the state sees. Noisier, one
    /// sample per state.
    Result,
    /// The mean of the two.
    Blend,
}

impl Target {
    /// The example's value from UCT's `estimate` and the `result` (0..1).
    pub(super) fn value(self, estimate: f64, result: f64) -> f64 {
        match self {
            Target::Estimate => estimate,
            Target::Result => result,
            Target::Blend => (estimate + result) / 2.0,
        }
    }
}

/// A stable hash (FNV-1a, 64 bits) of the rules as printed: the same rules
/// give the same hash on every build and machine.
pub fn rules_hash(game: &Game) -> String {
    let text = game.to_kif();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Model {
    pub fn new(
        game: &Game,
        fluents: Vec<String>,
        network: Cascade,
        exploration: f64,
        reports: Vec<UnitReport>,
        examples: usize,
    ) -> Model {
        let mut m = Model {
            format: FORMAT.into(),
            version: VERSION,
            rules_hash: rules_hash(game),
            roles: game.role_names(),
            fluents,
            network,
            perspective: Perspective::Mover,
            target: Target::default(),
            exploration,
            reports,
            examples,
            index: HashMap::new(),
        };
        m.index_fluents();
        m
    }

    fn index_fluents(&mut self) {
        self.index = self
            .fluents
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i))
            .collect();
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads a model; refused when the file is not one, is truncated, or is
    /// of another format version.
    pub fn load(path: &Path) -> Result<Model> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the model {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: not a model file (truncated or damaged JSON at line {}, column {}: {e})",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            bail!(
                "{}: not a ggp-asp model (no \"format\": \"{FORMAT}\")",
                path.display()
            );
        }
        match v.get("version").and_then(|x| x.as_u64()) {
            Some(n) if n == 1 || n == u64::from(VERSION) => {}
            Some(n) => bail!(
                "{}: a model of format version {n}; this build reads versions 1 to {VERSION}",
                path.display()
            ),
            None => bail!("{}: the model has no format version", path.display()),
        }
        let mut m: Model = serde_json::from_value(v)
            .with_context(|| format!("{}: a damaged model", path.display()))?;
        let expect = m.fluents.len() + 1 + m.network.hidden.len();
        if m.network.inputs != m.fluents.len() || m.network.out.len() != expect {
            bail!(
                "{}: a damaged model (the network's sizes do not match its inputs)",
                path.display()
            );
        }
        m.index_fluents();
        Ok(m)
    }

    /// Refuses the model for rules other than those it was trained on.
    pub fn check_game(&self, game: &Game) -> Result<()> {
        let h = rules_hash(game);
        if h != self.rules_hash {
            bail!(
                "the model was trained on other rules (rules hash {}, these rules {h}; roles {})",
                self.rules_hash,
                self.roles.join(" ")
            );
        }
        Ok(())
    }

    /// The network's inputs for `state`, each fluent printed and looked up
    /// by its text: the reference that [`Reader`] must agree with.
    pub fn inputs<M: StateMachine>(&self, machine: &M, state: &M::State) -> Vec<f64> {
        let mut x = vec![0.0; self.fluents.len()];
        let syms = &machine.game().symbols;
        for f in machine.fluents(state) {
            if let Some(&i) = self.index.get(&term_to_string(&f, syms)) {
                x[i] = 1.0;
            }
        }
        x
    }

    /// The network's inputs read off `machine`'s states: by the engine's
    /// fluent numbers where it numbers them, else by the fluents' terms.
    pub fn reader<M: StateMachine>(&self, machine: &M) -> Reader {
        let mut r = self.reader_by_terms(machine.game());
        r.numbered = (0..machine.numbered_fluents())
            .map(|i| {
                machine
                    .fluent_term(i)
                    .and_then(|t| r.index.get(&t).copied())
            })
            .collect();
        r
    }

    /// The network's inputs read off `game`'s states by their fluents' terms.
    pub fn reader_by_terms(&self, game: &Game) -> Reader {
        // A fluent with a symbol the game does not know never holds in it.
        let index = self
            .fluents
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let mut t = parse_ground_terms(&format!("({f})"), &game.symbols).ok()?;
                (t.len() == 1).then(|| (t.remove(0), i))
            })
            .collect();
        Reader {
            index,
            numbered: Vec::new(),
            len: self.fluents.len(),
        }
    }
}

/// A model's inputs for the states of one game, found by the engine's
/// fluent numbers or by each fluent's term: printing every fluent of every
/// state evaluated (what [`Model::inputs`] does) cost more than the network,
/// and building the terms still half of it.
pub struct Reader {
    index: HashMap<Term, usize>,
    /// The input of each fluent the engine numbers (`None`: not one of the
    /// network's); empty when the reader reads terms.
    numbered: Vec<Option<usize>>,
    len: usize,
}

impl Reader {
    /// The indices of the network's inputs that are 1 at `state` (the
    /// others are 0), into `ones`.
    pub fn ones<M: StateMachine>(&self, machine: &M, state: &M::State, ones: &mut Vec<usize>) {
        if !self.numbered.is_empty()
            && machine.numbered_fluents() == self.numbered.len()
            && machine.fluent_numbers(state, ones)
        {
            ones.retain_mut(|i| match self.numbered[*i] {
                Some(input) => {
                    *i = input;
                    true
                }
                None => false,
            });
            return;
        }
        ones.clear();
        ones.extend(
            machine
                .fluents(state)
                .iter()
                .filter_map(|f| self.index.get(f).copied()),
        );
    }

    /// The network's inputs for `state`, into `x`.
    pub fn inputs<M: StateMachine>(&self, machine: &M, state: &M::State, x: &mut Vec<f64>) {
        let mut ones = Vec::new();
        self.ones(machine, state, &mut ones);
        x.clear();
        x.resize(self.len, 0.0);
        for i in ones {
            x[i] = 1.0;
        }
    }
}
