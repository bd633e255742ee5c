//! Fingerprints and symbol maps on the public corpus (`../shared/games`):
//!
//! - every single-player game and a scrambled copy of it (seeded; symbols
//!   renamed, rules, bodies and `or`s shuffled, variables renamed, printed and
//!   read back as a manager would send it) have the same fingerprint, and
//!   `find_mapping` finds a map under which the game's rules are the copy's
//!   and its ground moves are the copy's moves, checked here with code that
//!   shares nothing with the matcher;
//! - across the whole corpus, equal fingerprints only for games that are the
//!   same rules up to renaming (the corpus holds copies of some games under
//!   other names): `find_mapping` must find a map for every such pair.
//!
//! Files that do not parse (GDL-II) or do not validate are skipped, as a
//! player would never store them.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ggp_asp::gdl::{self, print::term_to_string, Description, Term};
use ggp_asp::store::fingerprint::{
    canonical_rules, find_mapping, fingerprint, scramble, Fingerprint,
};

use common::CORPUS;

/// Every `.kif` file of the corpus, its tests folder included, by its path
/// relative to the corpus, sorted.
fn corpus_files() -> Vec<String> {
    let mut files = Vec::new();
    for sub in ["", "tests"] {
        let dir = Path::new(CORPUS).join(sub);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {} (see README.md): {e}", dir.display()));
        for e in entries {
            let p = e.expect("directory entry").path();
            if p.extension().is_some_and(|x| x == "kif") {
                let name = p.file_name().expect("a file name").to_string_lossy();
                files.push(Path::new(sub).join(&*name).to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    assert!(files.len() > 400, "only {} corpus games", files.len());
    files
}

/// The manifest's `players_kind` by file.
fn kinds() -> HashMap<String, String> {
    let text = std::fs::read_to_string(common::corpus_file("manifest.tsv")).expect("manifest");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (file, kind) = (col("file"), col("players_kind"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f.len() > kind.max(file))
        .map(|f| (f[file].to_string(), f[kind].to_string()))
        .collect()
}

/// The description of a corpus file, if it parses and validates.
fn load(rel: &str) -> Option<Description> {
    let path: PathBuf = Path::new(CORPUS).join(rel);
    let bytes = std::fs::read(&path).expect("a corpus file");
    let desc = gdl::parse_bytes(&bytes, rel).ok()?;
    gdl::Game::new(desc.clone()).ok()?;
    Some(desc)
}

/// The ground moves that `legal` rule heads name, as terms.
fn ground_moves(d: &Description) -> Vec<Term> {
    d.rules
        .iter()
        .filter(|r| r.head.name() == Some(gdl::kw::LEGAL))
        .filter_map(|r| r.head.args().get(1))
        .filter(|m| m.is_ground())
        .cloned()
        .collect()
}

#[test]
fn scrambled_single_player_games_keep_their_fingerprint_and_map_back() {
    let kinds = kinds();
    let mut failures = Vec::new();
    let (mut checked, mut moves) = (0, 0);
    let start = Instant::now();
    for (i, rel) in corpus_files().iter().enumerate() {
        if kinds.get(rel).map(String::as_str) != Some("single") {
            continue;
        }
        let Some(d) = load(rel) else { continue };
        checked += 1;
        // What a manager would send: the scrambled rules as text.
        let scrambled = scramble(&d, 0x5eed + i as u64);
        let text = gdl::print::description_to_string(&scrambled);
        let s = gdl::parse(&text, "scrambled").expect("a scrambled game parses");
        if fingerprint(&s) != fingerprint(&d) {
            failures.push(format!("{rel}: the scrambled copy's fingerprint differs"));
            continue;
        }
        let Some(map) = find_mapping(&d, &s) else {
            failures.push(format!("{rel}: no map to the scrambled copy"));
            continue;
        };
        // One fact less (the last written) is another game.
        if let Some(last) = d.rules.iter().rposition(|r| r.body.is_empty()) {
            let mut less = d.clone();
            less.rules.remove(last);
            if fingerprint(&less) == fingerprint(&d) || find_mapping(&d, &less).is_some() {
                failures.push(format!("{rel}: one fact less is taken for the same game"));
            }
        }
        if canonical_rules(&d, Some((&map, &s.symbols))) != canonical_rules(&s, None) {
            failures.push(format!(
                "{rel}: the map does not take the rules to the copy's"
            ));
            continue;
        }
        // The game's ground moves, as a plan, are moves of the copy.
        let ground: Vec<String> = ground_moves(&s)
            .iter()
            .map(|m| term_to_string(m, &s.symbols))
            .collect();
        let plan = ground_moves(&d);
        match map.plan(&plan) {
            Some(translated) => {
                for m in translated {
                    let m = term_to_string(&m, &s.symbols);
                    if !ground.contains(&m) {
                        failures.push(format!("{rel}: move {m} is not a move of the copy"));
                    }
                    moves += 1;
                }
            }
            None => failures.push(format!("{rel}: a move does not translate")),
        }
    }
    eprintln!(
        "{checked} single-player games and their scrambled copies, {moves} ground moves \
         translated, in {:.2?}",
        start.elapsed()
    );
    assert!(checked > 150, "only {checked} single-player games checked");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fingerprints_are_distinct_but_for_copies_of_one_game() {
    let games: Vec<(String, Description)> = corpus_files()
        .into_iter()
        .filter_map(|rel| load(&rel).map(|d| (rel, d)))
        .collect();
    let start = Instant::now();
    let mut slowest = (Duration::ZERO, "");
    let prints: Vec<Fingerprint> = games
        .iter()
        .map(|(rel, d)| {
            let one = Instant::now();
            let f = fingerprint(d);
            slowest = slowest.max((one.elapsed(), rel.as_str()));
            f
        })
        .collect();
    let took = start.elapsed();
    let rules: usize = games.iter().map(|(_, d)| d.rules.len()).sum();
    eprintln!(
        "fingerprinted {} games ({rules} rules) in {took:.2?}; the slowest, {}, in {:.2?}",
        games.len(),
        slowest.1,
        slowest.0
    );
    let mut groups: BTreeMap<Fingerprint, Vec<usize>> = BTreeMap::new();
    for (i, f) in prints.iter().enumerate() {
        groups.entry(*f).or_default().push(i);
    }
    let mut failures = Vec::new();
    let mut duplicates = 0;
    for (f, members) in groups.iter().filter(|(_, m)| m.len() > 1) {
        duplicates += 1;
        let names: Vec<&str> = members.iter().map(|&i| games[i].0.as_str()).collect();
        eprintln!("{f}: {}", names.join(" "));
        let first = &games[members[0]].1;
        for &other in &members[1..] {
            if find_mapping(first, &games[other].1).is_none() {
                failures.push(format!(
                    "{} and {}: the same fingerprint, but no map",
                    games[members[0]].0, games[other].0
                ));
            }
        }
    }
    eprintln!("{duplicates} groups of games that are the same up to renaming");
    assert!(games.len() > 380, "only {} valid games", games.len());
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
