//! The "tune" results as data: each search's trace (`search-*.json`) and the
//! replay record written beside a complete one (`replay-*.json`), each
//! toolchain's final round and published default, how much of each space is near its best.
//! Users' kernels (spec files) are here too, by their dimensions and in their
//! unit; their tuned best and gap are the "Your kernels" section's findings.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use crate::backend::Toolchain;
use crate::kernel::builtin::{self as kernels, Hints};
use crate::results::{replay_file, Measurement, Replays};
use crate::tune::run::Trace;
use crate::tune::search::Tried;

use super::data::{self, Rec};
use super::stats::{self, distinct};
use super::{Data, Finding, Topic};

/// The experiment name of tune's rows (cuBLAS and the final round).
pub const EXPERIMENT: &str = "tune";
/// Rows of the top table per kernel, size and toolchain.
pub const TOP: usize = 10;
/// "Near the best": the share of a space within this fraction of its best.
pub const NEAR_BEST: f64 = 0.9;

pub type Size = (usize, usize, usize);

/// Where a kernel was tuned: a GEMM's M x N x K (`[m, n, k]` in JSON), or a
/// spec kernel's dimensions ("n=4096").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum At {
    Gemm(Size),
    Dims(String),
}

impl Default for At {
    fn default() -> At {
        At::Gemm((0, 0, 0))
    }
}

impl At {
    fn of(m: &Measurement) -> At {
        match m.dims {
            Some(_) => At::Dims(m.size_label()),
            None => At::Gemm((m.m, m.n, m.k)),
        }
    }

    fn of_search(s: &crate::tune::search::SearchResult) -> At {
        match &s.dims {
            Some(d) => At::Dims(crate::results::dims_label(d)),
            None => At::Gemm(s.size),
        }
    }

    /// "4096", "1000x999x1001", "n=4096".
    pub fn label(&self) -> String {
        match self {
            At::Gemm(s) => data::size_label(*s),
            At::Dims(d) => d.clone(),
        }
    }

    fn volume(&self) -> u128 {
        match *self {
            At::Gemm((m, n, k)) => m as u128 * n as u128 * k as u128,
            At::Dims(_) => 0,
        }
    }
}

/// A final-round row's speed in its group's unit: GFLOP/s, or a spec kernel's rate.
fn speed_of(m: &Measurement) -> Option<f64> {
    match m.dims {
        Some(_) => super::user::rate(m).map(|r| r.0),
        None => data::gflops(m),
    }
}

/// One search trace, its result directory (1-based, as Environment numbers
/// runs) and its replay record if one was written.
pub struct Search {
    pub run: usize,
    pub trace: Trace,
    pub replays: Option<Replays>,
}

/// "CUDA", or "CUDA anneal" and "CUDA anneal (run 2)" where a toolchain has several searches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchName {
    pub toolchain: Toolchain,
    pub strategy: Option<String>,
    pub run: Option<usize>,
}

/// The fastest configuration of a toolchain: from the final round, else the
/// search's own timing (no final round written).
#[derive(Debug, Clone, Serialize)]
pub struct Best {
    pub gflops: f64,
    pub vs_vendor: Option<f64>,
    pub config: String,
    pub final_round: bool,
}

/// Where a published default's speed comes from: a compare row of the same
/// device, or the default configuration's point in a search (search timing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Compare,
    Search,
}

/// The published default configuration of a kernel on a toolchain; `failed`
/// the status word of one without a speed.
#[derive(Debug, Clone, Serialize)]
pub struct Published {
    pub gflops: Option<f64>,
    pub vs_vendor: Option<f64>,
    pub source: Source,
    pub failed: Option<String>,
}

/// One final-round row, its speed in its group's unit, and the strategies of
/// the searches of its run on its toolchain.
pub struct FinalRow<'a> {
    pub m: &'a Measurement,
    pub speed: f64,
    pub run: usize,
    pub strategies: Vec<String>,
}

