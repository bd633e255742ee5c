//! The GDL abstract syntax tree over interned symbols: terms, literals, rules and a
//! whole game description. Positions (line, column) ride along on every rule so that
//! diagnostics can say where a problem is.

use super::symbol::{kw, Sym, Symbols};

/// A GDL term: a variable (`?x`), a constant (`b`, `100`) or a function term
/// (`(cell 1 2 b)`). Atoms are terms too: a proposition is a constant, a relation
/// applied to arguments is a function term.
#[derive(
    Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Term {
    Var(Sym),
    Const(Sym),
    Func(Sym, Vec<Term>),
}

impl Term {
    /// The functor of an atom or function term, or the constant itself.
    pub fn name(&self) -> Option<Sym> {
        match self {
            Term::Var(_) => None,
            Term::Const(s) | Term::Func(s, _) => Some(*s),
        }
    }

    pub fn args(&self) -> &[Term] {
        match self {
            Term::Func(_, args) => args,
            _ => &[],
        }
    }

    /// The relation this atom belongs to (`None` for a variable).
    pub fn relation(&self) -> Option<Relation> {
        self.name().map(|name| Relation {
            name,
            arity: self.args().len(),
        })
    }

    pub fn is_ground(&self) -> bool {
        match self {
            Term::Var(_) => false,
            Term::Const(_) => true,
            Term::Func(_, args) => args.iter().all(Term::is_ground),
        }
    }

    /// Calls `f` on every variable occurrence, left to right.
    pub fn for_each_var(&self, f: &mut impl FnMut(Sym)) {
        match self {
            Term::Var(v) => f(*v),
            Term::Const(_) => {}
            Term::Func(_, args) => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }

    pub fn vars(&self) -> Vec<Sym> {
        let mut out = Vec::new();
        self.for_each_var(&mut |v| {
            if !out.contains(&v) {
                out.push(v)
            }
        });
        out
    }

    /// Greatest nesting depth of function terms (a constant has depth 0).
    pub fn depth(&self) -> usize {
        match self {
            Term::Func(_, args) => 1 + args.iter().map(Term::depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}

/// A relation is a name with an arity: `(cell ?x ?y ?z)` is `cell/3`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Relation {
    pub name: Sym,
    pub arity: usize,
}

impl Relation {
    pub fn display(&self, symbols: &Symbols) -> String {
        format!("{}/{}", symbols.name(self.name), self.arity)
    }
}

/// A body literal.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Literal {
    /// A positive atom, including `(true f)` and `(does r m)`.
    Pos(Term),
    /// `(not atom)`.
    Not(Term),
    /// `(distinct a b)`.
    Distinct(Term, Term),
    /// `(or l1 l2 ...)`; removed by the normal form.
    Or(Vec<Literal>),
    /// `(and l1 l2 ...)` as one alternative of an `or`; removed by the normal form.
    And(Vec<Literal>),
    /// `(not (distinct a b))`: the two terms are equal. The normal form removes it
    /// by unifying the terms throughout the rule.
    Equal(Term, Term),
}

impl Literal {
    pub fn for_each_var(&self, f: &mut impl FnMut(Sym)) {
        match self {
            Literal::Pos(t) | Literal::Not(t) => t.for_each_var(f),
            Literal::Distinct(a, b) | Literal::Equal(a, b) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
            Literal::Or(ls) | Literal::And(ls) => ls.iter().for_each(|l| l.for_each_var(f)),
        }
    }
}

/// Where something stands in a source file (1-based).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A rule `(<= head body...)`; a fact is a rule with an empty body.
#[derive(Clone, Debug)]
pub struct Rule {
    pub head: Term,
    pub body: Vec<Literal>,
    pub pos: Pos,
}

impl PartialEq for Rule {
    /// Rules compare by content; positions are only for diagnostics.
    fn eq(&self, other: &Self) -> bool {
        self.head == other.head && self.body == other.body
    }
}

impl Rule {
    pub fn is_fact(&self) -> bool {
        self.body.is_empty()
    }

    /// Variables in order of first occurrence (head first).
    pub fn vars(&self) -> Vec<Sym> {
        let mut out = Vec::new();
        let mut add = |v| {
            if !out.contains(&v) {
                out.push(v)
            }
        };
        self.head.for_each_var(&mut add);
        for l in &self.body {
            l.for_each_var(&mut add);
        }
        out
    }

    /// The variables a positive body literal binds: those safety asks the
    /// head's, `distinct`'s and `not`'s variables to be among.
    pub fn positive_vars(&self) -> std::collections::HashSet<Sym> {
        let mut bound = std::collections::HashSet::new();
        for l in &self.body {
            if let Literal::Pos(t) = l {
                t.for_each_var(&mut |v| {
                    bound.insert(v);
                });
            }
        }
        bound
    }
}

/// A parsed game description: its symbols and rules, as written.
#[derive(Clone, Debug)]
pub struct Description {
    pub symbols: Symbols,
    pub rules: Vec<Rule>,
    /// The file name (or `<input>`) for diagnostics.
    pub source: String,
}

/// True for the keyword relations, whose arity and meaning GDL fixes (a
/// rewrite may not rename them or change their arguments).
pub fn is_keyword_relation(s: Sym) -> bool {
    [
        kw::ROLE,
        kw::INIT,
        kw::TRUE,
        kw::NEXT,
        kw::LEGAL,
        kw::DOES,
        kw::GOAL,
        kw::TERMINAL,
        kw::DISTINCT,
        kw::BASE,
        kw::INPUT,
    ]
    .contains(&s)
}

/// True for the keyword relations that a game may not define by rules.
pub fn is_input_keyword(s: Sym) -> bool {
    s == kw::TRUE || s == kw::DOES || s == kw::DISTINCT || s == kw::NOT || s == kw::OR
}
