//! The "tune" results: what `gemmlab tune` found for each kernel, size and
//! toolchain (its final round), how each search got there (its trace, one
//! `search-*.json` per search next to the results), how much of each space
//! is near its best, and how the strategies would have fared on the spaces
//! that were searched exhaustively: an offline replay of the measured outcomes.

use std::collections::HashSet;
use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::kernels::{self, Hints};
use crate::results::Measurement;
use crate::tune::grid::Grid;
use crate::tune::replay::{self, Outcomes, Summary};
use crate::tune::run::{load_traces, Trace};
use crate::tune::search::Tried;
use crate::tune::space::{Axis, Candidate};
use crate::tune::strategy::NAMES;

use super::charts::{color, VENDOR_COLOR};
use super::charts::{Band, Figure, Line, Panel, RefLine, Style, XAxis};
use super::data::{self, size_label, Rec};
use super::md::size_label_long;
use super::{md, Ctx, Section, Shown, Topic, SAME_SPEED};

const TUNING: &str = "Tuning (tune)";
/// The experiment name of tune's rows (cuBLAS and the final round).
const EXPERIMENT: &str = "tune";

/// Rows of the top table per kernel, size and toolchain.
const TOP: usize = 10;
/// "Near the best": the share of a space within this fraction of its best.
const NEAR_BEST: f64 = 0.9;
/// The replay's target: configurations and seconds until this fraction of the best.
const REACH: f64 = 0.95;
/// Seeded replays per strategy.
const REPLAY_RUNS: usize = 25;
/// The most configurations a replayed search may try.
const REPLAY_BUDGET: usize = 200;
const REPLAY_SEED: u64 = 1;

type Size = (usize, usize, usize);

/// Colours of the replayed strategies, in `NAMES` order.
const STRATEGY_COLORS: [RGBColor; 4] = [
    RGBColor(90, 90, 90),
    RGBColor(214, 120, 0),
    RGBColor(170, 40, 120),
    RGBColor(20, 150, 160),
];

/// One search trace and the result directory it came from.
struct Search {
    run: usize,
    trace: Trace,
}

impl Search {
    fn toolchain(&self) -> Toolchain {
        self.trace.search.toolchain
    }

    fn strategy(&self) -> &str {
        &self.trace.search.strategy
    }

    /// An exhaustive search that tried every point of its space: its trace
    /// holds the outcome of every configuration.
    fn complete(&self) -> bool {
        let s = &self.trace.search;
        s.strategy == "exhaustive" && s.stopped.starts_with("every point")
    }
}

/// A kernel at a size on one set of devices: what the section groups by.
struct Group<'a> {
    kernel: String,
    size: Size,
    /// The device names of the result directories it comes from.
    machine: Vec<String>,
    /// Indices into the section's searches.
    searches: Vec<usize>,
    /// The final round's rows (cuBLAS left out).
    finals: Vec<Rec<'a>>,
}

/// The fastest configuration of a toolchain.
struct Best {
    gflops: f64,
    vs_vendor: Option<f64>,
    config: String,
    /// From the final round; else the search's own timing (no final round written).
    final_round: bool,
}

/// The published default configuration of a kernel on a toolchain.
struct Published {
    gflops: Option<f64>,
    vs_vendor: Option<f64>,
    /// "compare" (a compare row) or "search" (the point measured while searching).
    source: &'static str,
    /// The status word of a default that has no speed.
    failed: Option<String>,
}

/// What one strategy's replays needed.
struct Needs {
    strategy: String,
    /// Median configurations and seconds to reach `REACH` of the best;
    /// `None` when most runs did not reach it within the budget.
    configs: Option<f64>,
    seconds: Option<f64>,
    /// Runs that reached it.
    reached: usize,
    summary: Summary,
}

pub(crate) fn section(ctx: &mut Ctx) -> Result<Section> {
    let mut sec = Section::default();
    let mut searches: Vec<Search> = Vec::new();
    let mut unreadable: Vec<String> = Vec::new();
    for (ri, run) in ctx.data.runs.iter().enumerate() {
        let (traces, bad) = load_traces(&run.dir);
        // A user kernel's searches are the spec section's.
        searches.extend(
            traces
                .into_iter()
                .filter(|t| t.search.dims.is_none())
                .map(|trace| Search { run: ri, trace }),
        );
        unreadable.extend(bad);
    }
    let data = ctx.data;
    let has_finals = data.runs.iter().any(|r| {
        r.measurements
            .iter()
            .any(|m| m.experiment == EXPERIMENT && m.dims.is_none() && !data::is_offline(m))
    });
    if searches.is_empty() && !has_finals && unreadable.is_empty() {
        return Ok(sec);
    }
    sec.title = TUNING.to_string();
    let mut s = format!("## {TUNING}\n\n");
    s.push_str(
        "`gemmlab tune` searched each kernel's space of parameters, hint switches and register caps on each toolchain \
         with a strategy, timing each configuration briefly while searching (a few timed launches after its checked run, which is the warm-up; \
         a configuration far slower than the best so far is pruned after its checked run), then re-measured each toolchain's \
         fastest configurations with the full timing method, every toolchain's repetitions interleaved: the final round. \
         Tuned bests and the top tables quote the final round (median GFLOP/s ± the interquartile range as % of the median, \
         \"x cuBLAS\" the ratio to cuBLAS measured in the same run); the search charts use the search timing. \
         A published default comes from a compare row of the same device when the results hold one, \
         else from the default configuration's point in a search (search timing).\n\n",
    );
    let dirs = {
        let mut runs: Vec<usize> = searches.iter().map(|x| x.run).collect();
        runs.sort_unstable();
        runs.dedup();
        runs.len()
    };
    let _ = writeln!(
        s,
        "{} from {}.\n",
        plural(searches.len(), "search trace", "search traces"),
        plural(dirs, "result directory", "result directories")
    );
    if !unreadable.is_empty() {
        s.push_str("Search traces that could not be read (left out):\n\n");
        for u in &unreadable {
            let _ = writeln!(s, "- {}", md::escape(&md::short_reason(u)));
        }
        s.push('\n');
    }

    let groups = groups(ctx, &searches);
    let machines = {
        let mut m: Vec<&Vec<String>> = Vec::new();
        for g in &groups {
            if !m.contains(&&g.machine) {
                m.push(&g.machine);
            }
        }
        m.len()
    };
    if groups.is_empty() {
        s.push_str("No search and no final round to show.\n\n");
    }
    for g in &groups {
        let title = format!(
            "{}, {}{}",
            g.kernel,
            size_label_long(g.size),
            if machines > 1 {
                format!(" on {}", g.machine.join(" + "))
            } else {
                String::new()
            }
        );
        let stem = {
            let mut t = format!("{}-{}", g.kernel, size_label(g.size));
            if machines > 1 {
                let _ = write!(t, "-{}", g.machine.join("-"));
            }
            t
        };
        let _ = writeln!(s, "### {title}\n");
        group_section(ctx, &searches, g, &title, &stem, &mut s, &mut sec)?;
    }
    sec.markdown = s;
    Ok(sec)
}