/// A toolchain's final round (with a speed, fastest first, at most `TOP`;
/// without one), tuned best and published default.
pub struct Round<'a> {
    pub tuned: Tuned,
    pub rows: Vec<FinalRow<'a>>,
    pub several_runs: bool,
    pub failed: Vec<&'a Measurement>,
}

/// How much of what a toolchain's searches tried (each configuration once) is
/// within `NEAR_BEST` of its best; `whole_space` when an exhaustive search covered it.
#[derive(Debug, Clone, Serialize)]
pub struct Hardness {
    pub toolchain: Toolchain,
    pub tried: usize,
    pub near: usize,
    pub share: f64,
    pub best: f64,
    pub failed: usize,
    pub strategies: Vec<String>,
    pub whole_space: bool,
    /// The verified speeds, fastest first, for the spread chart.
    #[serde(skip)]
    pub speeds: Vec<f64>,
}

/// A search's best so far after each configuration: (count, seconds, GFLOP/s);
/// `nth` its place among the drawn searches of its toolchain (the shade).
pub struct Curve {
    pub name: SearchName,
    pub nth: usize,
    pub points: Vec<(usize, f64, Option<f64>)>,
}

/// A complete search (its index into the searches) and its replay record, if written.
pub struct Replayed {
    pub name: SearchName,
    pub search: usize,
    pub stem: String,
    pub record: Option<Replays>,
}

/// A kernel at a size on one set of devices (`machine`): what the section
/// groups by; `stem` ends its charts' names.
#[derive(Default)]
pub struct Group<'a> {
    pub kernel: String,
    pub size: At,
    /// What its speeds measure: "GFLOP/s", or a spec kernel's "GB/s" or "runs/s".
    pub unit: String,
    pub machine: Vec<String>,
    pub stem: String,
    /// Indices into the searches, and their names.
    pub searches: Vec<usize>,
    pub names: Vec<SearchName>,
    /// Each distinct space note with its toolchain.
    pub notes: Vec<(Toolchain, String)>,
    pub rounds: Vec<Round<'a>>,
    /// cuBLAS in the final round.
    pub vendor: Option<f64>,
    pub curves: Vec<Curve>,
    pub spread: Vec<Hardness>,
    pub replays: Vec<Replayed>,
    finals: Vec<Rec<'a>>,
}

pub struct Tune<'a> {
    /// Nothing to show: no search, no final round, no unreadable trace.
    pub empty: bool,
    pub searches: Vec<Search>,
    /// Distinct result directories with searches.
    pub dirs: usize,
    pub unreadable: Vec<String>,
    /// How many sets of devices the groups come from.
    pub machines: usize,
    pub groups: Vec<Group<'a>>,
    pub findings: Vec<Finding>,
}

/// A toolchain's tuned best against its published default; `gain` the best
/// over the default's speed minus one.
#[derive(Debug, Clone, Serialize)]
pub struct Tuned {
    pub toolchain: Toolchain,
    pub best: Option<Best>,
    pub default: Option<Published>,
    pub gain: Option<f64>,
}

/// Whether the gap between two toolchains survives tuning.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    NoGap,
    Closes,
    Opens,
    Reverses,
    Shrinks,
    Grows,
    Unchanged,
}

/// A search's rate and where its time went.
#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    pub name: SearchName,
    pub rate: Option<f64>,
    pub measured: usize,
    pub tried: usize,
    pub wall_s: f64,
    pub compile_s: f64,
    pub workers: usize,
    pub device_s: f64,
    pub wait_s: f64,
    pub stopped: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// Each toolchain's tuned best, against cuBLAS and its published default;
    /// `search_only` when some best has search timing only.
    Tuned {
        kernel: String,
        size: At,
        toolchains: Vec<Tuned>,
        search_only: bool,
        has_vendor: bool,
    },
    /// The ratio of two toolchains' bests tuned, the faster (`lead`) and by
    /// how much, and the ratio at the defaults with their sources and the verdict.
    ToolchainGap {
        kernel: String,
        size: At,
        toolchains: [Toolchain; 2],
        tuned: f64,
        lead: Toolchain,
        gap: f64,
        same: bool,
        both_final: bool,
        default: Option<(f64, [Source; 2], Verdict)>,
    },
    /// How much of each toolchain's tried space is near its best; `harder`
    /// (harder, easier) when two comparable spaces differ.
    HowHard {
        kernel: String,
        size: At,
        /// What `toolchains`' best speeds measure.
        unit: String,
        near_best: f64,
        toolchains: Vec<Hardness>,
        harder: Option<[Toolchain; 2]>,
    },
    /// Strategies replayed over a space of `space` configurations measured exhaustively.
    Replayed {
        kernel: String,
        size: At,
        search: SearchName,
        space: usize,
        replays: Replays,
    },
    /// Configurations measured per wall second of each search.
    SearchRate {
        kernel: String,
        size: At,
        searches: Vec<Rate>,
    },
}

fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(p).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// The speed a tried configuration gave: verified GFLOP/s (a pruned one at its
/// single checked launch); `None` when it failed.
fn speed(t: &Tried) -> Option<f64> {
    let ok = t.record.status.is_ok();
    t.record.gflops.filter(|g| ok && g.is_finite() && *g > 0.0)
}

/// A final-round row's configuration: its label, else its parameters.
pub fn config_of(m: &Measurement) -> String {
    m.label.clone().unwrap_or_else(|| m.config.describe())
}

impl Search {
    /// Configurations tried without a verified speed.
    pub fn failed(&self) -> usize {
        self.trace
            .search
            .tried
            .iter()
            .filter(|t| speed(t).is_none())
            .count()
    }

    /// The fastest verified, unpruned configuration (search timing).
    pub fn best(&self) -> Option<(f64, String)> {
        let t = *self.trace.search.ranked().first()?;
        let search = &self.trace.search;
        Some((speed(t)?, t.candidate.describe_from(search.unchanged())))
    }

    pub fn toolchain(&self) -> Toolchain {
        self.trace.search.toolchain
    }

    pub fn strategy(&self) -> &str {
        &self.trace.search.strategy
    }

    /// Its name among `others`: with its strategy where its toolchain has
    /// several searches, and its run where those share a strategy too.
    fn name(&self, others: &[&Search]) -> SearchName {
        let same_tc = others.iter().filter(|y| y.toolchain() == self.toolchain());
        let same_strategy = same_tc.clone().filter(|y| y.strategy() == self.strategy());
        let several = same_tc.count() > 1;
        SearchName {
            toolchain: self.toolchain(),
            strategy: several.then(|| self.strategy().to_string()),
            run: (several && same_strategy.count() > 1).then_some(self.run),
        }
    }
}

pub fn analyse(data: &Data) -> Tune<'_> {
    let (mut searches, mut unreadable) = (Vec::new(), Vec::new());
    for (ri, run) in data.runs.iter().enumerate() {
        let (traces, bad) = crate::tune::run::load_traces(&run.dir);
        unreadable.extend(bad);
        for (file, trace) in traces {
            let p = run.dir.join(replay_file(&file));
            let replays = p.is_file().then(|| read_json(&p));
            let replays = replays.and_then(|r| r.map_err(|e| unreadable.push(e)).ok());
            searches.push(Search {
                run: ri + 1,
                trace,
                replays,
            });
        }
    }
    let has_finals = (data.all()).any(|r| r.m.experiment == EXPERIMENT && !data::is_offline(r.m));
    let mut groups = groups(data, &searches);
    let machines = distinct(groups.iter().map(|g| g.machine.clone())).len();
    let mut findings = Vec::new();
    for g in &mut groups {
        if machines > 1 {
            g.stem = format!("{}-{}", g.stem, g.machine.join("-"));
        }
        fill(data, &searches, g);
        findings.extend(group_findings(&searches, g));
    }
    Tune {
        empty: searches.is_empty() && !has_finals && unreadable.is_empty(),
        dirs: distinct(searches.iter().map(|x| x.run)).len(),
        searches,
        unreadable,
        machines,
        groups,
        findings,
    }
}

