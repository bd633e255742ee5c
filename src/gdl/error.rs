//! Diagnostics for GDL input: what is wrong, where (file, line, column) and, for
//! rule-level problems, the rule's text.

use std::fmt;

use super::ast::Pos;

/// How serious a diagnostic is: errors make the rules meaningless, warnings do not.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// One problem found in a game description.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: String,
    pub pos: Pos,
    pub message: String,
    /// The offending rule, printed as KIF, when the problem belongs to a rule.
    pub rule: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file, self.pos.line, self.pos.col, sev, self.message
        )?;
        if let Some(rule) = &self.rule {
            write!(f, "\n    in rule: {rule}")?;
        }
        Ok(())
    }
}

/// A GDL input that cannot be used: one or more error diagnostics.
#[derive(Debug, Clone)]
pub struct GdlError {
    pub diagnostics: Vec<Diagnostic>,
}

impl GdlError {
    pub fn single(file: &str, pos: Pos, message: impl Into<String>) -> Self {
        GdlError {
            diagnostics: vec![Diagnostic {
                severity: Severity::Error,
                file: file.to_string(),
                pos,
                message: message.into(),
                rule: None,
            }],
        }
    }
}

impl fmt::Display for GdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for GdlError {}

/// A diagnostic of `file` at `pos`, naming the `rule` when there is one.
pub(crate) fn diag(
    file: &str,
    severity: Severity,
    pos: Pos,
    message: String,
    rule: Option<String>,
) -> Diagnostic {
    Diagnostic {
        severity,
        file: file.to_string(),
        pos,
        message,
        rule,
    }
}