/// Every readable trace in a result directory, and why the others could not be read.
/// Device names of a result directory: its environment's, else its rows' and traces'.
fn machine_of(ctx: &Ctx, run: usize, searches: &[Search]) -> Vec<String> {
    let r = &ctx.data.runs[run];
    let mut names: Vec<String> = r.env.devices.iter().map(|d| d.name.clone()).collect();
    if names.is_empty() {
        names.extend(r.measurements.iter().map(|m| m.device.clone()));
        names.extend(
            searches
                .iter()
                .filter(|x| x.run == run)
                .map(|x| x.trace.search.device.clone()),
        );
    }
    names.sort();
    names.dedup();
    names
}

/// The kernels and sizes tuned, largest size first within each kernel.
fn groups<'a>(ctx: &Ctx<'a>, searches: &[Search]) -> Vec<Group<'a>> {
    let data = ctx.data;
    let mut out: Vec<Group<'a>> = Vec::new();
    let mut place = |kernel: &str, size: Size, machine: Vec<String>| -> usize {
        match out
            .iter()
            .position(|g| g.kernel == kernel && g.size == size && g.machine == machine)
        {
            Some(i) => i,
            None => {
                out.push(Group {
                    kernel: kernel.to_string(),
                    size,
                    machine,
                    searches: Vec::new(),
                    finals: Vec::new(),
                });
                out.len() - 1
            }
        }
    };
    let mut at: Vec<(usize, Option<usize>, Option<Rec<'a>>)> = Vec::new();
    for (i, x) in searches.iter().enumerate() {
        let s = &x.trace.search;
        let g = place(&s.kernel, s.size, machine_of(ctx, x.run, searches));
        at.push((g, Some(i), None));
    }
    for (ri, run) in data.runs.iter().enumerate() {
        for m in run.measurements.iter() {
            if m.experiment != EXPERIMENT
                || data::is_vendor(m)
                || m.variant.is_some()
                || data::is_offline(m)
            {
                continue;
            }
            let g = place(&m.kernel, (m.m, m.n, m.k), machine_of(ctx, ri, searches));
            at.push((g, None, Some(Rec { run: ri, m })));
        }
    }
    for (g, search, row) in at {
        if let Some(i) = search {
            out[g].searches.push(i);
        }
        if let Some(r) = row {
            out[g].finals.push(r);
        }
    }
    out.sort_by(|a, b| {
        data::kernel_order(&a.kernel, &b.kernel)
            .then_with(|| volume(b.size).cmp(&volume(a.size)))
            .then_with(|| a.machine.cmp(&b.machine))
    });
    out
}

fn volume((m, n, k): Size) -> u128 {
    m as u128 * n as u128 * k as u128
}

/// A speed with decimals enough for small numbers (CPU devices).
fn fmt_g(g: f64) -> String {
    if g >= 100.0 {
        format!("{g:.0}")
    } else if g >= 10.0 {
        format!("{g:.1}")
    } else {
        format!("{g:.2}")
    }
}

fn fmt_x(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{v:.2}"))
}

fn fmt_s(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The speed a tried configuration gave: verified GFLOP/s (a pruned one at its
/// single checked launch); `None` when it failed.
fn speed(t: &Tried) -> Option<f64> {
    if t.record.status.is_ok() {
        t.record.gflops.filter(|g| g.is_finite() && *g > 0.0)
    } else {
        None
    }
}

/// cuBLAS in the final round at this size, from the runs of the group.
fn vendor<'a>(ctx: &Ctx<'a>, searches: &[Search], g: &Group) -> Option<&'a Measurement> {
    let runs: Vec<usize> = g
        .finals
        .iter()
        .map(|r| r.run)
        .chain(g.searches.iter().map(|&i| searches[i].run))
        .collect();
    runs.iter()
        .filter_map(|&ri| ctx.data.runs.get(ri))
        .flat_map(|r| r.measurements.iter())
        .find(|m| {
            m.experiment == EXPERIMENT
                && data::is_vendor(m)
                && data::of_size(m, g.size)
                && data::gflops(m).is_some()
        })
}

/// The toolchains of a group, in the usual order.
fn toolchains(searches: &[Search], g: &Group) -> Vec<Toolchain> {
    Toolchain::ALL
        .into_iter()
        .filter(|t| {
            g.searches.iter().any(|&i| searches[i].toolchain() == *t)
                || g.finals.iter().any(|r| r.m.toolchain == *t)
        })
        .collect()
}

