//! `gemmlab report`: a Markdown report with SVG/PNG charts, built from result
//! directories alone (no device needed).

use std::path::PathBuf;

use clap::Args;

use gemmlab::report::{self, Options};
use gemmlab::Result;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A result directory written by gemmlab (holds environment.json), or a
    /// parent of several; repeatable.
    #[arg(long, value_name = "DIR", required = true)]
    pub from: Vec<PathBuf>,
    /// Where report.md and charts/ are written (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// TrueType font for the PNG charts' text (default: searched under /usr/share/fonts).
    #[arg(long, value_name = "FILE")]
    pub font: Option<PathBuf>,
    /// Write SVG charts only.
    #[arg(long)]
    pub no_png: bool,
    /// Size of the per-kernel bar chart: N or MxNxK (default: the largest measured).
    #[arg(long)]
    pub size: Option<String>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    let outcome = report::generate(&Options {
        from: args.from,
        out: args.out,
        png: !args.no_png,
        font: args.font,
        size: args.size,
    })?;
    let pngs = outcome.charts.iter().filter(|c| c.png.is_some()).count();
    let count = gemmlab::util::words::plural;
    println!(
        "{}: {}, {}, {}, {} ({} SVG, {} PNG)",
        outcome.markdown.display(),
        count(outcome.runs, "run"),
        count(outcome.measurements, "measurement"),
        count(outcome.findings, "finding"),
        count(outcome.charts.len(), "chart"),
        outcome.charts.len(),
        pngs
    );
    if let Some(why) = &outcome.png_skipped {
        println!("PNG charts not written: {why}");
    }
    Ok(())
}
