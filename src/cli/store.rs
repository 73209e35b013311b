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
    /// JSON-lines tuning stores (`--tune-store`: a file or a folder, as earlier runs'
    /// `--store` folders) and/or a folder of databases of bests (`--db`, e.g.
    /// results/tuned) into the engine. What it holds already is skipped.
    Import(Transfer),
    /// The engine's outcomes as JSON-lines stores (`--tune-store DIR`: one per device
    /// model) and/or its databases of bests as JSON files (`--db DIR`).
    Export(Transfer),
}

#[derive(Args, Debug)]
pub struct At {
    /// The store: an SQLite file (sqlite:PATH, *.sqlite) or a PostgreSQL URL.
    #[arg(long, default_value = gemmlab::tune::store::DEFAULT_STORE)]
    pub store: String,
}

#[derive(Args, Debug)]
pub struct Transfer {
    #[command(flatten)]
    pub at: At,
    /// JSON-lines tuning stores: a file or a folder of them.
    #[arg(long = "tune-store", value_name = "PATH")]
    pub tune_store: Option<PathBuf>,
    /// A folder of databases of bests (one JSON file per device).
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

type Move = fn(&std::path::Path, &Url) -> Result<Moved>;

/// Import (files into the engine) or export (the engine out to files).
fn transfer(t: &Transfer, import: bool) -> Result<()> {
    let url = engine(&t.at)?;
    let (name, store, bests): (&str, Move, Move) = match import {
        true => ("import", transfer::import_store, transfer::import_bests),
        false => (
            "export",
            |p, u| transfer::export_store(u, p),
            |p, u| transfer::export_bests(u, p),
        ),
    };
    if t.tune_store.is_none() && t.db.is_none() {
        return Err(Error::invalid(format!(
            "store {name}: give --tune-store PATH and/or --db DIR"
        )));
    }
    for (path, step) in [(&t.tune_store, store), (&t.db, bests)] {
        let Some(path) = path else { continue };
        let m = step(path, &url)?;
        let (files, engine) = (path.display(), url.describe());
        match import {
            true => print!("{files} -> {engine}: "),
            false => print!("{engine} -> {files}: "),
        }
        println!(
            "{} file(s), {} record(s), {} already there, {} database(s) of bests",
            m.files, m.records, m.skipped, m.databases
        );
        for w in &m.warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(())
}

pub fn run(args: StoreArgs) -> Result<()> {
    match args.action {
        Action::Status(at) => status(&engine(&at)?),
        Action::Import(t) => transfer(&t, true),
        Action::Export(t) => transfer(&t, false),
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