fn tuned_best<'a>(
    searches: &[Search],
    g: &Group<'a>,
    t: Toolchain,
    vendor: Option<&Measurement>,
) -> Option<Best> {
    let final_best = g
        .finals
        .iter()
        .filter(|r| r.m.toolchain == t)
        .filter_map(|r| data::gflops(r.m).map(|x| (x, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((gf, r)) = final_best {
        return Some(Best {
            gflops: gf,
            vs_vendor: data::vs_vendor(r.m),
            config: r.m.label.clone().unwrap_or_else(|| r.m.config.describe()),
            final_round: true,
        });
    }
    let v = vendor.and_then(data::gflops);
    g.searches
        .iter()
        .map(|&i| &searches[i])
        .filter(|x| x.toolchain() == t)
        .filter_map(|x| {
            let best = x.trace.search.ranked().into_iter().next()?;
            let gf = speed(best)?;
            Some(Best {
                gflops: gf,
                vs_vendor: v.filter(|v| *v > 0.0).map(|v| gf / v),
                config: best.candidate.describe(),
                final_round: false,
            })
        })
        .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
}

/// The published default: a compare row of the same kernel, size, toolchain
/// and device, else the default point of a search.
fn published(
    ctx: &Ctx,
    searches: &[Search],
    g: &Group,
    t: Toolchain,
    vendor: Option<&Measurement>,
) -> Option<Published> {
    let rows: Vec<&Measurement> = ctx
        .data
        .experiment("compare")
        .into_iter()
        .map(|r| r.m)
        .filter(|m| {
            m.kernel == g.kernel
                && m.toolchain == t
                && data::of_size(m, g.size)
                && m.variant.is_none()
                && m.label.is_none()
                && m.hints == Hints::default()
                && g.machine.contains(&m.device)
        })
        .collect();
    let row = rows
        .iter()
        .find(|m| data::gflops(m).is_some())
        .or(rows.first());
    if let Some(m) = row {
        return Some(Published {
            gflops: data::gflops(m),
            vs_vendor: data::vs_vendor(m),
            source: "compare",
            failed: (!m.status.is_ok()).then(|| m.status.label().to_string()),
        });
    }
    let spec = kernels::find(&g.kernel).ok()?;
    let defaults = spec.defaults();
    let point = g
        .searches
        .iter()
        .map(|&i| &searches[i])
        .filter(|x| x.toolchain() == t)
        .flat_map(|x| x.trace.search.tried.iter())
        .find(|tr| tr.candidate.config == defaults && tr.candidate.hints == Hints::default())?;
    let v = vendor.and_then(data::gflops).filter(|v| *v > 0.0);
    let gf = speed(point);
    Some(Published {
        gflops: gf,
        vs_vendor: gf.zip(v).map(|(a, b)| a / b),
        source: "search",
        failed: (!point.record.status.is_ok()).then(|| point.record.status.label().to_string()),
    })
}

/// "CUDA", or "CUDA anneal" and "CUDA anneal (run 2)" where one toolchain has several searches.
fn series_names(searches: &[Search], g: &Group) -> Vec<String> {
    g.searches
        .iter()
        .map(|&i| {
            let x = &searches[i];
            let t = data::toolchain_name(x.toolchain());
            let same_tc: Vec<&Search> = g
                .searches
                .iter()
                .map(|&j| &searches[j])
                .filter(|y| y.toolchain() == x.toolchain())
                .collect();
            if same_tc.len() == 1 {
                return t.to_string();
            }
            let same_strategy = same_tc
                .iter()
                .filter(|y| y.strategy() == x.strategy())
                .count();
            if same_strategy == 1 {
                format!("{t} {}", x.strategy())
            } else {
                format!("{t} {} (run {})", x.strategy(), x.run + 1)
            }
        })
        .collect()
}

/// The i-th series of a toolchain: its colour, then darker and lighter shades.
fn shade(c: RGBColor, i: usize) -> RGBColor {
    let f = |v: u8, k: f64, to: f64| (f64::from(v) + (to - f64::from(v)) * k).round() as u8;
    match i {
        0 => c,
        i if i % 2 == 1 => {
            let k = 0.45_f64.min(0.25 * i.div_ceil(2) as f64);
            RGBColor(f(c.0, k, 0.0), f(c.1, k, 0.0), f(c.2, k, 0.0))
        }
        i => {
            let k = 0.6_f64.min(0.3 * (i / 2) as f64);
            RGBColor(f(c.0, k, 255.0), f(c.1, k, 255.0), f(c.2, k, 255.0))
        }
    }
}

fn group_section(
    ctx: &mut Ctx,
    searches: &[Search],
    g: &Group,
    title: &str,
    stem: &str,
    s: &mut String,
    sec: &mut Section,
) -> Result<()> {
    let tcs = toolchains(searches, g);
    let vendor = vendor(ctx, searches, g);
    let vendor_g = vendor.and_then(data::gflops);
    let at = format!("{} at {}", g.kernel, size_label(g.size));

    // The searches.
    if !g.searches.is_empty() {
        let names = series_names(searches, g);
        let mut rows = Vec::new();
        for (&i, name) in g.searches.iter().zip(&names) {
            let x = &searches[i];
            let r = &x.trace.search;
            let failed = r.tried.iter().filter(|t| speed(t).is_none()).count();
            let pruned = r.tried.iter().filter(|t| t.record.pruned).count();
            let best = r.ranked().first().and_then(|t| speed(t));
            rows.push(vec![
                name.clone(),
                r.strategy.clone(),
                (x.run + 1).to_string(),
                format!("{} of {}", x.trace.space.after, x.trace.space.before),
                r.tried.len().to_string(),
                r.measured().to_string(),
                (r.tried.len() - r.measured()).to_string(),
                failed.to_string(),
                pruned.to_string(),
                fmt_s(r.wall_s),
                fmt_s(r.compile_s),
                fmt_s(r.device_s),
                r.options.workers.to_string(),
                r.rate().map_or("-".into(), |v| format!("{v:.2}")),
                best.map_or("-".into(), fmt_g),
                r.stopped.clone(),
            ]);
        }
        s.push_str(&md::table(
            &md::h(&[
                "search",
                "strategy",
                "run",
                "space (after filtering of before)",
                "tried",
                "measured",
                "from store",
                "failed",
                "pruned",
                "wall s",
                "compile CPU s",
                "device s",
                "compile workers",
                "measured / s",
                "best GFLOP/s (search)",
                "stopped",
            ]),
            &rows,
        ));
        s.push_str(
            "\n\"measured / s\" is the search rate: configurations measured in this run (not answered from the store) \
             per wall second, compiling included. \"run\" numbers the result directories as in Environment.\n\n",
        );
        let notes: Vec<String> = g
            .searches
            .iter()
            .map(|&i| &searches[i])
            .flat_map(|x| {
                x.trace
                    .space
                    .notes
                    .iter()
                    .map(move |n| format!("{}: {n}", data::toolchain_name(x.toolchain())))
            })
            .collect();
        if !notes.is_empty() {
            s.push_str("Space notes:\n\n");
            let mut seen: Vec<&String> = Vec::new();
            for n in &notes {
                if !seen.contains(&n) {
                    let _ = writeln!(s, "- {}", md::escape(n));
                    seen.push(n);
                }
            }
            s.push('\n');
        }
    }

    // The final round, per toolchain.
    let bests: Vec<(Toolchain, Option<Best>, Option<Published>)> = tcs
        .iter()
        .map(|&t| {
            (
                t,
                tuned_best(searches, g, t, vendor),
                published(ctx, searches, g, t, vendor),
            )
        })
        .collect();
    for (t, best, default) in &bests {
        let name = data::toolchain_name(*t);
        let mut rows: Vec<&Rec> = g.finals.iter().filter(|r| r.m.toolchain == *t).collect();
        let failed: Vec<&Rec> = rows
            .iter()
            .copied()
            .filter(|r| data::gflops(r.m).is_none())
            .collect();
        rows.retain(|r| data::gflops(r.m).is_some());
        rows.sort_by(|a, b| {
            data::gflops(b.m)
                .unwrap_or(0.0)
                .total_cmp(&data::gflops(a.m).unwrap_or(0.0))
        });
        let several_runs = {
            let mut runs: Vec<usize> = rows.iter().map(|r| r.run).collect();
            runs.sort_unstable();
            runs.dedup();
            runs.len() > 1
        };
        let _ = writeln!(s, "#### {name}: the fastest of the final round\n");
        if rows.is_empty() {
            let _ = writeln!(
                s,
                "No final-round configuration of {name} has a speed{}.\n",
                if failed.is_empty() {
                    " (the run wrote no final round)"
                } else {
                    ""
                }
            );
        } else {
            let mut header = md::h(&["rank", "GFLOP/s", "x cuBLAS", "registers", "configuration"]);
            if several_runs {
                header.push("run".into());
            }
            let table: Vec<Vec<String>> = rows
                .iter()
                .take(TOP)
                .enumerate()
                .map(|(i, r)| {
                    let m = r.m;
                    let spread = m
                        .time
                        .map_or(String::new(), |t| format!(" ±{:.1}%", t.spread_pct()));
                    let mut row = vec![
                        (i + 1).to_string(),
                        format!(
                            "{}{spread}{}",
                            data::gflops(m).map_or("-".into(), fmt_g),
                            md::throttle_mark(m)
                        ),
                        fmt_x(data::vs_vendor(m)),
                        md::registers(Some(m)),
                        m.label.clone().unwrap_or_else(|| m.config.describe()),
                    ];
                    if several_runs {
                        row.push(run_label(searches, g, r.run, *t));
                    }
                    row
                })
                .collect();
            s.push_str(&md::table(&header, &table));
            s.push('\n');
        }
        if !failed.is_empty() {
            let what: Vec<String> = failed
                .iter()
                .map(|r| {
                    format!(
                        "{} ({})",
                        r.m.label.clone().unwrap_or_else(|| r.m.config.describe()),
                        r.m.status.label()
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "Without a speed in the final round: {}.\n",
                md::escape(&what.join("; "))
            );
        }
        match (best, default) {
            (Some(b), Some(d)) => {
                let _ = writeln!(
                    s,
                    "Published default: {}.{}\n",
                    describe_default(d),
                    d.gflops
                        .filter(|x| *x > 0.0)
                        .map_or(String::new(), |x| format!(
                            " The tuned best is {:.2}x its speed.",
                            b.gflops / x
                        ))
                );
            }
            (None, Some(d)) => {
                let _ = writeln!(s, "Published default: {}.\n", describe_default(d));
            }
            _ => {}
        }
    }

    // Charts: best so far against configurations and seconds; the spread of each space.
    let progress = progress_chart(ctx, searches, g, title, stem, vendor_g)?;
    if let Some(c) = &progress {
        s.push_str(&c.markdown);
        s.push_str(
            "Best verified GFLOP/s so far (search timing) against the configurations tried, in the order the strategy was told \
             their outcomes (left), and against the seconds since the search started (right); configurations answered from \
             the store count at once.\n\n",
        );
    }
    let spread = spread_of(searches, g, &tcs);
    let spread_chart = spread_chart(ctx, &spread, (title, &at), stem)?;
    if let Some(c) = &spread_chart {
        s.push_str(&c.markdown);
        let _ = writeln!(
            s,
            "Every configuration each toolchain tried (all its searches here, each configuration once), fastest first, \
             as a fraction of that toolchain's best (search timing); x is the rank as a fraction of the configurations tried, \
             so the curve ends early by the share that failed. Where it crosses {:.0}% is the share of the space near the best. \
             Guided strategies try more good configurations than a uniform sample would; exhaustive searches show the whole space.\n",
            NEAR_BEST * 100.0
        );
    }
    let progress_svg = progress.map(|c| c.svg);
    let spread_svg = spread_chart.map(|c| c.svg);

    // Findings: tuned bests, the toolchain gap, search rates, how hard each space is.
    if let Some(f) = tuned_finding(g, &at, &bests, vendor_g.is_some()) {
        sec.findings.push(f.chart(progress_svg.clone()));
    }
    if let Some(f) = gap_finding(&at, &bests) {
        sec.findings.push(f.chart(progress_svg.clone()));
    }
    if let Some(f) = spread_finding(&at, &spread) {
        sec.findings.push(f.chart(spread_svg));
    }

    // Strategies replayed over complete exhaustive searches.
    let complete: Vec<usize> = g
        .searches
        .iter()
        .copied()
        .filter(|&i| searches[i].complete())
        .collect();
    if !complete.is_empty() {
        let _ = writeln!(s, "#### Strategies replayed over the measured space\n");
        let _ = writeln!(
            s,
            "An exhaustive search that tried every point of its space holds every configuration's outcome, so each strategy's \
             search can be replayed against that table without a device: {REPLAY_RUNS} seeded runs per strategy, each trying at most \
             {REPLAY_BUDGET} configurations (or the whole space if smaller), with as many configurations in flight as the tuner keeps \
             (twice the compile workers). This is a replay over measured outcomes, not new measurements: a configuration scores its \
             search-timing GFLOP/s (a pruned one its single checked launch, a failed one nothing), and costs the device seconds it \
             took plus its compile time divided by the compile workers (a compile failure, whose time is not recorded, costs the \
             median compile time). Those seconds are summed one configuration after another, so they approximate, not reproduce, \
             the tuner's overlapped wall time. Curves: median over the runs of the best found so far as a fraction of the space's \
             true best, the band from the lower to the upper quartile.\n"
        );
        for &i in &complete {
            let x = &searches[i];
            let name = data::toolchain_name(x.toolchain());
            let label = if complete
                .iter()
                .filter(|&&j| searches[j].toolchain() == x.toolchain())
                .count()
                > 1
            {
                format!("{name} (run {})", x.run + 1)
            } else {
                name.to_string()
            };
            match replay_space(&x.trace) {
                Err(why) => {
                    let _ = writeln!(s, "{label}: no replay: {}.\n", md::escape(&why));
                }
                Ok((len, needs)) => {
                    let chart = replay_chart(ctx, &needs, len, (title, &at), &label, stem, x.run)?;
                    s.push_str(&chart.markdown);
                    let rows: Vec<Vec<String>> = needs
                        .iter()
                        .map(|n| {
                            vec![
                                n.strategy.clone(),
                                n.configs
                                    .map_or("not reached".into(), |c| format!("{c:.0}")),
                                n.seconds.map_or("-".into(), fmt_s),
                                format!("{} of {}", n.reached, n.summary.runs),
                                format!("{:.0}%", n.summary.found * 100.0),
                                n.summary
                                    .median
                                    .last()
                                    .map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
                            ]
                        })
                        .collect();
                    s.push_str(&md::table(
                        &[
                            "strategy".to_string(),
                            format!("configurations to {:.0}% (median)", REACH * 100.0),
                            format!("seconds to {:.0}% (median)", REACH * 100.0),
                            format!("runs reaching {:.0}%", REACH * 100.0),
                            "runs finding the best".to_string(),
                            format!("median at {len} configurations"),
                        ],
                        &rows,
                    ));
                    s.push('\n');
                    sec.findings
                        .push(replay_finding(&at, &label, x, len, &needs).chart(Some(chart.svg)));
                }
            }
        }
    }
    if let Some(f) = rate_finding(searches, g, &at) {
        sec.findings.push(f.chart(progress_svg));
    }
    Ok(())
}

/// "2 (anneal)": the run and the strategies that searched this toolchain in it.
fn run_label(searches: &[Search], g: &Group, run: usize, t: Toolchain) -> String {
    let strategies: Vec<&str> = g
        .searches
        .iter()
        .map(|&i| &searches[i])
        .filter(|x| x.run == run && x.toolchain() == t)
        .map(Search::strategy)
        .collect();
    if strategies.is_empty() {
        (run + 1).to_string()
    } else {
        format!("{} ({})", run + 1, strategies.join(", "))
    }
}

fn describe_default(d: &Published) -> String {
    let from = match d.source {
        "compare" => "from a compare row",
        _ => "measured while searching",
    };
    match (&d.failed, d.gflops) {
        (Some(status), _) => format!("{status} {from}"),
        (None, Some(g)) => match d.vs_vendor {
            Some(v) => format!("{} GFLOP/s = {v:.2}x cuBLAS {from}", fmt_g(g)),
            None => format!("{} GFLOP/s {from}", fmt_g(g)),
        },
        (None, None) => format!("no speed {from}"),
    }
}

fn progress_chart(
    ctx: &mut Ctx,
    searches: &[Search],
    g: &Group,
    title: &str,
    stem: &str,
    vendor: Option<f64>,
) -> Result<Option<super::Chart>> {
    let short = format!("{} at {}", g.kernel, size_label(g.size));
    let with_points: Vec<(usize, String)> = g
        .searches
        .iter()
        .copied()
        .zip(series_names(searches, g))
        .filter(|(i, _)| {
            searches[*i]
                .trace
                .search
                .tried
                .iter()
                .any(|t| speed(t).is_some())
        })
        .collect();
    if with_points.is_empty() {
        return Ok(None);
    }
    let most = with_points
        .iter()
        .map(|(i, _)| searches[*i].trace.search.tried.len())
        .max()
        .unwrap_or(1);
    let longest = with_points
        .iter()
        .filter_map(|(i, _)| searches[*i].trace.search.tried.last().map(|t| t.elapsed_s))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut by_count = Panel::new(
        "against configurations tried",
        XAxis::Linear {
            lo: 0.0,
            hi: most as f64,
        },
        "configurations tried",
        "best GFLOP/s so far",
    );
    let mut by_time = Panel::new(
        "against seconds",
        XAxis::Linear {
            lo: 0.0,
            hi: if longest > 0.0 { longest } else { 1.0 },
        },
        "seconds since the search started",
        "best GFLOP/s so far",
    );
    let mut legend = Vec::new();
    let mut per_tc: Vec<(Toolchain, usize)> = Vec::new();
    for (i, name) in &with_points {
        let x = &searches[*i];
        let n = match per_tc.iter_mut().find(|(t, _)| *t == x.toolchain()) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                per_tc.push((x.toolchain(), 1));
                0
            }
        };
        let mut style = Style::new(name.clone(), shade(color(x.toolchain()), n));
        style = if x.trace.search.tried.len() > 40 {
            style.plain()
        } else {
            style.line()
        };
        if n > 0 {
            style = style.dashed();
        }
        let mut best: Option<f64> = None;
        let mut counts = Vec::new();
        let mut times = Vec::new();
        for (k, t) in x.trace.search.tried.iter().enumerate() {
            if let Some(v) = speed(t) {
                best = Some(best.map_or(v, |b| b.max(v)));
            }
            counts.push(((k + 1) as f64, best));
            times.push((t.elapsed_s, best));
        }
        by_count.lines.push(Line {
            style: style.clone(),
            points: counts,
        });
        by_time.lines.push(Line {
            style: style.clone(),
            points: times,
        });
        legend.push(style);
    }
    let top = by_count.data_max().max(by_time.data_max());
    if let Some(v) = vendor {
        let r = RefLine {
            label: format!("cuBLAS {}", fmt_g(v)),
            y: v,
            color: VENDOR_COLOR,
        };
        by_count.refs.push(r.clone());
        by_time.refs.push(r);
        legend.push(Style::new("cuBLAS (final round)", VENDOR_COLOR).dashed());
    }
    let y_max = top.max(vendor.unwrap_or(0.0)) * 1.08;
    by_count.y_max = Some(if y_max > 0.0 { y_max } else { 1.0 });
    by_time.y_max = by_count.y_max;
    let fig = Figure {
        title: format!("{short}: best GFLOP/s so far{}", ctx.title_suffix()),
        legend,
        panels: vec![by_count, by_time],
        cols: 2,
        panel_w: 560,
        panel_h: 380,
    };
    ctx.chart(
        &fig,
        &format!("tune-progress-{stem}"),
        &format!("{title}: best GFLOP/s so far against configurations tried and seconds"),
    )
    .map(Some)
}

/// Per toolchain: every configuration its searches tried (each once), the
/// verified speeds fastest first, and how many failed.
struct Spread {
    toolchain: Toolchain,
    tried: usize,
    speeds: Vec<f64>,
    strategies: Vec<String>,
    /// An exhaustive search covered its whole space.
    whole_space: bool,
}

impl Spread {
    fn best(&self) -> Option<f64> {
        self.speeds.first().copied()
    }

    fn near(&self) -> usize {
        match self.best() {
            Some(b) => self.speeds.iter().filter(|v| **v >= NEAR_BEST * b).count(),
            None => 0,
        }
    }
}

fn spread_of(searches: &[Search], g: &Group, tcs: &[Toolchain]) -> Vec<Spread> {
    let mut out = Vec::new();
    for &t in tcs {
        let mine: Vec<&Search> = g
            .searches
            .iter()
            .map(|&i| &searches[i])
            .filter(|x| x.toolchain() == t)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut seen: HashSet<String> = HashSet::new();
        let mut speeds = Vec::new();
        for tr in mine.iter().flat_map(|x| x.trace.search.tried.iter()) {
            if !seen.insert(tr.candidate.describe()) {
                continue;
            }
            if let Some(v) = speed(tr) {
                speeds.push(v);
            }
        }
        speeds.sort_by(|a, b| b.total_cmp(a));
        let mut strategies: Vec<String> = Vec::new();
        for x in &mine {
            if !strategies.iter().any(|s| s == x.strategy()) {
                strategies.push(x.strategy().to_string());
            }
        }
        out.push(Spread {
            toolchain: t,
            tried: seen.len(),
            speeds,
            strategies,
            whole_space: mine.iter().any(|x| x.complete()),
        });
    }
    out
}

fn spread_chart(
    ctx: &mut Ctx,
    spread: &[Spread],
    (title, short): (&str, &str),
    stem: &str,
) -> Result<Option<super::Chart>> {
    let drawn: Vec<&Spread> = spread.iter().filter(|x| x.best().is_some()).collect();
    if drawn.is_empty() {
        return Ok(None);
    }
    let mut panel = Panel::new(
        "",
        XAxis::Linear { lo: 0.0, hi: 1.0 },
        "rank / configurations tried",
        "GFLOP/s / the toolchain's best",
    );
    panel.y_max = Some(1.08);
    let mut legend = Vec::new();
    for x in &drawn {
        let best = x.best().unwrap_or(1.0);
        let n = x.tried.max(1) as f64;
        let style = Style::new(
            format!("{} ({} tried)", data::toolchain_name(x.toolchain), x.tried),
            color(x.toolchain),
        );
        let style = if x.speeds.len() > 40 {
            style.plain()
        } else {
            style.line()
        };
        panel.lines.push(Line {
            style: style.clone(),
            points: x
                .speeds
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64 / n, Some(v / best)))
                .collect(),
        });
        legend.push(style);
    }
    panel.refs.push(RefLine {
        label: format!("{:.0}% of the best", NEAR_BEST * 100.0),
        y: NEAR_BEST,
        color: VENDOR_COLOR,
    });
    let fig = Figure {
        title: format!("{short}: the tried space by rank{}", ctx.title_suffix()),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: 860,
        panel_h: 400,
    };
    ctx.chart(
        &fig,
        &format!("tune-spread-{stem}"),
        &format!("{title}: tried configurations' GFLOP/s as a fraction of the best, by rank"),
    )
    .map(Some)
}

fn tuned_finding(
    g: &Group,
    at: &str,
    bests: &[(Toolchain, Option<Best>, Option<Published>)],
    has_vendor: bool,
) -> Option<Shown> {
    let mut long = Vec::new();
    let mut short = Vec::new();
    let mut gain: f64 = 0.0;
    let mut search_only = false;
    for (t, best, default) in bests {
        let name = data::toolchain_name(*t);
        let Some(b) = best else {
            long.push(format!("{name}: no configuration with a speed"));
            continue;
        };
        search_only |= !b.final_round;
        let vs = b.vs_vendor.map(|v| format!(" = {v:.2}x cuBLAS"));
        let mut l = format!(
            "{name} {} GFLOP/s{} with `{}`{}",
            fmt_g(b.gflops),
            vs.clone().unwrap_or_default(),
            b.config,
            if b.final_round {
                String::new()
            } else {
                " (search timing: no final round)".to_string()
            }
        );
        let mut sh = format!("{name} {} GFLOP/s", fmt_g(b.gflops));
        let mut inner = Vec::new();
        if let Some(v) = b.vs_vendor {
            inner.push(format!("{v:.2}x cuBLAS"));
        }
        if let Some(d) = default {
            let up = d.gflops.filter(|x| *x > 0.0).map(|x| b.gflops / x - 1.0);
            if let Some(u) = up {
                gain = gain.max(u);
            }
            let _ = write!(
                l,
                " (published default {}{})",
                describe_default(d),
                up.map_or(String::new(), |u| format!(
                    "; tuning gains {:+.0}%",
                    u * 100.0
                ))
            );
            match (has_vendor, d.vs_vendor, up) {
                (true, Some(v), _) => inner.push(format!("default {v:.2}x")),
                (_, _, Some(u)) => inner.push(format!("{:+.0}% over the default", u * 100.0)),
                _ => {}
            }
        }
        if !inner.is_empty() {
            let _ = write!(sh, " ({})", inner.join(", "));
        }
        long.push(l);
        short.push(sh);
    }
    if short.is_empty() {
        return None;
    }
    let text = format!(
        "**Tuned {}, {}** ({}, median GFLOP/s): {}.",
        g.kernel,
        size_label_long(g.size),
        if search_only {
            "final round where there is one, else search timing"
        } else {
            "final round"
        },
        long.join("; ")
    );
    let short = format!("Tuned {at} reaches {}.", md::join_and(&short));
    Some(
        Shown::legacy(Topic::Tuning, text, TUNING)
            .short(short)
            .weight(gain),
    )
}

/// Whether the gap between the two toolchains survives tuning.
fn gap_finding(at: &str, bests: &[(Toolchain, Option<Best>, Option<Published>)]) -> Option<Shown> {
    let [(ta, Some(a), da), (tb, Some(b), db)] = bests else {
        return None;
    };
    if a.gflops <= 0.0 || b.gflops <= 0.0 {
        return None;
    }
    let (na, nb) = (data::toolchain_name(*ta), data::toolchain_name(*tb));
    let pair = format!("{na}/{nb}");
    let tuned = a.gflops / b.gflops;
    let default = match (da, db) {
        (Some(pa), Some(pb)) => match (pa.gflops, pb.gflops) {
            (Some(ga), Some(gb)) if gb > 0.0 => Some((ga / gb, sources(pa.source, pb.source))),
            _ => None,
        },
        _ => None,
    };
    let size = |r: f64| r.max(1.0 / r) - 1.0;
    let ahead = |r: f64| {
        if r >= 1.0 {
            format!("{na} ahead by {:.0}%", (r - 1.0) * 100.0)
        } else {
            format!("{nb} ahead by {:.0}%", (1.0 / r - 1.0) * 100.0)
        }
    };
    let even = |r: f64| size(r) <= SAME_SPEED;
    let (text, short) = match default {
        None => (
            format!(
                "**Toolchain gap at each toolchain's best, {at}**: {pair} = {tuned:.2} tuned ({}); \
                 no published default of both toolchains to compare with.",
                if even(tuned) {
                    format!("within {:.0}%", SAME_SPEED * 100.0)
                } else {
                    ahead(tuned)
                }
            ),
            if even(tuned) {
                format!("Tuned {at} runs alike on {na} and {nb} ({pair} {tuned:.2}).")
            } else {
                format!("Tuned {at} leaves a {pair} ratio of {tuned:.2}.")
            },
        ),
        Some((dr, src)) => {
            let verdict = if even(dr) && even(tuned) {
                "no gap at the defaults and none tuned".to_string()
            } else if even(tuned) {
                "tuning closes the gap".to_string()
            } else if even(dr) {
                "tuning opens a gap".to_string()
            } else if (dr > 1.0) != (tuned > 1.0) {
                "tuning reverses the gap".to_string()
            } else if size(tuned) < size(dr) - SAME_SPEED {
                "the gap shrinks but survives tuning".to_string()
            } else if size(tuned) > size(dr) + SAME_SPEED {
                "the gap grows with tuning".to_string()
            } else {
                "the gap survives tuning unchanged".to_string()
            };
            (
                format!(
                    "**Toolchain gap before and after tuning, {at}**: {pair} = {dr:.2} at the published defaults ({src}), \
                     {tuned:.2} at each toolchain's tuned best ({}): {verdict}.",
                    if a.final_round && b.final_round {
                        "final round"
                    } else {
                        "search timing where no final round"
                    },
                ),
                format!("For {at} {verdict} ({pair} {dr:.2} at the defaults, {tuned:.2} tuned)."),
            )
        }
    };
    Some(
        Shown::legacy(Topic::Toolchains, text, TUNING)
            .short(short)
            .weight(size(tuned)),
    )
}

fn sources(a: &str, b: &str) -> String {
    match (a, b) {
        ("compare", "compare") => "compare rows".into(),
        ("search", "search") => "measured while searching".into(),
        _ => "one from a compare row, one measured while searching".into(),
    }
}

fn rate_finding(searches: &[Search], g: &Group, at: &str) -> Option<Shown> {
    let names = series_names(searches, g);
    let mut long = Vec::new();
    let mut short = Vec::new();
    for (&i, name) in g.searches.iter().zip(&names) {
        let x = &searches[i];
        let r = &x.trace.search;
        let label = if name.contains(x.strategy()) {
            name.clone()
        } else {
            format!("{name} {}", x.strategy())
        };
        match r.rate() {
            Some(rate) => {
                long.push(format!(
                    "{label}: {rate:.2} configurations/s ({} measured in {} s wall; {} CPU s compiling on {}, {} s on the device, {} s waiting for the compiler{})",
                    r.measured(),
                    fmt_s(r.wall_s),
                    fmt_s(r.compile_s),
                    plural(r.options.workers, "worker", "workers"),
                    fmt_s(r.device_s),
                    fmt_s(r.wait_s),
                    if r.measured() < r.tried.len() {
                        format!(", {} more answered from the store", r.tried.len() - r.measured())
                    } else {
                        String::new()
                    }
                ));
                short.push(format!("{label} {rate:.2}"));
            }
            None if r.tried.is_empty() => {
                long.push(format!("{label}: nothing tried ({})", r.stopped))
            }
            None => long.push(format!(
                "{label}: all {} configurations answered from the store, none measured",
                r.tried.len()
            )),
        }
    }
    if long.is_empty() {
        return None;
    }
    let text = format!(
        "**Search rate, {at}** (configurations measured per wall second, compiling included): {}.",
        long.join("; ")
    );
    let f = Shown::legacy(Topic::Tuning, text, TUNING);
    Some(if short.is_empty() {
        f
    } else {
        f.short(format!(
            "Searching {at} measured {} configurations per second, compiling included.",
            md::join_and(&short)
        ))
    })
}

fn spread_finding(at: &str, spread: &[Spread]) -> Option<Shown> {
    let with: Vec<&Spread> = spread.iter().filter(|x| x.best().is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let frac = |x: &Spread| x.near() as f64 / x.tried.max(1) as f64;
    let pct = NEAR_BEST * 100.0;
    let long: Vec<String> = with
        .iter()
        .map(|x| {
            format!(
                "{}: {} of {} configurations tried ({:.0}%) within {pct:.0}% of its best {} GFLOP/s, {} failed (searched by {}{})",
                data::toolchain_name(x.toolchain),
                x.near(),
                x.tried,
                frac(x) * 100.0,
                x.best().map_or("-".into(), fmt_g),
                x.tried - x.speeds.len(),
                x.strategies.join(" and "),
                if x.whole_space { "; the whole space" } else { "; a sample of the space" }
            )
        })
        .collect();
    let short: Vec<String> = with
        .iter()
        .map(|x| {
            format!(
                "{:.0}% of {}'s {}",
                frac(x) * 100.0,
                data::toolchain_name(x.toolchain),
                x.tried
            )
        })
        .collect();
    let mut text = format!("**How hard to tune, {at}**: {}.", long.join("; "));
    let mut weight = 0.0;
    if let [a, b] = with.as_slice() {
        let (fa, fb) = (frac(a), frac(b));
        if (fa - fb).abs() > 0.0 && a.whole_space == b.whole_space {
            let (hard, easy) = if fa < fb { (a, b) } else { (b, a) };
            let _ = write!(
                text,
                " Fewer of {}'s configurations are near its best than {}'s: {} is the harder to tune.",
                data::toolchain_name(hard.toolchain),
                data::toolchain_name(easy.toolchain),
                data::toolchain_name(hard.toolchain)
            );
            weight = (fa - fb).abs();
        }
    }
    Some(
        Shown::legacy(Topic::Tuning, text, TUNING)
            .short(format!(
                "For {at}, {} tried configurations are within {pct:.0}% of the toolchain's best.",
                md::join_and(&short)
            ))
            .weight(weight),
    )
}

/// The coordinates of a tried configuration on the space's axes: parameters by
/// value, a switch absent from the hints at its published state (the axis's
/// first value), the register cap from the hints.
fn coords_of(axes: &[Axis], c: &Candidate) -> std::result::Result<Vec<u8>, String> {
    axes.iter()
        .map(|a| {
            let i = match a {
                Axis::Param { name, values } => c
                    .config
                    .0
                    .get(name)
                    .and_then(|v| values.iter().position(|x| x == v)),
                Axis::Switch { name, values } => c
                    .hints
                    .switch(name)
                    .or_else(|| values.first().copied())
                    .and_then(|on| values.iter().position(|x| *x == on)),
                Axis::Cap { values } => values.iter().position(|x| *x == c.hints.max_registers),
            };
            i.and_then(|i| u8::try_from(i).ok()).ok_or_else(|| {
                format!(
                    "configuration {} has no value on the space's axis {}",
                    c.describe(),
                    a.name()
                )
            })
        })
        .collect()
}

/// The grid and the outcome table of a complete search, in point order.
fn outcome_table(trace: &Trace) -> std::result::Result<(Grid, Outcomes), String> {
    let r = &trace.search;
    if r.tried.is_empty() {
        return Err("the search tried nothing".into());
    }
    if trace.space.axes.iter().any(|a| a.len() > 256) {
        return Err("an axis has more values than a grid holds".into());
    }
    let mut tried: Vec<&Tried> = r.tried.iter().collect();
    tried.sort_by_key(|t| t.point);
    let coords = tried
        .iter()
        .map(|t| coords_of(&trace.space.axes, &t.candidate))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let sizes: Vec<usize> = trace.space.axes.iter().map(Axis::len).collect();
    let grid = Grid::new(sizes, coords);
    if grid.len() != tried.len() {
        return Err(format!(
            "{} configurations tried but only {} distinct points of the space",
            tried.len(),
            grid.len()
        ));
    }
    let workers = r.options.workers.max(1) as f64;
    let mut compiles: Vec<f64> = tried
        .iter()
        .filter_map(|t| t.record.compile_ms)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    compiles.sort_by(f64::total_cmp);
    let median_compile = compiles.get(compiles.len() / 2).copied().unwrap_or(0.0);
    let scores = tried.iter().map(|t| speed(t)).collect();
    let costs = tried
        .iter()
        .map(|t| {
            let device = Some(t.record.device_s)
                .filter(|v| v.is_finite() && *v >= 0.0)
                .unwrap_or(0.0);
            let compile = t
                .record
                .compile_ms
                .filter(|v| v.is_finite() && *v >= 0.0)
                .unwrap_or(median_compile);
            device + compile / 1000.0 / workers
        })
        .collect();
    Ok((grid, Outcomes { scores, costs }))
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2]).filter(|m| m.is_finite())
}

