//! `gemmlab crossover`: where the GEMM routine should switch from the direct to
//! the indirect kernel on this device, per toolchain and precision.

use std::path::PathBuf;

use clap::Args;

use gemmlab::results::bests::Database;
use gemmlab::routine::Tuning;
use gemmlab::tune::crossover::{self, EdgeResult};
use gemmlab::{Backend, Error, Precision, Result};

use super::compare::{progress, seed_or_random, DeviceArgs};

#[derive(Args, Debug)]
pub struct CrossoverArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// f32, f64, or both.
    #[arg(long, default_value = "f32,f64", value_delimiter = ',', value_parser = |s: &str| Precision::parse(s))]
    pub precision: Vec<Precision>,
    /// Cube edges to measure (default 64..2048; on a CPU 16..256).
    #[arg(long, value_delimiter = ',')]
    pub edges: Vec<usize>,
    /// Timed routine calls per kernel and edge (after a checked call and a warm-up call).
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    #[arg(long)]
    pub seed: Option<u64>,
    /// The database of bests: the tuned configurations of xgemm and xgemmdirect are
    /// read from it and the crossover is written into it.
    #[arg(long, default_value = gemmlab::results::bests::DEFAULT_DIR)]
    pub db: PathBuf,
    /// Measure and print, but leave the database alone.
    #[arg(long)]
    pub no_db: bool,
    /// Where crossover.json (every edge's timings) goes.
    #[arg(long, default_value = "gemmlab-results/crossover")]
    pub out: PathBuf,
}

pub fn run(args: CrossoverArgs) -> Result<()> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    if args.edges.contains(&0) {
        return Err(Error::invalid("--edges: sizes must be positive"));
    }
    let mut sessions = args.device.sessions()?;
    let seed = seed_or_random(args.seed);
    let mut all = Vec::new();
    for session in &mut sessions {
        let info = session.backend.borrow().info().clone();
        let edges = if !args.edges.is_empty() {
            args.edges.clone()
        } else if info.kind == gemmlab::DeviceKind::Gpu {
            crossover::DEFAULT_EDGES.to_vec()
        } else {
            vec![16, 32, 64, 128, 256]
        };
        let mut db = Database::load(&args.db, &info.name)?;
        for &precision in &args.precision {
            let tuning = Tuning::from_database(&db, info.toolchain, precision)?;
            println!(
                "{} via {}, {precision}: direct {} / indirect {} ({})",
                info.name,
                info.toolchain,
                tuning.direct.describe(),
                tuning.indirect.describe(),
                tuning.source
            );
            let pb = progress(edges.len() as u64);
            let results =
                crossover::measure(session, &tuning, precision, &edges, args.reps, seed, &pb);
            pb.finish_and_clear();
            let results = results?;
            print!("{}", table(&results));
            let entry = crossover::entry(
                &results,
                info.toolchain,
                precision,
                info.compiler_version.clone(),
            );
            println!(
                "  indirect from {}^3 on (routine time = pre + kernel + post, median of {})",
                entry.min_indirect, args.reps
            );
            all.push(serde_json::json!({
                "device": info.name,
                "toolchain": info.toolchain,
                "precision": precision,
                "seed": seed,
                "tuning": tuning,
                "edges": results,
                "min_indirect": entry.min_indirect,
            }));
            db.set_crossover(entry);
        }
        if !args.no_db {
            let path = db.save(&args.db)?;
            println!("crossovers written to {}", path.display());
        }
    }
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let path = args.out.join("crossover.json");
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::invalid(e.to_string()))?;
    std::fs::write(&path, text + "\n").map_err(|e| Error::io(&path, e))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn table(results: &[EdgeResult]) -> String {
    let us = |s: &Option<gemmlab::measure::Stats>| {
        s.map_or("-".to_string(), |s| format!("{:.1}", s.median_ns / 1e3))
    };
    let mut out = format!(
        "  {:>6} {:>12} {:>12}  {}\n",
        "edge", "direct us", "indirect us", "faster"
    );
    for r in results {
        let faster = match (&r.direct, &r.indirect) {
            (Some(d), Some(i)) if i.median_ns <= d.median_ns => "indirect",
            (Some(_), Some(_)) | (Some(_), None) => "direct",
            (None, Some(_)) => "indirect",
            (None, None) => "",
        };
        out += &format!(
            "  {:>6} {:>12} {:>12}  {faster}{}\n",
            r.size,
            us(&r.direct),
            us(&r.indirect),
            if r.notes.is_empty() {
                String::new()
            } else {
                format!("  ({})", r.notes.join("; "))
            }
        );
    }
    out
}
