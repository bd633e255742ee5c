//! The KIF reader: text -> s-expressions (with positions) -> [`Description`].
//!
//! Tokens are recognised with `nom`; the nesting is built with an explicit stack so
//! that a deeply nested or huge input cannot overflow the call stack. Accepts `;`
//! line comments, `#| ... |#` block comments, CRLF, any keyword case, numbers as
//! constants, bodiless rules `(<= head)` and an `(and ...)` inside a body.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_until, take_while, take_while1},
    character::complete::{char, multispace1},
    combinator::{map, recognize, value},
    sequence::{pair, preceded, tuple},
    IResult,
};

use super::ast::{Description, Literal, Pos, Rule, Term};
use super::error::GdlError;
use super::symbol::{kw, Symbols};

/// An s-expression with the byte offset where it starts: the rules' reader and the
/// match protocol ([`crate::protocol`]) both use it. The offset says where the
/// expression was read, not what it is, so equality ignores it (an expression
/// built rather than read has offset 0).
#[derive(Clone, Debug)]
pub enum SExpr {
    Atom(String, usize),
    List(Vec<SExpr>, usize),
}

impl PartialEq for SExpr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SExpr::Atom(a, _), SExpr::Atom(b, _)) => a == b,
            (SExpr::List(a, _), SExpr::List(b, _)) => a == b,
            _ => false,
        }
    }
}

impl Eq for SExpr {}

impl SExpr {
    pub fn offset(&self) -> usize {
        match self {
            SExpr::Atom(_, o) | SExpr::List(_, o) => *o,
        }
    }

    /// Reads exactly one s-expression (`what` names it in errors).
    pub fn parse_one(text: &str, what: &str) -> Result<SExpr, String> {
        let mut items = parse_sexprs(text, what).map_err(|e| e.to_string())?;
        match items.len() {
            1 => Ok(items.pop().expect("one item")),
            0 => Err(format!("{what} is empty")),
            n => Err(format!("{what} holds {n} s-expressions; expected one")),
        }
    }

    pub fn atom(&self) -> Option<&str> {
        match self {
            SExpr::Atom(a, _) => Some(a),
            SExpr::List(..) => None,
        }
    }

    /// True for the atom `word`, compared without case.
    pub fn is_word(&self, word: &str) -> bool {
        self.atom().is_some_and(|a| a.eq_ignore_ascii_case(word))
    }

    /// The ground game term this s-expression spells, with the game's symbols only:
    /// a symbol the game does not know cannot be part of one of its moves. A list
    /// of one symbol, `(pass)`, is the zero-argument function term, not the
    /// constant `pass` (as in ggp-base).
    pub fn to_ground(&self, symbols: &Symbols) -> Result<Term, String> {
        let sym = |a: &str| {
            if a.starts_with('?') {
                return Err(format!("a move cannot contain the variable {a}"));
            }
            symbols
                .get(a)
                .ok_or_else(|| format!("unknown symbol '{a}' (not in the game)"))
        };
        match self {
            SExpr::Atom(a, _) => Ok(Term::Const(sym(a)?)),
            SExpr::List(items, _) => match items.split_first() {
                Some((SExpr::Atom(f, _), rest)) if !rest.is_empty() => Ok(Term::Func(
                    sym(f)?,
                    rest.iter()
                        .map(|x| x.to_ground(symbols))
                        .collect::<Result<_, _>>()?,
                )),
                Some((SExpr::Atom(f, _), _)) => Ok(Term::Func(sym(f)?, Vec::new())),
                _ => Err(format!("{self} is not a term: it must start with a symbol")),
            },
        }
    }
}

impl std::fmt::Display for SExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SExpr::Atom(a, _) => f.write_str(a),
            SExpr::List(items, _) => write_list(f, items),
        }
    }
}

/// Writes `items` as a list: `(a (b c))`.
pub fn write_list(f: &mut std::fmt::Formatter<'_>, items: &[SExpr]) -> std::fmt::Result {
    f.write_str("(")?;
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{x}")?;
    }
    f.write_str(")")
}

#[derive(Clone, Debug, PartialEq)]
enum Token<'a> {
    Open,
    Close,
    Atom(&'a str),
}

fn is_atom_char(c: char) -> bool {
    !c.is_whitespace() && c != '(' && c != ')' && c != ';'
}