/// Replays every strategy over a complete search: the budget used and what each needed.
fn replay_space(trace: &Trace) -> std::result::Result<(usize, Vec<Needs>), String> {
    let (grid, outcomes) = outcome_table(trace)?;
    let budget = grid.len().min(REPLAY_BUDGET);
    let in_flight = 2 * trace.search.options.workers.max(1);
    let summaries = replay::compare(
        &grid,
        &outcomes,
        NAMES,
        budget,
        in_flight,
        REPLAY_RUNS,
        REPLAY_SEED,
    )?;
    let top = outcomes
        .best()
        .filter(|b| *b > 0.0)
        .ok_or("no configuration of the space has a speed")?;
    let mut out = Vec::new();
    for summary in summaries {
        let mut configs = Vec::new();
        let mut seconds = Vec::new();
        for r in 0..REPLAY_RUNS {
            let trace = replay::replay(
                &grid,
                &outcomes,
                &summary.strategy,
                budget,
                in_flight,
                REPLAY_SEED.wrapping_add(r as u64),
            )?;
            match trace
                .iter()
                .position(|s| s.best.is_some_and(|b| b >= REACH * top))
            {
                Some(k) => {
                    configs.push((k + 1) as f64);
                    seconds.push(trace[k].cost);
                }
                None => {
                    configs.push(f64::INFINITY);
                    seconds.push(f64::INFINITY);
                }
            }
        }
        let reached = configs.iter().filter(|c| c.is_finite()).count();
        out.push(Needs {
            strategy: summary.strategy.clone(),
            configs: median(configs),
            seconds: median(seconds),
            reached,
            summary,
        });
    }
    Ok((budget, out))
}

