//! Printing back to KIF. What is printed parses back to the same AST; symbols print
//! as the game first spelled them, with single spaces.

use std::fmt::{self, Write};

use super::ast::{Description, Literal, Rule, Term};
use super::symbol::{kw, Symbols};

/// Writes `t` as KIF.
pub fn write_term(out: &mut impl Write, t: &Term, s: &Symbols) -> fmt::Result {
    match t {
        Term::Var(v) | Term::Const(v) => out.write_str(s.name(*v)),
        Term::Func(f, args) => {
            out.write_char('(')?;
            out.write_str(s.name(*f))?;
            for a in args {
                out.write_char(' ')?;
                write_term(out, a, s)?;
            }
            out.write_char(')')
        }
    }
}

pub fn term_to_string(t: &Term, s: &Symbols) -> String {
    let mut out = String::new();
    write_term(&mut out, t, s).expect("writing to a String cannot fail");
    out
}

pub fn write_literal(out: &mut impl Write, l: &Literal, s: &Symbols) -> fmt::Result {
    match l {
        Literal::Pos(t) => write_term(out, t, s),
        Literal::Not(t) => {
            write!(out, "({} ", s.name(kw::NOT))?;
            write_term(out, t, s)?;
            out.write_char(')')
        }
        Literal::Distinct(a, b) => {
            write!(out, "({} ", s.name(kw::DISTINCT))?;
            write_term(out, a, s)?;
            out.write_char(' ')?;
            write_term(out, b, s)?;
            out.write_char(')')
        }
        Literal::Equal(a, b) => {
            write!(out, "({} ({} ", s.name(kw::NOT), s.name(kw::DISTINCT))?;
            write_term(out, a, s)?;
            out.write_char(' ')?;
            write_term(out, b, s)?;
            out.write_str("))")
        }
        Literal::Or(ls) | Literal::And(ls) => {
            let kw = if matches!(l, Literal::Or(_)) {
                kw::OR
            } else {
                kw::AND
            };
            write!(out, "({}", s.name(kw))?;
            for l in ls {
                out.write_char(' ')?;
                write_literal(out, l, s)?;
            }
            out.write_char(')')
        }
    }
}

pub fn write_rule(out: &mut impl Write, r: &Rule, s: &Symbols) -> fmt::Result {
    if r.body.is_empty() {
        return write_term(out, &r.head, s);
    }
    out.write_str("(<= ")?;
    write_term(out, &r.head, s)?;
    for l in &r.body {
        out.write_char(' ')?;
        write_literal(out, l, s)?;
    }
    out.write_char(')')
}

pub fn rule_to_string(r: &Rule, s: &Symbols) -> String {
    let mut out = String::new();
    write_rule(&mut out, r, s).expect("writing to a String cannot fail");
    out
}

/// The whole description, one rule per line.
pub fn description_to_string(d: &Description) -> String {
    let mut out = String::new();
    for r in &d.rules {
        write_rule(&mut out, r, &d.symbols).expect("writing to a String cannot fail");
        out.push('\n');
    }
    out
}
