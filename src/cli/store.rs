//! `ggp-asp store`: looking after the plan store ([`ggp_asp::store`]): list
//! its records, show one, export and import them as JSON lines, forget one.
//! A game is named by a file (found up to renaming, as `solve` finds it), a
//! record's id, or the start of its fingerprint.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use ggp_asp::gdl;
use ggp_asp::store::{self, Entry, Plans};

/// Look after the plan store: the games solved, kept across runs.
#[derive(clap::Args)]
pub struct Args {
    /// The store (default: $GGP_ASP_STORE, else plans.sqlite in the user's
    /// data folder).
    #[arg(long, value_name = "PATH", global = true)]
    store: Option<PathBuf>,
    #[command(subcommand)]
    what: StoreCommand,
}

#[derive(Subcommand)]
enum StoreCommand {
    /// One line per record: id, fingerprint, name, outcome, moves, goal,
    /// proof, bound, date.
    List {
        /// One JSON object per record (the export format) instead.
        #[arg(long)]
        json: bool,
    },
    /// A record in full: what is known, the plan, the rules.
    Show { game: String },
    /// Every record as JSON lines to FILE (`-`: standard output).
    Export { file: PathBuf },
    /// Records from a file of JSON lines (as `export` writes them), each
    /// merged with what the store has: a better answer replaces a worse one.
    Import { file: PathBuf },
    /// Removes a record.
    Forget { game: String },
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let path = match &self.store {
            Some(p) => p.clone(),
            None => store::default_path()
                .context("no store: $GGP_ASP_STORE is off and no --store PATH is given")?,
        };
        let plans = Plans::open(&path)?;
        match self.what {
            StoreCommand::List { json } => list(&plans, json),
            StoreCommand::Show { game } => show(&plans, &game),
            StoreCommand::Export { file } => export(&plans, &file),
            StoreCommand::Import { file } => import(&plans, &file),
            StoreCommand::Forget { game } => {
                let (id, e) = find(&plans, &game)?;
                plans.forget(id)?;
                println!("forgot record {id} ({}, {})", e.name, e.fingerprint);
                Ok(0)
            }
        }
    }
}

fn list(plans: &Plans, json: bool) -> Result<u8> {
    let out = std::io::stdout();
    let mut out = out.lock();
    let records = plans.list()?;
    if !json {
        writeln!(
            out,
            "{:>4}  {:<16}  {:<24}  {:<8}  {:>5}  {:>4}  {:<9}  {:>5}  date",
            "id", "fingerprint", "name", "outcome", "moves", "goal", "proven", "bound"
        )?;
    }
    for (id, e) in &records {
        if json {
            writeln!(out, "{}", serde_json::to_string(e)?)?;
            continue;
        }
        let fp = e.fingerprint.to_string();
        writeln!(
            out,
            "{id:>4}  {:<16}  {:<24}  {:<8}  {:>5}  {:>4}  {:<9}  {:>5}  {}",
            &fp[..fp.len().min(16)],
            e.name,
            e.outcome.name(),
            if e.plan.is_empty() {
                "-".to_string()
            } else {
                e.plan.len().to_string()
            },
            e.goal.map_or("-".to_string(), |g| g.to_string()),
            e.proven.name(),
            e.lower_bound.map_or("-".to_string(), |b| b.to_string()),
            e.solved_at
        )?;
    }
    Ok(0)
}

fn show(plans: &Plans, game: &str) -> Result<u8> {
    let (id, e) = find(plans, game)?;
    println!("record {id}: {}", e.name);
    println!("fingerprint {}", e.fingerprint);
    println!(
        "{}; goal {}; proven {}; lower bound {}; horizon {}",
        e.outcome.name(),
        e.goal.map_or("-".to_string(), |g| g.to_string()),
        e.proven.name(),
        e.lower_bound.map_or("-".to_string(), |b| b.to_string()),
        e.horizon
    );
    println!(
        "by {} on {}, {:.2} s of solving in all",
        e.solver, e.solved_at, e.seconds
    );
    if !e.plan.is_empty() {
        println!(
            "plan ({} moves, in the names of the rules below):",
            e.plan.len()
        );
        for (i, m) in e.plan.iter().enumerate() {
            println!("{:4} {m}", i + 1);
        }
    }
    println!("rules:");
    print!("{}", e.rules);
    Ok(0)
}

fn export(plans: &Plans, file: &PathBuf) -> Result<u8> {
    let records = plans.list()?;
    let mut text = String::new();
    for (_, e) in &records {
        text.push_str(&serde_json::to_string(e)?);
        text.push('\n');
    }
    if file.as_os_str() == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
        eprintln!("{} records written to {}", records.len(), file.display());
    }
    Ok(0)
}

/// Reads each line's record, checks that its fingerprint is its rules'
/// (a record edited by hand or from another build would be found under a
/// wrong key otherwise) and merges it in.
fn import(plans: &Plans, file: &PathBuf) -> Result<u8> {
    let name = file.display().to_string();
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(file).with_context(|| format!("cannot read {name}"))?,
        ))
    };
    let (mut changed, mut seen) = (0, 0);
    for (i, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {name}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", i + 1);
        let entry: Entry =
            serde_json::from_str(&line).with_context(|| format!("{at}: not a store record"))?;
        let desc =
            gdl::parse(&entry.rules, &at).with_context(|| format!("{at}: the record's rules"))?;
        let fp = store::fingerprint::fingerprint(&desc);
        if fp != entry.fingerprint {
            bail!(
                "{at}: the record's fingerprint {} is not its rules' ({fp}): written by another build, or edited",
                entry.fingerprint
            );
        }
        seen += 1;
        if plans.record(&fp, &desc, entry)? {
            changed += 1;
        }
    }
    eprintln!("{seen} records read from {name}, {changed} new or better than the store's");
    Ok(0)
}

/// The record `game` names: a file's game (found up to renaming), an id,
/// or the start of a fingerprint (at least 6 characters, one record).
fn find(plans: &Plans, game: &str) -> Result<(i64, Entry)> {
    let path = std::path::Path::new(game);
    if path.is_file() {
        let (desc, _) = gdl::load_described(path)?;
        return match plans.recall(&desc)? {
            Some(r) => {
                let rec = plans.list()?.into_iter().find(|(id, _)| *id == r.id);
                rec.context("the record went away meanwhile")
            }
            None => bail!("{game}: not in the store {}", plans.location()),
        };
    }
    let records = plans.list()?;
    if let Ok(id) = game.parse::<i64>() {
        if let Some(r) = records.iter().find(|(i, _)| *i == id) {
            return Ok(r.clone());
        }
    }
    let hits: Vec<_> = records
        .into_iter()
        .filter(|(_, e)| game.len() >= 6 && e.fingerprint.to_string().starts_with(game))
        .collect();
    match hits.len() {
        1 => Ok(hits.into_iter().next().expect("one")),
        0 => bail!(
            "{game}: no such file, record id or fingerprint in {}",
            plans.location()
        ),
        n => bail!("{game}: {n} records have a fingerprint starting so; give more of it"),
    }
}