fn replay_chart(
    ctx: &mut Ctx,
    needs: &[Needs],
    len: usize,
    (title, short): (&str, &str),
    label: &str,
    stem: &str,
    run: usize,
) -> Result<super::Chart> {
    let mut panel = Panel::new(
        "",
        XAxis::Linear {
            lo: 0.0,
            hi: len as f64,
        },
        "configurations tried",
        "best so far / the space's best",
    );
    panel.y_max = Some(1.08);
    let mut legend = Vec::new();
    for (i, n) in needs.iter().enumerate() {
        let c = STRATEGY_COLORS[i % STRATEGY_COLORS.len()];
        let s = &n.summary;
        panel.bands.push(Band {
            color: c,
            points: (0..s.median.len())
                .map(|k| ((k + 1) as f64, s.q1[k], s.q3[k]))
                .collect(),
        });
        let style = Style::new(n.strategy.clone(), c);
        let style = if len > 40 {
            style.plain()
        } else {
            style.line()
        };
        panel.lines.push(Line {
            style: style.clone(),
            points: s
                .median
                .iter()
                .enumerate()
                .map(|(k, v)| ((k + 1) as f64, Some(*v)))
                .collect(),
        });
        legend.push(style);
    }
    panel.refs.push(RefLine {
        label: format!("{:.0}% of the best", REACH * 100.0),
        y: REACH,
        color: VENDOR_COLOR,
    });
    let tc = label
        .split(' ')
        .next()
        .unwrap_or(label)
        .to_ascii_lowercase();
    let fig = Figure {
        title: format!(
            "{short}, {label}: strategies replayed{}",
            ctx.title_suffix()
        ),
        legend,
        panels: vec![panel],
        cols: 1,
        panel_w: 900,
        panel_h: 420,
    };
    ctx.chart(
        &fig,
        &format!("tune-replay-{stem}-{tc}-run{}", run + 1),
        &format!(
            "{title}, {label}: strategies replayed, median best so far against configurations"
        ),
    )
}

