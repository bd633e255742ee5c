//! GDL symbols as clingo terms and back, exactly.
//!
//! clingo's lexical rules are stricter than GDL's: an identifier is lower case
//! first (`[a-z][A-Za-z0-9_']*`), an integer is canonical (`1`, never `01`), and an
//! upper-case word is a variable. GDL constants such as `B`, `01`, `-1`, `+`,
//! `x-y` or `_a` are none of these. The map is injective and reversible:
//!
//! - a constant spelled as a canonical non-negative integer becomes that integer;
//! - a constant spelled as a clingo identifier stays as it is;
//! - any other constant becomes a quoted string of its spelling (`"01"`, `"B"`);
//! - a function symbol (which clingo needs as an identifier) that is not one gets
//!   a mangled identifier (`f_...`), unique within the game;
//! - a zero-argument function term `(f)` becomes `f(())` (clingo reads `f()`
//!   as the constant `f`, which GDL tells apart from `(f)`);
//! - a relation becomes a predicate whose name avoids the encoding's own
//!   predicates (`holds`, `does`, `time`, ...) and whose name/arity, once the time
//!   argument is added, clashes with no other relation.
//!
//! Symbols are per game and case-insensitive in GDL, so one [`Sym`] always maps to
//! one clingo name and every name maps back to that `Sym`, which prints as the
//! game spells it.

use std::collections::{HashMap, HashSet};

use clingo::{Symbol, SymbolType};

use crate::gdl::{Sym, Symbols, Term};

/// Predicates of the game-independent encoding (`encodings/*.lp`) and of the
/// keyword relations; a game relation never gets one of these names.
pub const RESERVED_PREDICATES: &[&str] = &[
    "holds",
    "does",
    "legal",
    "next",
    "init",
    "role",
    "goal",
    "terminal",
    "time",
    "ended",
    "first",
    "won",
    "query",
    "alive",
    "best",
    "horizon",
    "does_arg",
    "legal_arg",
    "move_arg",
    "factored",
];

/// Constant names the encoding gives a meaning: `t` is the step parameter of the
/// incremental parts (`#program step(t).`), so a game constant `t` is quoted.
pub const RESERVED_CONSTANTS: &[&str] = &["t"];

/// How a game's symbols are spelled in the ASP program.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SymbolMap {
    /// The clingo text of every symbol used as a constant.
    constants: HashMap<Sym, String>,
    /// The clingo identifier of every symbol used as a function symbol.
    functors: HashMap<Sym, String>,
    /// Back from clingo identifiers, strings and numbers to the game's symbols.
    by_name: HashMap<String, Sym>,
    by_string: HashMap<String, Sym>,
    by_number: HashMap<i32, Sym>,
}

/// Whether `s` is a clingo identifier as GDL symbols can be written
/// (no quote marks: GDL could not spell them back).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "not"
}

/// The integer a constant stands for when it is spelled canonically (`7`, not `07`).
pub fn canonical_number(s: &str) -> Option<i32> {
    let ok = s == "0"
        || (s.starts_with(|c: char| matches!(c, '1'..='9')))
            && s.chars().all(|c| c.is_ascii_digit());
    if !ok {
        return None;
    }
    s.parse::<i32>().ok()
}

/// `s` as a clingo string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A clingo identifier made from any GDL spelling: `f_` then the letters and
/// digits, `_` doubled, anything else as `_` and its hexadecimal code.
fn mangle(s: &str) -> String {
    let mut out = String::from("f_");
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if c == '_' {
            out.push_str("__");
        } else {
            out.push_str(&format!("_{:x}", c as u32));
        }
    }
    out
}