/// Whitespace and comments.
fn skip(input: &str) -> IResult<&str, ()> {
    let mut rest = input;
    loop {
        let r: IResult<&str, ()> = alt((
            value((), multispace1),
            value((), pair(char(';'), take_while(|c| c != '\n'))),
            value(
                (),
                recognize(tuple((tag("#|"), take_until("|#"), tag("|#")))),
            ),
        ))(rest);
        match r {
            Ok((r2, _)) => rest = r2,
            Err(_) => return Ok((rest, ())),
        }
    }
}

fn token(input: &str) -> IResult<&str, Token<'_>> {
    preceded(
        skip,
        alt((
            value(Token::Open, char('(')),
            value(Token::Close, char(')')),
            map(take_while1(is_atom_char), Token::Atom),
        )),
    )(input)
}

/// Converts byte offsets to 1-based line and column (columns count characters).
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    pub fn pos(&self, offset: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let end = offset.min(self.text.len());
        let col = self
            .text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count());
        Pos {
            line: line as u32 + 1,
            col: col as u32 + 1,
        }
    }
}

/// How deep lists may nest. Real games stay below 20; the limit keeps recursive
/// passes over terms (and dropping them) far from the stack's end.
pub const MAX_DEPTH: usize = 1000;

/// Reads all top-level s-expressions of `text`.
pub fn parse_sexprs(text: &str, file: &str) -> Result<Vec<SExpr>, GdlError> {
    let mut top = Vec::new();
    for_each_sexpr(text, file, &LineIndex::new(text), |e| {
        top.push(e);
        Ok(())
    })?;
    Ok(top)
}

/// Calls `f` with each top-level s-expression as soon as it is complete, so a large
/// file never holds more than one expression's tree besides what `f` keeps.
pub fn for_each_sexpr(
    text: &str,
    file: &str,
    lines: &LineIndex,
    mut f: impl FnMut(SExpr) -> Result<(), GdlError>,
) -> Result<(), GdlError> {
    let err = |offset: usize, msg: String| GdlError::single(file, lines.pos(offset), msg);
    // Open lists: their start offset and the items read so far.
    let mut stack: Vec<(usize, Vec<SExpr>)> = Vec::new();
    let mut rest = text;
    loop {
        let offset = text.len() - rest.len();
        match token(rest) {
            Ok((r, tok)) => {
                let start = text.len() - r.len() - token_len(&tok);
                rest = r;
                match tok {
                    Token::Open => {
                        if stack.len() >= MAX_DEPTH {
                            return Err(err(
                                start,
                                format!("lists nested deeper than {MAX_DEPTH} levels"),
                            ));
                        }
                        stack.push((start, Vec::new()))
                    }
                    Token::Close => match stack.pop() {
                        Some((open, items)) => {
                            let e = SExpr::List(items, open);
                            match stack.last_mut() {
                                Some((_, parent)) => parent.push(e),
                                None => f(e)?,
                            }
                        }
                        None => {
                            return Err(err(start, "unbalanced ')': no '(' is open here".into()))
                        }
                    },
                    Token::Atom(a) => {
                        // `skip` consumes every closed comment, so a token that
                        // starts with `#|` opens a comment that never ends.
                        if a.starts_with("#|") {
                            return Err(err(
                                start,
                                "unterminated block comment: '#|' without '|#'".into(),
                            ));
                        }
                        let e = SExpr::Atom(a.to_string(), start);
                        match stack.last_mut() {
                            Some((_, parent)) => parent.push(e),
                            None => f(e)?,
                        }
                    }
                }
            }
            Err(_) => {
                let (r, _) = skip(rest).unwrap_or((rest, ()));
                if !r.is_empty() {
                    let at = text.len() - r.len();
                    if r.starts_with("#|") {
                        return Err(err(
                            at,
                            "unterminated block comment: '#|' without '|#'".into(),
                        ));
                    }
                    return Err(err(
                        at.max(offset),
                        format!("unexpected input {:?}", r.chars().next().unwrap()),
                    ));
                }
                break;
            }
        }
    }
    if let Some((open, _)) = stack.last() {
        return Err(err(
            *open,
            format!(
                "unbalanced '(': {} list(s) still open at the end of the input; this one is never closed",
                stack.len()
            ),
        ));
    }
    Ok(())
}

fn token_len(t: &Token) -> usize {
    match t {
        Token::Open | Token::Close => 1,
        Token::Atom(a) => a.len(),
    }
}