fn replay_finding(at: &str, label: &str, x: &Search, len: usize, needs: &[Needs]) -> Shown {
    let configs: Vec<String> = needs
        .iter()
        .map(|n| match (n.configs, n.seconds) {
            (Some(c), Some(sec)) => format!("{} {c:.0} ({} s)", n.strategy, fmt_s(sec)),
            (Some(c), None) => format!("{} {c:.0}", n.strategy),
            _ => format!("{} not within {len}", n.strategy),
        })
        .collect();
    let found: Vec<String> = needs
        .iter()
        .map(|n| format!("{} {:.0}%", n.strategy, n.summary.found * 100.0))
        .collect();
    let space = x.trace.search.tried.len();
    let text = format!(
        "**Strategies replayed on {label}'s space, {at}** ({space} configurations measured exhaustively; {REPLAY_RUNS} replays per strategy, \
         budget {len}): median configurations to reach {:.0}% of the best: {}; runs finding the true best within the budget: {}.",
        REACH * 100.0,
        configs.join(", "),
        found.join(", ")
    );
    let short = format!(
        "Replayed on {label}'s {space}-configuration space of {at}, strategies need a median {} configurations to reach {:.0}% of the best.",
        md::join_and(
            &needs
                .iter()
                .map(|n| match n.configs {
                    Some(c) => format!("{c:.0} ({})", n.strategy),
                    None => format!("more than {len} ({})", n.strategy),
                })
                .collect::<Vec<_>>()
        ),
        REACH * 100.0
    );
    Shown::legacy(Topic::Tuning, text, TUNING).short(short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Config;

    fn cand(tsm: i64, unroll: Option<bool>, cap: Option<u32>) -> Candidate {
        let mut hints = Hints {
            max_registers: cap,
            ..Hints::default()
        };
        if let Some(on) = unroll {
            hints.switches.insert("UNROLL_K".into(), on);
        }
        Candidate {
            config: Config([("TSM".to_string(), tsm)].into_iter().collect()),
            hints,
        }
    }

    #[test]
    fn coordinates_come_back_from_candidates() {
        let axes = vec![
            Axis::Param {
                name: "TSM".into(),
                values: vec![16, 32, 64],
            },
            // Published on: absent from the hints means on.
            Axis::Switch {
                name: "UNROLL_K".into(),
                values: vec![true, false],
            },
            Axis::Cap {
                values: vec![None, Some(64)],
            },
        ];
        assert_eq!(coords_of(&axes, &cand(32, None, None)).unwrap(), [1, 0, 0]);
        assert_eq!(
            coords_of(&axes, &cand(64, Some(false), Some(64))).unwrap(),
            [2, 1, 1]
        );
        assert_eq!(
            coords_of(&axes, &cand(16, Some(true), None)).unwrap(),
            [0, 0, 0]
        );
        let e = coords_of(&axes, &cand(8, None, None)).unwrap_err();
        assert!(e.contains("TSM"), "{e}");
        assert!(coords_of(&axes, &cand(16, None, Some(96))).is_err());
    }

    #[test]
    fn shades_differ() {
        let c = RGBColor(100, 150, 200);
        assert_eq!(shade(c, 0), c);
        assert_ne!(shade(c, 1), c);
        assert_ne!(shade(c, 2), shade(c, 1));
    }

    #[test]
    fn medians_of_unreached_runs_are_none() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(
            median(vec![f64::INFINITY, f64::INFINITY, 1.0]),
            None,
            "most runs did not reach it"
        );
        assert_eq!(median(Vec::new()), None);
    }
}
