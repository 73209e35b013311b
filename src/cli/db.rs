//! `gemmlab db`: the database of bests with its evidence. `list` shows each
//! entry's search; `check` names what cannot stand as "the best" (stale sources,
//! shallow searches, configurations the kernel refuses, and with `--measure`,
//! entries a neighbour's configuration beats at their own size); `retune`
//! searches what `check` names again; `prune` removes what no lookup should serve.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use gemmlab::results::bests::{self, Database};
use gemmlab::results::evidence::{self, audit, name, Finding};
use gemmlab::{Backend, Error, Result};

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Every entry with its evidence: configurations tried, strategy, search time, date,
    /// whether its source is the kernel's current one.
    List(Which),
    /// What cannot stand as "the best": stale sources, shallow searches, refused
    /// configurations; with --measure, entries a neighbour's configuration beats at
    /// their own size (timed on the device). Exit 1 when anything is found.
    Check(CheckArgs),
    /// Search again what `check` names (each in a `gemmlab tune` of its own, resumable
    /// from the tune store: run it again after an interrupt).
    Retune(RetuneArgs),
    /// Remove the entries no lookup should serve: an older source's beside the
    /// current one's, configurations the kernel refuses (--stale, --shallow: more).
    Prune(PruneArgs),
}

#[derive(Args, Debug, Clone)]
pub struct Which {
    /// A database file, or a folder of them (one per device).
    #[arg(long, default_value = bests::DEFAULT_DIR)]
    pub db: PathBuf,
    /// Only the entries of these kernels (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub kernels: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub which: Which,
    /// Also time each entry against its neighbours' configurations at its own size
    /// on the device (the database must be this device's).
    #[arg(long)]
    pub measure: bool,
    /// How much faster (percent) a neighbour must run to beat an entry.
    #[arg(long, default_value_t = 3.0)]
    pub margin: f64,
    #[command(flatten)]
    pub device: super::compare::DeviceArgs,
    #[arg(long, default_value_t = 10, value_parser = gemmlab::error::parse_reps)]
    pub reps: usize,
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub timing: super::compare::TimingArgs,
    /// Where --measure writes its rows.
    #[arg(long, default_value = "gemmlab-results/db-check")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct RetuneArgs {
    #[command(flatten)]
    pub which: Which,
    /// The device to tune on (as `tune --device`).
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Configurations each search may try.
    #[arg(long, default_value_t = 200)]
    pub max_configs: usize,
    /// Wall seconds each search may take.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// The tune store searches resume from (an SQLite file, a PostgreSQL URL or a folder).
    #[arg(long, default_value = gemmlab::tune::store::DEFAULT_STORE)]
    pub store: String,
    /// Print the searches instead of running them.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args, Debug)]
pub struct PruneArgs {
    #[command(flatten)]
    pub which: Which,
    /// Also every entry tuned on an older source of its kernel.
    #[arg(long)]
    pub stale: bool,
    /// Also every shallow entry that a trusted entry within 2x of its size serves.
    #[arg(long)]
    pub shallow: bool,
    /// Say what would go, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: DbArgs) -> Result<super::Outcome> {
    match args.action {
        Action::List(w) => list(&w),
        Action::Check(c) => check(&c),
        Action::Retune(r) => retune(&r),
        Action::Prune(p) => prune(&p),
    }
}

/// The databases `--db` names: one file, or every file of a folder.
fn load(w: &Which) -> Result<Vec<(PathBuf, Database)>> {
    if !w.db.exists() {
        return Err(Error::invalid(format!(
            "--db {}: no such file or folder (gemmlab tune writes {})",
            w.db.display(),
            bests::DEFAULT_DIR
        )));
    }
    let all = match w.db.is_dir() || bests::engine_url(&w.db).is_some() {
        true => Database::all(&w.db)?,
        false => vec![(w.db.clone(), Database::read(&w.db)?)],
    };
    for k in &w.kernels {
        let known = all
            .iter()
            .any(|(_, d)| d.entries.iter().any(|e| &e.kernel == k));
        if !known && gemmlab::kernel::builtin::find(k).is_err() {
            return Err(Error::invalid(format!(
                "--kernels {k}: no such kernel (gemmlab compare --help lists them) and no entry of that name"
            )));
        }
    }
    Ok(all)
}

fn chosen(w: &Which, db: &Database) -> Vec<usize> {
    (0..db.entries.len())
        .filter(|&i| w.kernels.is_empty() || w.kernels.contains(&db.entries[i].kernel))
        .collect()
}

fn list(w: &Which) -> Result<super::Outcome> {
    for (path, db) in load(w)? {
        let found = audit(&db);
        println!(
            "{} ({}): {} entries",
            db.device,
            path.display(),
            db.entries.len()
        );
        println!(
            "  {:<34} {:>7} {:>9} {:<12} {:>8} {:<10} {:>9} {:>6}  doubts",
            "entry", "tried", "space", "strategy", "search s", "tuned", "GFLOP/s", "x BLAS"
        );
        for i in chosen(w, &db) {
            let e = &db.entries[i];
            let doubts: Vec<&str> = (found.iter().filter(|f| f.entry == i))
                .map(|f| f.doubt.word())
                .collect();
            println!(
                "  {:<34} {:>7} {:>9} {:<12} {:>8} {:<10} {:>9.1} {:>6}  {}",
                name(e),
                e.tried,
                e.space.map_or("?".into(), |n| n.to_string()),
                e.strategy,
                e.search_s.map_or("?".into(), |s| format!("{s:.0}")),
                e.tuned_utc.get(..10).unwrap_or(&e.tuned_utc),
                e.gflops,
                e.vs_vendor.map_or("-".into(), |v| format!("{v:.2}")),
                if doubts.is_empty() {
                    "-".to_string()
                } else {
                    doubts.join(", ")
                }
            );
        }
    }
    println!(
        "(shallow: under {} configurations tried of a larger space; stale: tuned on another source of the kernel)",
        bests::SHALLOW_TRIED
    );
    Ok(super::Outcome::from_measurements(&[]))
}

fn say_findings(db: &Database, findings: &[Finding]) {
    for f in findings {
        println!(
            "  {:<14} {}: {}",
            f.doubt.word(),
            name(&db.entries[f.entry]),
            f.words
        );
    }
}

fn check(c: &CheckArgs) -> Result<super::Outcome> {
    if c.margin.is_nan() || c.margin < 0.0 {
        return Err(Error::invalid("--margin must be a percentage of 0 or more"));
    }
    let all = load(&c.which)?;
    let mut total = 0;
    let mut measured = Vec::new();
    if c.measure {
        measured = measure(c, &all)?;
    }
    for (path, db) in &all {
        let picked = chosen(&c.which, db);
        let mut findings: Vec<Finding> = audit(db)
            .into_iter()
            .filter(|f| picked.contains(&f.entry))
            .collect();
        if let Some((_, checked)) = measured.iter().find(|(p, _)| p == path) {
            findings.extend(checked.findings.iter().cloned());
            for (i, why) in &checked.skipped {
                println!("  not timed: {}: {why}", name(&db.entries[*i]));
            }
        }
        findings.sort_by_key(|f| f.entry);
        println!(
            "{} ({}): {} of {} entries in doubt",
            db.device,
            path.display(),
            findings
                .iter()
                .map(|f| f.entry)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            picked.len()
        );
        say_findings(db, &findings);
        total += findings.len();
    }
    let line = format!("db check: {total} doubts (see above); gemmlab db retune searches them again, gemmlab db prune removes what no lookup should serve");
    Ok(super::Outcome::verdict(total, line))
}

/// `check --measure`: the database of the device opened, each chosen entry timed
/// against its neighbours.
fn measure(
    c: &CheckArgs,
    all: &[(PathBuf, Database)],
) -> Result<Vec<(PathBuf, gemmlab::experiment::db_check::Checked)>> {
    let mut sessions = c.device.sessions()?;
    let device = sessions
        .first()
        .map(|s| s.backend.borrow().info().name.clone())
        .unwrap_or_default();
    let Some((path, db)) = all.iter().find(|(_, d)| d.device == device) else {
        let held: Vec<&str> = all.iter().map(|(_, d)| d.device.as_str()).collect();
        return Err(Error::invalid(format!(
            "--measure: {} holds no database of {device} (it holds: {}); an entry is measured only on the device it was tuned on",
            c.which.db.display(),
            held.join(", ")
        )));
    };
    let plan = c.timing.plan(c.warmup, c.reps, false);
    let seed = super::compare::seed_or_random(c.seed);
    let recording = gemmlab::experiment::Recording {
        out: &c.out,
        seed,
        plan,
        note: Some("db check --measure".into()),
        keep_ptx: false,
    };
    let mut writer = recording.start(&mut sessions)?;
    // A configuration the kernel refuses is already a finding; it is not timed.
    let refused: Vec<usize> = (audit(db).into_iter())
        .filter(|f| f.doubt == evidence::Doubt::Invalid)
        .map(|f| f.entry)
        .collect();
    let picked: Vec<usize> = (chosen(&c.which, db).into_iter())
        .filter(|i| !refused.contains(i))
        .collect();
    let pb = super::compare::progress(picked.len() as u64);
    let checked = gemmlab::experiment::db_check::beaten(
        &mut sessions,
        db,
        &picked,
        &plan,
        seed,
        c.margin / 100.0,
        &pb,
    );
    let result = match checked {
        Ok(ch) => {
            for r in &ch.rows {
                writer.push(r.clone())?;
            }
            Ok(ch)
        }
        Err(e) => Err(e),
    };
    let kept = result
        .as_ref()
        .map(|_| ())
        .map_err(|e| Error::invalid(e.to_string()));
    recording.finish(writer, &pb, kept)?;
    Ok(vec![(path.clone(), result?)])
}

fn retune(r: &RetuneArgs) -> Result<super::Outcome> {
    if r.max_configs == 0 || r.time_limit.is_some_and(|t| t.is_nan() || t <= 0.0) {
        return Err(Error::invalid(
            "--max-configs and --time-limit must be above 0",
        ));
    }
    let all = load(&r.which)?;
    let mut jobs: Vec<(String, Vec<String>)> = Vec::new();
    for (path, db) in &all {
        let folder = if path.is_dir() {
            path.clone()
        } else if let Some(url) = bests::engine_url(&r.which.db) {
            PathBuf::from(url.as_arg())
        } else {
            path.parent().map_or(PathBuf::from("."), Path::to_path_buf)
        };
        for i in retunable(&r.which, db) {
            let e = &db.entries[i];
            jobs.push((name(e), tune_argv(r, e, &folder)));
        }
    }
    if jobs.is_empty() {
        println!("nothing to retune: db check finds no stale, shallow or refused entry");
        return Ok(super::Outcome::from_measurements(&[]));
    }
    let failed = run_searches(&jobs, r.dry_run)?;
    Ok(super::Outcome::from_failures(failed, "failed searches"))
}

/// The chosen entries `check` doubts that a search can answer: built-in kernels'
/// size entries (a spec's or a routine call's entry is tuned otherwise).
fn retunable(which: &Which, db: &Database) -> Vec<usize> {
    let picked = chosen(which, db);
    let mut slots: Vec<usize> = audit(db)
        .into_iter()
        .filter(|f| f.doubt.retunable() && picked.contains(&f.entry))
        .map(|f| f.entry)
        .filter(|&i| !evidence::is_spec_entry(&db.entries[i]) && db.entries[i].call.is_none())
        .collect();
    slots.dedup();
    slots
}

/// The `gemmlab tune` arguments that search entry `e` again into the database in `folder`.
fn tune_argv(r: &RetuneArgs, e: &bests::Best, folder: &Path) -> Vec<String> {
    let mut a = vec![
        "tune".to_string(),
        "--device".into(),
        r.device.clone(),
        "--kernels".into(),
        e.kernel.clone(),
        "--backends".into(),
        e.toolchain.to_string(),
        "--sizes".into(),
        format!("{}x{}x{}", e.m, e.n, e.k),
        "--precision".into(),
        e.precision.as_str().into(),
        "--max-configs".into(),
        r.max_configs.to_string(),
        "--db".into(),
        folder.display().to_string(),
        "--store".into(),
        r.store.clone(),
        "--out".into(),
        format!(
            "gemmlab-results/db-retune/{}-{}-{}",
            e.kernel,
            e.toolchain,
            e.size_label()
        ),
    ];
    if let Some(t) = r.time_limit {
        a.extend(["--time-limit".into(), t.to_string()]);
    }
    a
}

/// Runs each search as a `gemmlab` process of its own (or only says it, `dry_run`);
/// the number that failed.
fn run_searches(jobs: &[(String, Vec<String>)], dry_run: bool) -> Result<usize> {
    let program = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let mut failed = 0;
    for (n, (what, a)) in jobs.iter().enumerate() {
        println!(
            "retune {}/{}: {what}: gemmlab {}",
            n + 1,
            jobs.len(),
            a.join(" ")
        );
        if dry_run {
            continue;
        }
        let status = std::process::Command::new(&program)
            .args(a)
            .status()
            .map_err(|e| Error::io(&program, e))?;
        if !status.success() {
            failed += 1;
            println!(
                "retune {}/{}: {what}: the search failed ({status})",
                n + 1,
                jobs.len()
            );
        }
    }
    Ok(failed)
}

fn prune(p: &PruneArgs) -> Result<super::Outcome> {
    for (path, mut db) in load(&p.which)? {
        let picked = chosen(&p.which, &db);
        let gone: Vec<(usize, String)> = evidence::prunable(&db, p.stale, p.shallow)
            .into_iter()
            .filter(|(i, _)| picked.contains(i))
            .collect();
        for (i, why) in &gone {
            println!(
                "  {} {}: {why}",
                if p.dry_run { "would remove" } else { "removed" },
                name(&db.entries[*i])
            );
        }
        println!(
            "{} ({}): {} of {} entries {}",
            db.device,
            path.display(),
            gone.len(),
            db.entries.len(),
            if p.dry_run { "would go" } else { "removed" }
        );
        if p.dry_run || gone.is_empty() {
            continue;
        }
        let keep: Vec<bool> = (0..db.entries.len())
            .map(|i| !gone.iter().any(|(g, _)| *g == i))
            .collect();
        let mut k = keep.iter();
        db.entries.retain(|_| *k.next().unwrap_or(&true));
        db.save_to(&path)?;
    }
    Ok(super::Outcome::from_measurements(&[]))
}