impl SymbolMap {
    /// The map for every symbol of a game. Which symbols are constants and which
    /// are function symbols does not matter: each gets both spellings.
    pub fn new(symbols: &Symbols) -> SymbolMap {
        let mut map = SymbolMap {
            constants: HashMap::new(),
            functors: HashMap::new(),
            by_name: HashMap::new(),
            by_string: HashMap::new(),
            by_number: HashMap::new(),
        };
        // Identifiers spelled by the game itself come first so that a mangled
        // name can never take one of them.
        let syms: Vec<Sym> = (0..symbols.len() as u32).map(Sym).collect();
        let mut used: HashSet<String> = HashSet::new();
        for &s in &syms {
            let name = symbols.name(s);
            if is_identifier(name) {
                used.insert(name.to_string());
                map.functors.insert(s, name.to_string());
                map.by_name.insert(name.to_string(), s);
            }
        }
        for &s in &syms {
            let name = symbols.name(s);
            if !is_identifier(name) {
                let mut m = mangle(name);
                while used.contains(&m) {
                    m.push('_');
                }
                used.insert(m.clone());
                map.functors.insert(s, m.clone());
                map.by_name.insert(m, s);
            }
            let constant = if let Some(n) = canonical_number(name) {
                map.by_number.insert(n, s);
                n.to_string()
            } else if is_identifier(name) && !RESERVED_CONSTANTS.contains(&name) {
                name.to_string()
            } else {
                map.by_string.insert(name.to_string(), s);
                quote(name)
            };
            map.constants.insert(s, constant);
        }
        map
    }

    /// The clingo text of `sym` used as a constant.
    pub fn constant(&self, sym: Sym) -> &str {
        &self.constants[&sym]
    }

    /// The clingo identifier of `sym` used as a function symbol or predicate.
    pub fn functor(&self, sym: Sym) -> &str {
        &self.functors[&sym]
    }

    /// A ground term as clingo text (variables are the caller's business).
    pub fn ground_term(&self, t: &Term) -> Option<String> {
        let mut out = String::new();
        self.write_ground(t, &mut out).then_some(out)
    }

    fn write_ground(&self, t: &Term, out: &mut String) -> bool {
        match t {
            Term::Var(_) => false,
            Term::Const(c) => {
                out.push_str(self.constant(*c));
                true
            }
            // clingo reads `f()` as the constant `f`: `(f)` becomes `f(())`.
            Term::Func(f, args) if args.is_empty() => {
                out.push_str(self.functor(*f));
                out.push_str("(())");
                true
            }
            Term::Func(f, args) => {
                out.push_str(self.functor(*f));
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if !self.write_ground(a, out) {
                        return false;
                    }
                }
                out.push(')');
                true
            }
        }
    }

    /// The game's term for a clingo symbol, or `None` for a symbol the game's
    /// vocabulary cannot spell.
    pub fn to_term(&self, s: Symbol) -> Option<Term> {
        match s.symbol_type().ok()? {
            SymbolType::Number => self
                .by_number
                .get(&s.number().ok()?)
                .map(|&c| Term::Const(c)),
            SymbolType::String => self
                .by_string
                .get(s.string().ok()?)
                .map(|&c| Term::Const(c)),
            SymbolType::Function => {
                let name = s.name().ok()?;
                let f = *self.by_name.get(name)?;
                let args = s.arguments().ok()?;
                if args.is_empty() {
                    return Some(Term::Const(f));
                }
                if let [unit] = args.as_slice() {
                    // `f(())`: the zero-argument function term `(f)`.
                    if unit.name().ok() == Some("") && unit.arguments().ok()?.is_empty() {
                        return Some(Term::Func(f, Vec::new()));
                    }
                }
                let args = args
                    .into_iter()
                    .map(|a| self.to_term(a))
                    .collect::<Option<Vec<_>>>()?;
                Some(Term::Func(f, args))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_canonical_only() {
        assert_eq!(canonical_number("0"), Some(0));
        assert_eq!(canonical_number("100"), Some(100));
        assert_eq!(canonical_number("01"), None);
        assert_eq!(canonical_number("-1"), None);
        assert_eq!(canonical_number("1a"), None);
        assert_eq!(canonical_number("99999999999"), None);
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("cell"));
        assert!(is_identifier("cellHolds_2"));
        assert!(!is_identifier("Cell"));
        assert!(!is_identifier("_a"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("not"));
        assert_eq!(quote("a\"b\\"), "\"a\\\"b\\\\\"");
        assert_eq!(mangle("a-b_c"), "f_a_2db__c");
    }
}
