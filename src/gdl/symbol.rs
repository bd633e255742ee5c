//! Interned symbols. GDL is case-insensitive: `cellHolds` and `cellholds` are one
//! symbol. A symbol compares by its lower-cased text but prints as the game first
//! spelled it, so moves go back to a game manager exactly as the game writes them.

use std::collections::HashMap;
use std::fmt;

/// An interned symbol (constant, function, relation or variable name).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, serde::Serialize, serde::Deserialize,
)]
pub struct Sym(pub u32);

/// The table of every symbol a game uses.
#[derive(Clone, Default, Debug)]
pub struct Symbols {
    by_key: HashMap<String, Sym>,
    spelling: Vec<String>,
}

impl Symbols {
    pub fn new() -> Self {
        Self::default()
    }

    /// Interns `text`, comparing without case; the first spelling is kept.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&s) = self.by_key.get(text) {
            return s;
        }
        let key = text.to_lowercase();
        if let Some(&s) = self.by_key.get(&key) {
            return s;
        }
        let sym = Sym(self.spelling.len() as u32);
        self.spelling.push(text.to_string());
        self.by_key.insert(key, sym);
        sym
    }

    /// Looks `text` up without interning it.
    /// A new symbol spelled `base`, with `_` appended until no symbol of the
    /// game has that name (for relations a rewrite adds).
    pub fn fresh(&mut self, base: &str) -> Sym {
        let mut name = base.to_string();
        while self.get(&name).is_some() {
            name.push('_');
        }
        self.intern(&name)
    }

    pub fn get(&self, text: &str) -> Option<Sym> {
        self.by_key
            .get(text)
            .or_else(|| self.by_key.get(&text.to_lowercase()))
            .copied()
    }

    /// The symbol's text as the game first spelled it.
    pub fn name(&self, sym: Sym) -> &str {
        &self.spelling[sym.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.spelling.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spelling.is_empty()
    }

    pub fn display(&self, sym: Sym) -> impl fmt::Display + '_ {
        self.name(sym)
    }
}

/// The GDL keywords, interned first in every table so their ids are fixed.
pub mod kw {
    use super::Sym;
    pub const ROLE: Sym = Sym(0);
    pub const INIT: Sym = Sym(1);
    pub const TRUE: Sym = Sym(2);
    pub const NEXT: Sym = Sym(3);
    pub const LEGAL: Sym = Sym(4);
    pub const DOES: Sym = Sym(5);
    pub const GOAL: Sym = Sym(6);
    pub const TERMINAL: Sym = Sym(7);
    pub const DISTINCT: Sym = Sym(8);
    pub const NOT: Sym = Sym(9);
    pub const OR: Sym = Sym(10);
    pub const BASE: Sym = Sym(11);
    pub const INPUT: Sym = Sym(12);
    pub const AND: Sym = Sym(13);
    pub const IMPLIES: Sym = Sym(14);
    pub const SEES: Sym = Sym(15);
    pub const RANDOM: Sym = Sym(16);
    pub const NAMES: [&str; 17] = [
        "role", "init", "true", "next", "legal", "does", "goal", "terminal", "distinct", "not",
        "or", "base", "input", "and", "<=", "sees", "random",
    ];
}

impl Symbols {
    /// A table with the keywords pre-interned at their fixed ids.
    pub fn with_keywords() -> Self {
        let mut s = Self::new();
        for name in kw::NAMES {
            s.intern(name);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_insensitive_keeps_first_spelling() {
        let mut s = Symbols::with_keywords();
        let a = s.intern("cellHolds");
        let b = s.intern("CELLHOLDS");
        assert_eq!(a, b);
        assert_eq!(s.name(a), "cellHolds");
        assert_eq!(s.intern("ROLE"), kw::ROLE);
    }
}