/// Device names of a result directory: its environment's, else its rows' and traces'.
fn machine_of(data: &Data, run: usize, searches: &[Search]) -> Vec<String> {
    let r = &data.runs[run - 1];
    let mut names: Vec<String> = r.env.devices.iter().map(|d| d.name.clone()).collect();
    if names.is_empty() {
        names.extend(r.measurements.iter().map(|m| m.device.clone()));
        let traces = searches.iter().filter(|x| x.run == run);
        names.extend(traces.map(|x| x.trace.search.device.clone()));
    }
    names.sort();
    names.dedup();
    names
}

/// The kernels and sizes tuned, largest size first within each kernel, with
/// each search (`Ok`, its index) and final-round row (`Err`) in its group.
fn groups<'a>(data: &'a Data, searches: &[Search]) -> Vec<Group<'a>> {
    let finals = data.all().filter(|r| {
        let m = r.m;
        m.experiment == EXPERIMENT
            && !data::is_vendor(m)
            && m.variant.is_none()
            && !data::is_offline(m)
    });
    let items = (searches.iter().enumerate())
        .map(|(i, x)| {
            let s = &x.trace.search;
            (&s.kernel, At::of_search(s), s.unit.clone(), x.run, Ok(i))
        })
        .chain(finals.map(|r| {
            let unit = super::user::rate(r.m).filter(|_| r.m.dims.is_some());
            let unit = unit.map_or("GFLOP/s", |u| u.1).to_string();
            (&r.m.kernel, At::of(r.m), unit, r.run + 1, Err(r))
        }));
    let mut out: Vec<Group<'a>> = Vec::new();
    for (kernel, size, unit, run, item) in items {
        let machine = machine_of(data, run, searches);
        let same = |g: &Group| &g.kernel == kernel && g.size == size && g.machine == machine;
        let i = out.iter().position(same).unwrap_or_else(|| {
            out.push(Group {
                kernel: kernel.clone(),
                stem: format!("{kernel}-{}", size.label()),
                size,
                unit,
                machine: machine.clone(),
                ..Group::default()
            });
            out.len() - 1
        });
        match item {
            Ok(s) => out[i].searches.push(s),
            Err(r) => out[i].finals.push(r),
        }
    }
    out.sort_by(|a, b| {
        data::kernel_order(&a.kernel, &b.kernel)
            .then_with(|| b.size.volume().cmp(&a.size.volume()))
            .then_with(|| a.machine.cmp(&b.machine))
    });
    out
}

/// Everything of a group but its findings.
fn fill<'a>(data: &'a Data, searches: &[Search], g: &mut Group<'a>) {
    let mine: Vec<&Search> = g.searches.iter().map(|&i| &searches[i]).collect();
    g.names = mine.iter().map(|x| x.name(&mine)).collect();
    let notes = mine.iter().map(|x| (x.toolchain(), &x.trace.space.notes));
    g.notes = distinct(notes.flat_map(|(t, ns)| ns.iter().map(move |n| (t, n.clone()))));
    let runs = g.finals.iter().map(|r| r.run + 1);
    let runs = runs.chain(mine.iter().map(|x| x.run));
    let at = |m: &Measurement| matches!(g.size, At::Gemm(s) if data::of_size(m, s));
    g.vendor = (runs.flat_map(|r| &data.runs[r - 1].measurements))
        .filter(|m| m.experiment == EXPERIMENT && data::is_vendor(m) && at(m))
        .find_map(data::gflops);
    let tcs: Vec<Toolchain> = (Toolchain::ALL.into_iter())
        .filter(|t| {
            mine.iter().any(|x| x.toolchain() == *t) || g.finals.iter().any(|r| r.m.toolchain == *t)
        })
        .collect();
    g.rounds = tcs.iter().map(|&t| round(data, &mine, g, t)).collect();
    g.spread = tcs.iter().filter_map(|&t| spread(&mine, t)).collect();
    let drawn = (mine.iter().zip(&g.names))
        .filter(|(x, _)| x.trace.search.tried.iter().any(|t| speed(t).is_some()));
    for (x, name) in drawn {
        let tc = x.toolchain();
        let nth = g.curves.iter().filter(|c| c.name.toolchain == tc).count();
        let tried = x.trace.search.tried.iter().zip(1..);
        let points = tried.scan(None, |best: &mut Option<f64>, (t, k)| {
            *best = speed(t).map(|v| best.map_or(v, |b| b.max(v))).or(*best);
            Some((k, t.elapsed_s, *best))
        });
        let (name, points) = (name.clone(), points.collect());
        g.curves.push(Curve { name, nth, points });
    }
    let complete: Vec<&Search> = (mine.iter().copied())
        .filter(|x| x.trace.search.covers_space())
        .collect();
    g.replays = (g.searches.iter().zip(&mine))
        .filter(|(_, x)| x.trace.search.covers_space())
        .map(|(&search, x)| {
            let tc = data::toolchain_name(x.toolchain()).to_ascii_lowercase();
            Replayed {
                // All exhaustive: the run tells a toolchain's apart.
                name: SearchName {
                    strategy: None,
                    ..x.name(&complete)
                },
                search,
                stem: format!("tune-replay-{}-{tc}-run{}", g.stem, x.run),
                record: x.replays.clone(),
            }
        })
        .collect();
}

