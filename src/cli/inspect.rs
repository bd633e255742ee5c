//! `ggp-asp inspect`: where a game's size goes and what each engine makes of
//! it. The grounding report names the relations with the most ground atoms
//! and rule instances (the ones that make a game too big to compile) and
//! the latches the ground rules show (and the bound on a play's length
//! they give); the engine lines give each engine's speed on the same short
//! walk and what `auto` chose, with its reason, and the compiled network's
//! sure wins (moves the rules make a win wherever they are legal).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use ggp_asp::clock;
use ggp_asp::gdl;
use ggp_asp::reasoner::engine::rate;
use ggp_asp::reasoner::ground::{self, Limits};
use ggp_asp::reasoner::prover::Strategy;
use ggp_asp::reasoner::{hybrid, AnyMachine, Engine, Propnet, PropnetError, Prover};

/// Where a game's grounding goes (the largest relations) and each engine's speed.
#[derive(clap::Args)]
pub struct Args {
    game: PathBuf,
    /// How many of the largest relations to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// CPU seconds of each engine's walk.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "2")]
    seconds: Duration,
}

/// Join steps a prover walk may take: a game whose rules take one strategy
/// far longer than the clock per state is reported as such, not waited for.
const WALK_WORK: u64 = 200_000_000;
const WALK_STEPS: usize = 100_000;

impl Args {
    pub fn run(self) -> Result<u8> {
        let game = gdl::load(&self.game).map_err(|e| anyhow::anyhow!("{e}"))?;
        let budget = self.seconds;
        println!("{}", self.game.display());

        let limits = Limits::default();
        let report = ground::report(&game, &limits);
        match &report.stopped {
            None => println!("grounding: complete"),
            Some(why) => println!("grounding: stopped ({why}); the counts are as far as it got"),
        }
        println!(
            "  {} ground atoms, {} rule instances, {:.1} MiB held (at most {} MiB)",
            report.atoms,
            report.rules,
            report.memory as f64 / (1u64 << 20) as f64,
            limits.max_memory >> 20
        );
        println!("  largest relations (ground atoms, rule instances with that head):");
        let width = report
            .relations
            .iter()
            .take(self.top)
            .map(|r| r.0.len())
            .max()
            .unwrap_or(0);
        for (name, atoms, rules) in report.relations.iter().take(self.top) {
            println!("    {name:<width$} {atoms:>10} {rules:>10}");
        }
        if report.stopped.is_none() {
            if let Ok(p) = ground::ground(&game, &limits) {
                let l = ground::latches(&p);
                let some = |ts: &[gdl::Term]| {
                    let names: Vec<String> = ts
                        .iter()
                        .take(3)
                        .map(|t| gdl::print::term_to_string(t, &game.symbols))
                        .collect();
                    let more = if ts.len() > 3 { ", ..." } else { "" };
                    format!("{}{more}", names.join(", "))
                };
                println!(
                    "  latches: {} positive (once true, true for ever: {}), {} negative (once false, false for ever: {})",
                    l.positive.len(),
                    some(&l.positive),
                    l.negative.len(),
                    some(&l.negative)
                );
                let init = Prover::try_new(game.clone()).ok().map(|p| {
                    use ggp_asp::reasoner::StateMachine;
                    p.fluents(&p.initial_state())
                });
                if let Some(b) = init.and_then(|init| ground::play_bound(&p, &init)) {
                    println!(
                        "  plays: at most {} moves (each makes one of {} positive latches true, {} at the start)",
                        b.moves, b.latches, b.at_start
                    );
                }
            }
        }

        println!(
            "engines (states a CPU second on a fixed walk of at most {:.1} s):",
            self.seconds.as_secs_f64()
        );
        let whole = Propnet::new(game.clone());
        match &whole {
            Ok(net) => {
                let s = net.stats();
                println!(
                    "  propnet: {:.0} states/s ({} nodes, compiled in {:.3} s)",
                    rate(net, WALK_STEPS, budget),
                    s.nodes,
                    s.compile_s
                );
                use ggp_asp::reasoner::StateMachine;
                let roles = &game.roles;
                let wins: Vec<String> = (0..net.num_roles())
                    .map(|r| {
                        let w = net.sure_wins(r);
                        let first = w.first().map_or(String::new(), |m| {
                            format!(
                                ", e.g. {}",
                                gdl::print::term_to_string(&net.move_term(m), &game.symbols)
                            )
                        });
                        let name = roles.get(r).map_or(String::new(), |t| {
                            gdl::print::term_to_string(t, &game.symbols)
                        });
                        format!("{name} {}{first}", w.len())
                    })
                    .collect();
                println!(
                    "  sure wins (moves that win wherever legal): {}",
                    wins.join("; ")
                );
            }
            Err(e) => println!("  propnet: does not compile ({e})"),
        }
        if let Err(PropnetError::Ground(e)) = &whole {
            let built = Prover::try_with(game.clone(), Strategy::GoalDirected)
                .map_err(|e| e.to_string())
                .and_then(|p| hybrid::build(&game, e, p, &hybrid::limits()));
            match built {
                Ok(h) => match h
                    .prover()
                    .bounded(WALK_WORK, |_| rate(&*h, WALK_STEPS, budget))
                {
                    Some(r) => println!("  {}: {r:.1} states/s", h.describe()),
                    None => println!(
                        "  {}: more than {WALK_WORK} join steps without finishing the walk",
                        h.describe()
                    ),
                },
                Err(why) => println!("  hybrid: does not build ({why})"),
            }
        }
        for strategy in [Strategy::BottomUp, Strategy::GoalDirected] {
            let name = strategy.name();
            match Prover::try_with(game.clone(), strategy) {
                Ok(p) => match p.bounded(WALK_WORK, |p| rate(p, WALK_STEPS, budget)) {
                    Some(r) => println!("  prover, {name}: {r:.1} states/s"),
                    None => println!(
                        "  prover, {name}: more than {WALK_WORK} join steps without finishing the walk"
                    ),
                },
                Err(e) => println!("  prover, {name}: does not build ({e})"),
            }
        }
        match AnyMachine::build(game, Engine::Auto) {
            Ok((_, why)) => println!("  auto: {why}"),
            Err(e) => println!("  auto: no engine runs the game ({e})"),
        }
        Ok(0)
    }
}
