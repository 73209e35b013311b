//! `gemmlab store`: the shared tuning store on a database engine: what it holds
//! (jobs, outcomes by device model and worker, live claims), and moving
//! outcomes and bests between it and the JSON files earlier runs wrote.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use gemmlab::results::engine::Url;
use gemmlab::tune::fleet;
use gemmlab::tune::store::transfer::{self, Moved};
use gemmlab::{Error, Result};

#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// The jobs, each device model's outcomes by worker, and the claims held now.
    Status(At),
    /// JSON-lines tuning stores (a file or a folder: `--store` folders of earlier runs)
    /// and/or a folder of databases of bests (results/tuned) into the engine.
    Import(Import),
    /// The engine's outcomes as JSON-lines stores (one per device model) and/or its
    /// databases of bests as JSON files.
    Export(Export),
}

#[derive(Args, Debug)]
pub struct At {
    /// The store: an SQLite file (sqlite:PATH, *.sqlite) or a PostgreSQL URL.
    #[arg(long, default_value = gemmlab::tune::store::DEFAULT_STORE)]
    pub store: String,
}

#[derive(Args, Debug)]
pub struct Import {
    #[command(flatten)]
    pub at: At,
    /// A JSON-lines store file, or a folder of them.
    #[arg(long = "tune-store", value_name = "PATH")]
    pub tune_store: Option<PathBuf>,
    /// A folder of databases of bests (one JSON file per device).
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct Export {
    #[command(flatten)]
    pub at: At,
    /// The folder the JSON-lines stores go to.
    #[arg(long = "tune-store", value_name = "DIR")]
    pub tune_store: Option<PathBuf>,
    /// The folder the databases of bests go to.
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
}

fn engine(at: &At) -> Result<Url> {
    Url::parse(&at.store).ok_or_else(|| {
        Error::invalid(format!(
            "--store {}: not a database engine's address (sqlite:PATH, *.sqlite, *.db, postgres://...)",
            at.store
        ))
    })
}

fn said(what: &str, m: &Moved) {
    println!(
        "{what}: {} file(s), {} record(s), {} already there, {} database(s) of bests",
        m.files, m.records, m.skipped, m.databases
    );
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
}

pub fn run(args: StoreArgs) -> Result<()> {
    match args.action {
        Action::Status(at) => status(&engine(&at)?),
        Action::Import(i) => {
            let url = engine(&i.at)?;
            if i.tune_store.is_none() && i.db.is_none() {
                return Err(Error::invalid(
                    "store import: give --tune-store PATH and/or --db DIR",
                ));
            }
            if let Some(p) = &i.tune_store {
                said(
                    &format!("{} -> {}", p.display(), url.describe()),
                    &transfer::import_store(p, &url)?,
                );
            }
            if let Some(d) = &i.db {
                said(
                    &format!("{} -> {}", d.display(), url.describe()),
                    &transfer::import_bests(d, &url)?,
                );
            }
            Ok(())
        }
        Action::Export(x) => {
            let url = engine(&x.at)?;
            if x.tune_store.is_none() && x.db.is_none() {
                return Err(Error::invalid(
                    "store export: give --tune-store DIR and/or --db DIR",
                ));
            }
            if let Some(p) = &x.tune_store {
                said(
                    &format!("{} -> {}", url.describe(), p.display()),
                    &transfer::export_store(&url, p)?,
                );
            }
            if let Some(d) = &x.db {
                said(
                    &format!("{} -> {}", url.describe(), d.display()),
                    &transfer::export_bests(&url, d)?,
                );
            }
            Ok(())
        }
    }
}

fn status(url: &Url) -> Result<()> {
    println!("store {}", url.describe());
    let jobs = fleet::jobs(url)?;
    println!("\njobs: {}", jobs.len());
    for (job, done) in &jobs {
        println!(
            "  job {} ({}): tune {}",
            job.id,
            job.created_utc,
            job.args.join(" ")
        );
        for (model, worker, code) in done {
            println!("    done for {model} by {worker}: exit {code}");
        }
        if done.is_empty() {
            println!("    not done for any device model yet");
        }
    }
    let s = fleet::summary(url)?;
    println!("\noutcomes by device model and worker:");
    for (model, worker, search, finals) in &s.outcomes {
        println!("  {model}: {worker}: {search} search, {finals} final");
    }
    println!("\nclaims held now: {}", s.claims.len());
    for (model, worker, left) in &s.claims {
        println!("  {model}: {worker}, {left:.0} s left");
    }
    Ok(())
}