/// A toolchain's final round, best and published default in a group.
fn round<'a>(data: &'a Data, mine: &[&Search], g: &Group<'a>, t: Toolchain) -> Round<'a> {
    let of_tc = g.finals.iter().filter(|r| r.m.toolchain == t);
    let mut rows: Vec<(f64, &Rec<'a>)> = (of_tc.clone())
        .filter_map(|r| Some((speed_of(r.m)?, r)))
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let searched = mine.iter().filter(|x| x.toolchain() == t);
    let search_best = || {
        (searched.clone().filter_map(|x| x.best()))
            .map(|(gflops, config)| Best {
                gflops,
                vs_vendor: stats::ratio(Some(gflops), g.vendor),
                config,
                final_round: false,
            })
            .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
    };
    let final_best = rows.first().map(|&(gflops, r)| Best {
        gflops,
        vs_vendor: data::vs_vendor(r.m),
        config: config_of(r.m),
        final_round: true,
    });
    let best = final_best.or_else(search_best);
    let default = published(data, mine, g, t);
    Round {
        tuned: Tuned {
            gain: (best.as_ref())
                .and_then(|b| stats::change(Some(b.gflops), default.as_ref()?.gflops)),
            best,
            default,
            toolchain: t,
        },
        several_runs: rows.iter().any(|(_, r)| r.run != rows[0].1.run),
        rows: (rows.iter().take(TOP))
            .map(|&(speed, r)| FinalRow {
                m: r.m,
                speed,
                run: r.run + 1,
                strategies: (searched.clone().filter(|x| x.run == r.run + 1))
                    .map(|x| x.strategy().to_string())
                    .collect(),
            })
            .collect(),
        failed: of_tc
            .map(|r| r.m)
            .filter(|m| speed_of(m).is_none())
            .collect(),
    }
}

/// The published default: a compare row of the same kernel, size, toolchain
/// and device, else the default point of a search.
fn published(data: &Data, mine: &[&Search], g: &Group, t: Toolchain) -> Option<Published> {
    // A spec kernel has no published configuration; its defaults are "Your kernels"'.
    let At::Gemm(size) = g.size else {
        return None;
    };
    let rows: Vec<&Measurement> = (data.experiment("compare").into_iter().map(|r| r.m))
        .filter(|m| {
            m.kernel == g.kernel
                && m.toolchain == t
                && data::of_size(m, size)
                && m.variant.is_none()
                && m.label.is_none()
                && m.hints == Hints::default()
                && g.machine.contains(&m.device)
        })
        .collect();
    let failed = |s: &crate::gemm::driver::Status| (!s.is_ok()).then(|| s.label().to_string());
    let with_speed = rows.iter().find(|m| data::gflops(m).is_some());
    if let Some(m) = with_speed.or(rows.first()) {
        return Some(Published {
            gflops: data::gflops(m),
            vs_vendor: data::vs_vendor(m),
            source: Source::Compare,
            failed: failed(&m.status),
        });
    }
    let spec = kernels::find(&g.kernel).ok()?;
    let point = (mine.iter().filter(|x| x.toolchain() == t))
        .flat_map(|x| x.trace.search.tried.iter())
        .find(|tr| {
            spec.is_published(&tr.candidate.config) && tr.candidate.hints == Hints::default()
        })?;
    Some(Published {
        gflops: speed(point),
        vs_vendor: stats::ratio(speed(point), g.vendor),
        source: Source::Search,
        failed: failed(&point.record.status),
    })
}

/// Every configuration a toolchain's searches tried (each once): the verified
/// speeds fastest first, how many failed, how many are near the best.
fn spread(mine: &[&Search], t: Toolchain) -> Option<Hardness> {
    let mine: Vec<&&Search> = mine.iter().filter(|x| x.toolchain() == t).collect();
    if mine.is_empty() {
        return None;
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut speeds: Vec<f64> = (mine.iter().flat_map(|x| x.trace.search.tried.iter()))
        .filter(|tr| seen.insert(tr.candidate.describe()))
        .filter_map(speed)
        .collect();
    speeds.sort_by(|a, b| b.total_cmp(a));
    let best = speeds.first().copied().unwrap_or(0.0);
    let near = speeds.iter().filter(|v| **v >= NEAR_BEST * best).count();
    let tried = seen.len();
    Some(Hardness {
        toolchain: t,
        tried,
        near,
        share: near as f64 / tried.max(1) as f64,
        best,
        failed: tried - speeds.len(),
        strategies: distinct(mine.iter().map(|x| x.strategy().to_string())),
        whole_space: mine.iter().any(|x| x.trace.search.covers_space()),
        speeds,
    })
}

fn tuning(kind: Kind) -> Finding {
    Finding::new(Topic::Tuning, super::Kind::Tune(kind))
}

/// A group's findings in the order the section gives them: tuned bests, the
/// toolchain gap, how hard each space is, each replay, the search rates.
fn group_findings(searches: &[Search], g: &Group) -> Vec<Finding> {
    let (kernel, size) = (g.kernel.clone(), g.size.clone());
    let progress = (!g.curves.is_empty()).then(|| format!("tune-progress-{}", g.stem));
    let mut out = Vec::new();
    // A spec kernel's tuned best and gap are "Your kernels"' findings.
    let gemm = matches!(g.size, At::Gemm(_));
    let tuned: Vec<Tuned> = g.rounds.iter().map(|r| r.tuned.clone()).collect();
    if gemm && tuned.iter().any(|t| t.best.is_some()) {
        let gain = tuned.iter().filter_map(|t| t.gain).fold(0.0, f64::max);
        let kind = Kind::Tuned {
            kernel: kernel.clone(),
            size: size.clone(),
            search_only: tuned.iter().flat_map(|t| &t.best).any(|b| !b.final_round),
            toolchains: tuned,
            has_vendor: g.vendor.is_some(),
        };
        out.push(tuning(kind).weight(gain).chart(progress.clone()));
    }
    let round = |t| g.rounds.iter().map(|r| &r.tuned).find(|r| r.toolchain == t);
    let tcs: Vec<Toolchain> = g.rounds.iter().map(|r| r.tuned.toolchain).collect();
    for [a, b] in data::toolchain_pairs(&tcs).into_iter().filter(|_| gemm) {
        let gap = round(a).zip(round(b)).and_then(|(a, b)| gap(g, a, b));
        out.extend(gap.map(|f| f.chart(progress.clone())));
    }
    let mut with = g.spread.clone();
    with.retain(|x| !x.speeds.is_empty());
    if !with.is_empty() {
        // Of the spaces searched alike (whole or sampled), the two whose shares near
        // the best differ most: the harder, the easier.
        let pairs = with.iter().flat_map(|h| with.iter().map(move |e| (h, e)));
        let pairs = pairs.filter(|(h, e)| h.share < e.share && h.whole_space == e.whole_space);
        let harder = (pairs.map(|(h, e)| ([h.toolchain, e.toolchain], e.share - h.share)))
            .max_by(|x, y| x.1.total_cmp(&y.1));
        let kind = Kind::HowHard {
            kernel: kernel.clone(),
            size: size.clone(),
            unit: g.unit.clone(),
            near_best: NEAR_BEST,
            toolchains: with,
            harder: harder.map(|h| h.0),
        };
        let (weight, chart) = (
            harder.map_or(0.0, |h| h.1),
            format!("tune-spread-{}", g.stem),
        );
        out.push(tuning(kind).weight(weight).chart(Some(chart)));
    }
    for r in &g.replays {
        let Some(rec) = r.record.as_ref().filter(|rec| rec.error.is_none()) else {
            continue;
        };
        let kind = Kind::Replayed {
            kernel: kernel.clone(),
            size: size.clone(),
            search: r.name.clone(),
            space: searches[r.search].trace.search.tried.len(),
            replays: rec.clone(),
        };
        out.push(tuning(kind).chart(Some(r.stem.clone())));
    }
    let rates: Vec<Rate> = (g.searches.iter().zip(&g.names))
        .map(|(&i, name)| {
            let s = &searches[i].trace.search;
            Rate {
                name: SearchName {
                    strategy: Some(s.strategy.clone()),
                    ..name.clone()
                },
                rate: s.rate(),
                measured: s.measured(),
                tried: s.tried.len(),
                wall_s: s.wall_s,
                compile_s: s.compile_s,
                workers: s.options.workers,
                device_s: s.device_s,
                wait_s: s.wait_s,
                stopped: s.stopped.clone(),
            }
        })
        .collect();
    if !rates.is_empty() {
        let headline = rates.iter().any(|r| r.rate.is_some());
        let f = tuning(Kind::SearchRate {
            kernel,
            size,
            searches: rates,
        });
        out.push(if headline { f } else { f.detail() }.chart(progress));
    }
    out
}

/// Whether the gap between two toolchains survives tuning.
fn gap(g: &Group, ra: &Tuned, rb: &Tuned) -> Option<Finding> {
    let (a, b) = (ra.best.as_ref()?, rb.best.as_ref()?);
    if a.gflops <= 0.0 || b.gflops <= 0.0 {
        return None;
    }
    let tuned = a.gflops / b.gflops;
    let gap = gap_size(tuned);
    let default = ra.default.as_ref().zip(rb.default.as_ref());
    let default = default.and_then(|(pa, pb)| {
        let dr = pa.gflops? / pb.gflops.filter(|g| *g > 0.0)?;
        Some((dr, [pa.source, pb.source], verdict(dr, tuned)))
    });
    let kind = Kind::ToolchainGap {
        kernel: g.kernel.clone(),
        size: g.size.clone(),
        toolchains: [ra.toolchain, rb.toolchain],
        tuned,
        lead: if tuned >= 1.0 { ra } else { rb }.toolchain,
        gap,
        same: stats::is_same(gap),
        both_final: a.final_round && b.final_round,
        default,
    };
    Some(Finding::new(Topic::Toolchains, super::Kind::Tune(kind)).weight(gap))
}

/// A ratio's distance from even either way: 1.25 and 0.8 are both 0.25.
fn gap_size(r: f64) -> f64 {
    r.max(1.0 / r) - 1.0
}

/// What tuning did to the gap: the ratios at the defaults and tuned.
fn verdict(default: f64, tuned: f64) -> Verdict {
    let (d, t) = (gap_size(default), gap_size(tuned));
    match (stats::is_same(d), stats::is_same(t)) {
        (true, true) => Verdict::NoGap,
        (_, true) => Verdict::Closes,
        (true, _) => Verdict::Opens,
        _ if (default > 1.0) != (tuned > 1.0) => Verdict::Reverses,
        _ if t < d - super::SAME_SPEED => Verdict::Shrinks,
        _ if t > d + super::SAME_SPEED => Verdict::Grows,
        _ => Verdict::Unchanged,
    }
}