/// Reads a game description from KIF text.
pub fn parse(text: &str, file: &str) -> Result<Description, GdlError> {
    let lines = LineIndex::new(text);
    let mut conv = Converter {
        symbols: Symbols::with_keywords(),
        lines: &lines,
        file,
    };
    let mut rules = Vec::new();
    for_each_sexpr(text, file, &lines, |e| {
        rules.push(conv.rule(&e)?);
        Ok(())
    })?;
    Ok(Description {
        symbols: conv.symbols,
        rules,
        source: file.to_string(),
    })
}

/// Reads a game description from bytes, reporting invalid UTF-8 with its position.
pub fn parse_bytes(bytes: &[u8], file: &str) -> Result<Description, GdlError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text, file),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let text = std::str::from_utf8(good).unwrap_or("");
            let pos = LineIndex::new(text).pos(text.len());
            Err(GdlError::single(
                file,
                pos,
                format!(
                    "invalid UTF-8 (byte 0x{:02x}); GDL files must be text",
                    bytes[e.valid_up_to()]
                ),
            ))
        }
    }
}

struct Converter<'a> {
    symbols: Symbols,
    lines: &'a LineIndex<'a>,
    file: &'a str,
}

impl Converter<'_> {
    fn err(&self, e: &SExpr, msg: impl Into<String>) -> GdlError {
        GdlError::single(self.file, self.lines.pos(e.offset()), msg)
    }

    fn rule(&mut self, e: &SExpr) -> Result<Rule, GdlError> {
        let pos = self.lines.pos(e.offset());
        if let SExpr::List(items, _) = e {
            if let Some(SExpr::Atom(a, _)) = items.first() {
                if a == "<=" {
                    let head = items
                        .get(1)
                        .ok_or_else(|| self.err(e, "rule '(<= ...)' without a head"))?;
                    let head = self.atom(head)?;
                    let mut body = Vec::new();
                    for b in &items[2..] {
                        self.literal(b, &mut body)?;
                    }
                    return Ok(Rule { head, body, pos });
                }
            }
        }
        Ok(Rule {
            head: self.atom(e)?,
            body: Vec::new(),
            pos,
        })
    }

    fn check_gdl2(&self, e: &SExpr, t: &Term) -> Result<(), GdlError> {
        if let Some(n) = t.name() {
            let random_role = n == kw::ROLE && t.args() == [Term::Const(kw::RANDOM)];
            if n == kw::SEES || random_role {
                let n = if random_role { kw::RANDOM } else { n };
                return Err(self.err(
                    e,
                    format!(
                        "GDL-II is not supported: this game uses '{}' (incomplete information or chance)",
                        self.symbols.name(n)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// An atom: a constant or a relation applied to terms. `(terminal)` is
    /// the proposition `terminal`: a relation is its name and arity, so a
    /// sentence keeps no parentheses (a term inside one does: `(true (over))`
    /// is not `(true over)`).
    fn atom(&mut self, e: &SExpr) -> Result<Term, GdlError> {
        let t = self.term(e)?;
        match t {
            Term::Var(_) => Err(self.err(e, "a variable cannot stand where an atom is expected")),
            Term::Func(f, args) if args.is_empty() => Ok(Term::Const(f)),
            t => {
                self.check_gdl2(e, &t)?;
                Ok(t)
            }
        }
    }

    fn term(&mut self, e: &SExpr) -> Result<Term, GdlError> {
        match e {
            SExpr::Atom(a, _) => {
                if let Some(v) = a.strip_prefix('?') {
                    if v.is_empty() {
                        return Err(self.err(e, "a variable needs a name after '?'"));
                    }
                    Ok(Term::Var(self.symbols.intern(a)))
                } else {
                    Ok(Term::Const(self.symbols.intern(a)))
                }
            }
            SExpr::List(items, _) => {
                let (first, rest) = items
                    .split_first()
                    .ok_or_else(|| self.err(e, "empty list '()' where a term is expected"))?;
                let name = match first {
                    SExpr::Atom(a, _) if !a.starts_with('?') => self.symbols.intern(a),
                    SExpr::Atom(..) => {
                        return Err(self.err(first, "a variable cannot be a function name"))
                    }
                    SExpr::List(..) => {
                        return Err(self.err(
                            first,
                            "a list cannot be a function name: expected a symbol after '('",
                        ))
                    }
                };
                if name == kw::IMPLIES {
                    return Err(self.err(e, "a rule '(<= ...)' can only stand at the top level"));
                }
                let args = rest
                    .iter()
                    .map(|a| self.term(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Term::Func(name, args))
            }
        }
    }

    fn literal(&mut self, e: &SExpr, out: &mut Vec<Literal>) -> Result<(), GdlError> {
        let t = self.atom(e)?;
        let lit = match &t {
            Term::Func(n, args) if *n == kw::NOT => {
                if args.len() != 1 {
                    return Err(
                        self.err(e, format!("'not' takes one literal, found {}", args.len()))
                    );
                }
                let SExpr::List(items, _) = e else {
                    unreachable!()
                };
                let mut inner = Vec::new();
                self.literal(&items[1], &mut inner)?;
                match inner.pop() {
                    Some(Literal::Pos(a)) if inner.is_empty() => Literal::Not(a),
                    Some(Literal::Distinct(a, b)) if inner.is_empty() => Literal::Equal(a, b),
                    _ => {
                        return Err(self.err(e, "'not' must be applied to an atom or a 'distinct'"))
                    }
                }
            }
            Term::Func(n, args) if *n == kw::DISTINCT => {
                if args.len() != 2 {
                    return Err(self.err(
                        e,
                        format!("'distinct' takes two terms, found {}", args.len()),
                    ));
                }
                Literal::Distinct(args[0].clone(), args[1].clone())
            }
            Term::Func(n, _) if *n == kw::OR => {
                let SExpr::List(items, _) = e else {
                    unreachable!()
                };
                let mut alts = Vec::new();
                for i in &items[1..] {
                    let mut conj = Vec::new();
                    self.literal(i, &mut conj)?;
                    match conj.len() {
                        1 => alts.push(conj.pop().expect("one literal")),
                        _ => alts.push(Literal::And(conj)),
                    }
                }
                if alts.is_empty() {
                    return Err(self.err(e, "'or' needs at least one literal"));
                }
                Literal::Or(alts)
            }
            Term::Func(n, _) if *n == kw::AND => {
                let SExpr::List(items, _) = e else {
                    unreachable!()
                };
                for i in &items[1..] {
                    self.literal(i, out)?;
                }
                return Ok(());
            }
            Term::Const(n) if *n == kw::NOT || *n == kw::DISTINCT || *n == kw::OR => {
                return Err(self.err(e, format!("'{}' needs arguments", self.symbols.name(*n))))
            }
            _ => Literal::Pos(t),
        };
        out.push(lit);
        Ok(())
    }
}

/// Reads a list of ground terms such as `((mark 1 1) noop)` against a game's symbols,
/// without adding symbols: a term with an unknown symbol cannot be a move of the game.
pub fn parse_ground_terms(text: &str, symbols: &Symbols) -> Result<Vec<Term>, String> {
    let sexprs = parse_sexprs(text, "<moves>").map_err(|e| e.to_string())?;
    let list = match sexprs.as_slice() {
        [SExpr::List(items, _)] => items.clone(),
        _ => return Err(format!("expected one list of moves, found {text:?}")),
    };
    list.iter().map(|e| e.to_ground(symbols)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_and_crlf() {
        let d = parse(
            "; c\r\n(role x) #| block\n |# (<= (p ?X) (q ?x))\r\n(<= terminal)",
            "t",
        )
        .unwrap();
        assert_eq!(d.rules.len(), 3);
        assert_eq!(d.rules[1].pos, Pos { line: 3, col: 5 });
        assert!(
            matches!(&d.rules[1].head, Term::Func(_, a) if a[0] == Term::Var(d.symbols.get("?x").unwrap()))
        );
    }

    #[test]
    fn unbalanced() {
        let e = parse("(role x)\n(init (a)", "f.kif").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.kif:2:1: error: unbalanced '('"),
            "{e}"
        );
        let e = parse("(role x))", "f.kif").unwrap_err();
        assert!(e.to_string().contains("1:9"), "{e}");
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_parser() {
        let text = format!("(init {}a{})", "(f ".repeat(900), ")".repeat(900));
        assert!(parse(&text, "t").is_ok());
        let text = format!("(init {}a{})", "(f ".repeat(5000), ")".repeat(5000));
        assert!(parse(&text, "t")
            .unwrap_err()
            .to_string()
            .contains("nested deeper"));
    }
}
