//! `ggp-asp check`: loads each game and prints what validation found (roles,
//! rule and relation counts by phase, warnings), or its errors on stderr.

use std::path::PathBuf;

use anyhow::Result;

use ggp_asp::gdl::{self, Game, Phase, Severity};

/// Parse and validate games: roles, rule and relation counts, warnings.
#[derive(clap::Args)]
pub struct Args {
    /// GDL files (.kif).
    #[arg(required = true)]
    games: Vec<PathBuf>,
}

impl Args {
    /// Exit code 1 when any game fails to load; every game is still reported.
    pub fn run(self) -> Result<u8> {
        let mut failed = false;
        for path in &self.games {
            match gdl::load(path) {
                Ok(g) => {
                    println!("{}: ok", path.display());
                    print_summary(&g);
                }
                Err(e) => {
                    failed = true;
                    for d in &e.diagnostics {
                        debug_assert_eq!(d.severity, Severity::Error);
                        eprintln!("{d}");
                    }
                }
            }
        }
        Ok(if failed { 1 } else { 0 })
    }
}

fn print_summary(g: &Game) {
    let count = |p: Phase| g.relations.values().filter(|&&x| x == p).count();
    let names = |p: Phase| {
        let mut v: Vec<String> = g
            .relations
            .iter()
            .filter(|(_, &x)| x == p)
            .map(|(r, _)| r.display(&g.symbols))
            .collect();
        v.sort();
        v.join(" ")
    };
    println!("  roles: {}", g.role_names().join(" "));
    println!(
        "  rules: {} ({} facts)",
        g.rules.len(),
        g.rules.iter().filter(|r| r.is_fact()).count()
    );
    println!("  relations: {}", g.relations.len());
    println!(
        "  static ({}): {}",
        count(Phase::Static),
        names(Phase::Static)
    );
    println!(
        "  state-dependent ({}): {}",
        count(Phase::State),
        names(Phase::State)
    );
    println!(
        "  move-dependent ({}): {}",
        count(Phase::Move),
        names(Phase::Move)
    );
    for w in &g.warnings {
        println!("{w}");
    }
}
