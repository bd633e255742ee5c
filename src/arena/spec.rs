//! The players `match`, `bench arena` and the tournament name on the command
//! line ([`PlayerSpec`]): parsed from and printed as their names
//! (`random`, `uct+rave+mast`, `nn-uct`, `http://HOST:PORT`, ...).

use std::fmt;
use std::str::FromStr;

use anyhow::{bail, Context};

/// A player named on the command line.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    Random,
    Legal,
    Mc,
    /// Flat Monte Carlo with memory across moves (`mcm`).
    McMemory,
    Uct,
    /// UCT with enhancements (`uct+rave`, `uct+rave+mast`, ...).
    UctWith(crate::search::Enhancements),
    /// Paranoid alpha-beta (`alphabeta`).
    AlphaBeta,
    /// max^n (`maxn`).
    MaxN,
    /// Meta-choice (`auto`): the configuration the game's profile suggests.
    Auto,
    /// The meta-choice's pick put to trial matches in the start clock
    /// (`auto+trials`, [`crate::strategy::trial_choice`]).
    AutoTrials,
    /// UCT with a learned model's value at the leaves and its exploration
    /// constant (`nn-uct`; needs `--model`).
    NnUct,
    /// UCT whose leaves are valued by a learned model and a random playout
    /// together, half each, with the model's constant (`nn-mix`).
    NnMix,
    /// UCT with random playouts whose new nodes start with a learned
    /// model's value counted as [`NN_PRIOR_VISITS`] visits, with the model's
    /// constant (`nn-prior`): the value as the tree policy's prior.
    NnPrior,
    /// Plain UCT (random playouts) with a learned model's exploration
    /// constant, tuned by the cross-entropy method (`uct-tuned`): the tuning
    /// measured on its own.
    TunedUct,
    /// Alpha-beta with a learned model's value at the leaves (`nn-alphabeta`).
    NnAlphaBeta,
    /// A GGP player at `http://HOST:PORT`.
    Http(String),
}

/// `nn-mix`'s weight of the model's value against the playout's (AlphaGo
/// mixed its value network and rollouts half and half).
pub const NN_MIX_WEIGHT: f64 = 0.5;

/// `nn-prior`'s visits of the model's value on the edge into a new node: a
/// handful, as a weak heuristic deserves (Gelly and Silver gave a strong
/// one 50 in 9x9 Go); a node near the root, visited thousands of times a
/// second, soon forgets it.
pub const NN_PRIOR_VISITS: u32 = 10;

impl FromStr for PlayerSpec {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "random" => PlayerSpec::Random,
            "legal" => PlayerSpec::Legal,
            "mc" => PlayerSpec::Mc,
            "mcm" => PlayerSpec::McMemory,
            "uct" => PlayerSpec::Uct,
            "alphabeta" => PlayerSpec::AlphaBeta,
            "maxn" => PlayerSpec::MaxN,
            "auto" => PlayerSpec::Auto,
            "auto+trials" => PlayerSpec::AutoTrials,
            "nn-uct" => PlayerSpec::NnUct,
            "uct-tuned" => PlayerSpec::TunedUct,
            "nn-mix" => PlayerSpec::NnMix,
            "nn-prior" => PlayerSpec::NnPrior,
            "nn-alphabeta" => PlayerSpec::NnAlphaBeta,
            l if l.starts_with("uct+") => {
                let e: crate::search::Enhancements = l["uct+".len()..]
                    .parse()
                    .with_context(|| format!("player {s:?}"))?;
                if e.is_plain() {
                    PlayerSpec::Uct
                } else {
                    PlayerSpec::UctWith(e)
                }
            }
            l if l.starts_with("http://") => PlayerSpec::Http(s.to_string()),
            _ => bail!("unknown player {s:?}: expected random, legal, mc, mcm, uct, uct+ENHANCEMENTS (rave, widen, mast, cutoff joined by +), alphabeta, maxn, auto, auto+trials, nn-uct, nn-mix, nn-prior, nn-alphabeta, uct-tuned or http://HOST:PORT"),
        })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Legal => f.write_str("legal"),
            PlayerSpec::Mc => f.write_str("mc"),
            PlayerSpec::McMemory => f.write_str("mcm"),
            PlayerSpec::Uct => f.write_str("uct"),
            PlayerSpec::UctWith(e) => write!(f, "uct+{e}"),
            PlayerSpec::AlphaBeta => f.write_str("alphabeta"),
            PlayerSpec::MaxN => f.write_str("maxn"),
            PlayerSpec::Auto => f.write_str("auto"),
            PlayerSpec::AutoTrials => f.write_str("auto+trials"),
            PlayerSpec::NnUct => f.write_str("nn-uct"),
            PlayerSpec::TunedUct => f.write_str("uct-tuned"),
            PlayerSpec::NnMix => f.write_str("nn-mix"),
            PlayerSpec::NnPrior => f.write_str("nn-prior"),
            PlayerSpec::NnAlphaBeta => f.write_str("nn-alphabeta"),
            PlayerSpec::Http(u) => f.write_str(u),
        }
    }
}
