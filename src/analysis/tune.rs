//! The "tune" results as data: what each search tried (its trace, one
//! `search-*.json` per search next to the results), each toolchain's final
//! round and published default, how much of each space is near its best, and
//! the strategies replayed over the spaces searched exhaustively (the
//! `replay-*.json` records `gemmlab tune` writes next to those traces).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::backend::Toolchain;
use crate::kernels::{self, Hints};
use crate::results::{replay_file, Measurement, Replays};
use crate::tune::run::Trace;
use crate::tune::search::Tried;

use super::data::{self, Rec};
use super::{stats, Data, Finding, Topic};

/// The experiment name of tune's rows (cuBLAS and the final round).
pub const EXPERIMENT: &str = "tune";
/// Rows of the top table per kernel, size and toolchain.
pub const TOP: usize = 10;
/// "Near the best": the share of a space within this fraction of its best.
pub const NEAR_BEST: f64 = 0.9;

pub type Size = (usize, usize, usize);

/// One search trace, where it came from, and what it gave.
pub struct Search {
    /// The result directory, 1-based as Environment numbers runs.
    pub run: usize,
    pub trace: Trace,
    /// The strategies replayed over it, when a record was written next to it.
    pub replays: Option<Replays>,
    pub measured: usize,
    pub failed: usize,
    pub pruned: usize,
    /// Of those, pruned at the screen (one checked launch with K cut short).
    pub screened: usize,
    /// The fastest verified, unpruned configuration (search timing).
    pub best: Option<(f64, String)>,
    /// Configurations measured per wall second, compiling included.
    pub rate: Option<f64>,
    /// It tried every point of its space.
    pub complete: bool,
}

/// How a search is named where a toolchain has several: "CUDA", "CUDA anneal",
/// "CUDA anneal (run 2)".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchName {
    pub toolchain: Toolchain,
    pub strategy: Option<String>,
    pub run: Option<usize>,
}

/// The fastest configuration of a toolchain.
#[derive(Debug, Clone, Serialize)]
pub struct Best {
    pub gflops: f64,
    pub vs_vendor: Option<f64>,
    pub config: String,
    /// From the final round; else the search's own timing (no final round written).
    pub final_round: bool,
}

/// Where a published default's speed comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A compare row of the same device.
    Compare,
    /// The default configuration's point in a search (search timing).
    Search,
}

/// The published default configuration of a kernel on a toolchain.
#[derive(Debug, Clone, Serialize)]
pub struct Published {
    pub gflops: Option<f64>,
    pub vs_vendor: Option<f64>,
    pub source: Source,
    /// The status word of a default that has no speed.
    pub failed: Option<String>,
}

/// One final-round row and the searches of its run on its toolchain.
pub struct FinalRow<'a> {
    pub m: &'a Measurement,
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

/// How much of what a toolchain's searches tried is near its best.
#[derive(Debug, Clone, Serialize)]
pub struct Hardness {
    pub toolchain: Toolchain,
    /// Configurations tried (each once), those within `NEAR_BEST` of the best, their share.
    pub tried: usize,
    pub near: usize,
    pub share: f64,
    pub best: f64,
    pub failed: usize,
    pub strategies: Vec<String>,
    /// An exhaustive search covered the whole space.
    pub whole_space: bool,
}

/// A toolchain's tried configurations' speeds, fastest first, for the spread chart.
pub struct Spread {
    pub of: Hardness,
    pub speeds: Vec<f64>,
}

/// A search's best so far after each configuration: (count, seconds, GFLOP/s).
pub struct Curve {
    pub name: SearchName,
    /// Its place among the drawn searches of its toolchain (the shade).
    pub nth: usize,
    pub points: Vec<(usize, f64, Option<f64>)>,
}

/// A complete search and its replay record (`None`: none was written).
pub struct Replayed {
    pub name: SearchName,
    /// Its index into the searches.
    pub search: usize,
    pub stem: String,
    pub record: Option<Replays>,
}

/// A kernel at a size on one set of devices: what the section groups by.
pub struct Group<'a> {
    pub kernel: String,
    pub size: Size,
    /// The device names of the result directories it comes from.
    pub machine: Vec<String>,
    /// The charts' stems end in it.
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
    pub spread: Vec<Spread>,
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
    /// Whether the groups come from more than one set of devices.
    pub machines: usize,
    pub groups: Vec<Group<'a>>,
    pub findings: Vec<Finding>,
}

/// A toolchain's tuned best against its published default.
#[derive(Debug, Clone, Serialize)]
pub struct Tuned {
    pub toolchain: Toolchain,
    pub best: Option<Best>,
    pub default: Option<Published>,
    /// The best over the default's speed minus one.
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
    /// Each toolchain's tuned best, against cuBLAS and its published default.
    Tuned {
        kernel: String,
        size: Size,
        toolchains: Vec<Tuned>,
        /// Some best has search timing only.
        search_only: bool,
        has_vendor: bool,
    },
    /// The ratio of two toolchains' bests, tuned and at the published defaults.
    ToolchainGap {
        kernel: String,
        size: Size,
        toolchains: [Toolchain; 2],
        tuned: f64,
        /// The faster when tuned, and by how much (a relative difference).
        lead: Toolchain,
        gap: f64,
        same: bool,
        both_final: bool,
        /// The ratio at the defaults, their sources and the verdict.
        default: Option<(f64, [Source; 2], Verdict)>,
    },
    /// How much of each toolchain's tried space is near its best.
    HowHard {
        kernel: String,
        size: Size,
        near_best: f64,
        toolchains: Vec<Hardness>,
        /// (harder, easier) when two comparable spaces differ.
        harder: Option<[Toolchain; 2]>,
    },
    /// Strategies replayed over a space measured exhaustively.
    Replayed {
        kernel: String,
        size: Size,
        search: SearchName,
        /// The configurations measured exhaustively.
        space: usize,
        replays: Replays,
    },
    /// Configurations measured per wall second of each search.
    SearchRate {
        kernel: String,
        size: Size,
        searches: Vec<Rate>,
    },
}

fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(p).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// Every readable search trace in a result directory with its file name, and
/// why the others could not be read: one bad file hides nothing else.
pub fn load_traces(dir: &Path) -> (Vec<(String, Trace)>, Vec<String>) {
    let (mut traces, mut bad) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (traces, bad);
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with("search-") && name.ends_with(".json") {
            match read_json(&p) {
                Ok(t) => traces.push((name.to_string(), t)),
                Err(e) => bad.push(format!("{}: {e}", p.display())),
            }
        }
    }
    (traces, bad)
}

/// The replay record next to a trace, if one was written.
pub fn load_replays(dir: &Path, trace_file: &str) -> Option<Result<Replays, String>> {
    let p = dir.join(replay_file(trace_file));
    p.is_file().then(|| read_json(&p))
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

impl Search {
    fn new(run: usize, trace: Trace, replays: Option<Replays>) -> Search {
        let s = &trace.search;
        let measured = s.tried.iter().filter(|t| !t.cached).count();
        let mut best: Option<&Tried> = None;
        for t in s
            .tried
            .iter()
            .filter(|t| t.record.status.is_ok() && !t.record.pruned)
        {
            if t.record.gflops.is_some() && best.is_none_or(|b| t.record.gflops > b.record.gflops) {
                best = Some(t);
            }
        }
        let best = best.and_then(|t| Some((speed(t)?, t.candidate.describe())));
        Search {
            run,
            measured,
            failed: s.tried.iter().filter(|t| speed(t).is_none()).count(),
            pruned: s.tried.iter().filter(|t| t.record.pruned).count(),
            screened: s
                .tried
                .iter()
                .filter(|t| t.record.pruned && t.record.screen_k.is_some())
                .count(),
            best,
            rate: (s.wall_s > 0.0 && measured > 0).then(|| measured as f64 / s.wall_s),
            complete: s.strategy == "exhaustive" && s.stopped.starts_with("every point"),
            trace,
            replays,
        }
    }

    pub fn toolchain(&self) -> Toolchain {
        self.trace.search.toolchain
    }

    pub fn strategy(&self) -> &str {
        &self.trace.search.strategy
    }
}

pub fn analyse(data: &Data) -> Tune<'_> {
    let mut searches: Vec<Search> = Vec::new();
    let mut unreadable: Vec<String> = Vec::new();
    for (ri, run) in data.runs.iter().enumerate() {
        let (traces, bad) = load_traces(&run.dir);
        unreadable.extend(bad);
        // A user kernel's searches are the spec section's.
        for (file, trace) in traces.into_iter().filter(|(_, t)| t.search.dims.is_none()) {
            let replays =
                load_replays(&run.dir, &file).and_then(|r| r.map_err(|e| unreadable.push(e)).ok());
            searches.push(Search::new(ri + 1, trace, replays));
        }
    }
    let has_finals = data
        .all()
        .any(|r| r.m.experiment == EXPERIMENT && r.m.dims.is_none() && !data::is_offline(r.m));
    let mut dirs: Vec<usize> = searches.iter().map(|x| x.run).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let mut groups = groups(data, &searches);
    let mut machines: Vec<&Vec<String>> = Vec::new();
    for g in &groups {
        if !machines.contains(&&g.machine) {
            machines.push(&g.machine);
        }
    }
    let machines = machines.len();
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
        dirs: dirs.len(),
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

/// The kernels and sizes tuned, largest size first within each kernel.
fn groups<'a>(data: &'a Data, searches: &[Search]) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    fn place<'a, 'o>(
        out: &'o mut Vec<Group<'a>>,
        kernel: &str,
        size: Size,
        machine: Vec<String>,
    ) -> &'o mut Group<'a> {
        let i = out
            .iter()
            .position(|g| g.kernel == kernel && g.size == size && g.machine == machine);
        let i = i.unwrap_or_else(|| {
            out.push(Group {
                kernel: kernel.to_string(),
                size,
                machine,
                stem: format!("{kernel}-{}", data::size_label(size)),
                searches: Vec::new(),
                names: Vec::new(),
                notes: Vec::new(),
                rounds: Vec::new(),
                vendor: None,
                curves: Vec::new(),
                spread: Vec::new(),
                replays: Vec::new(),
                finals: Vec::new(),
            });
            out.len() - 1
        });
        &mut out[i]
    }
    for (i, x) in searches.iter().enumerate() {
        let s = &x.trace.search;
        place(
            &mut out,
            &s.kernel,
            s.size,
            machine_of(data, x.run, searches),
        )
        .searches
        .push(i);
    }
    for r in data.all() {
        let m = r.m;
        if m.experiment != EXPERIMENT
            || data::is_vendor(m)
            || m.variant.is_some()
            || data::is_offline(m)
        {
            continue;
        }
        let machine = machine_of(data, r.run + 1, searches);
        place(&mut out, &m.kernel, (m.m, m.n, m.k), machine)
            .finals
            .push(r);
    }
    let volume = |(m, n, k): Size| m as u128 * n as u128 * k as u128;
    out.sort_by(|a, b| {
        data::kernel_order(&a.kernel, &b.kernel)
            .then_with(|| volume(b.size).cmp(&volume(a.size)))
            .then_with(|| a.machine.cmp(&b.machine))
    });
    out
}

/// "CUDA", or "CUDA anneal" and "CUDA anneal (run 2)" where one toolchain has several searches.
fn names(searches: &[Search], g: &Group) -> Vec<SearchName> {
    let mine = |i: &usize| &searches[*i];
    g.searches
        .iter()
        .map(mine)
        .map(|x| {
            let same_tc: Vec<&Search> = g
                .searches
                .iter()
                .map(mine)
                .filter(|y| y.toolchain() == x.toolchain())
                .collect();
            let same_strategy = same_tc
                .iter()
                .filter(|y| y.strategy() == x.strategy())
                .count();
            SearchName {
                toolchain: x.toolchain(),
                strategy: (same_tc.len() > 1).then(|| x.strategy().to_string()),
                run: (same_tc.len() > 1 && same_strategy > 1).then_some(x.run),
            }
        })
        .collect()
}

/// Everything of a group but its findings.
fn fill<'a>(data: &'a Data, searches: &[Search], g: &mut Group<'a>) {
    g.names = names(searches, g);
    let mine: Vec<&Search> = g.searches.iter().map(|&i| &searches[i]).collect();
    for x in &mine {
        for n in &x.trace.space.notes {
            if !g.notes.contains(&(x.toolchain(), n.clone())) {
                g.notes.push((x.toolchain(), n.clone()));
            }
        }
    }
    let runs: Vec<usize> = g
        .finals
        .iter()
        .map(|r| r.run + 1)
        .chain(mine.iter().map(|x| x.run))
        .collect();
    let vendor = runs
        .iter()
        .flat_map(|&r| data.runs[r - 1].measurements.iter())
        .find(|m| {
            m.experiment == EXPERIMENT
                && data::is_vendor(m)
                && data::of_size(m, g.size)
                && data::gflops(m).is_some()
        });
    g.vendor = vendor.and_then(data::gflops);
    let tcs: Vec<Toolchain> = Toolchain::ALL
        .into_iter()
        .filter(|t| {
            mine.iter().any(|x| x.toolchain() == *t) || g.finals.iter().any(|r| r.m.toolchain == *t)
        })
        .collect();
    g.rounds = tcs.iter().map(|&t| round(data, &mine, g, t)).collect();
    let mut per_tc: Vec<Toolchain> = Vec::new();
    for (x, name) in mine.iter().zip(&g.names) {
        if !x.trace.search.tried.iter().any(|t| speed(t).is_some()) {
            continue;
        }
        let nth = per_tc.iter().filter(|t| **t == x.toolchain()).count();
        per_tc.push(x.toolchain());
        let mut best: Option<f64> = None;
        let points = x.trace.search.tried.iter().enumerate().map(|(k, t)| {
            if let Some(v) = speed(t) {
                best = Some(best.map_or(v, |b| b.max(v)));
            }
            (k + 1, t.elapsed_s, best)
        });
        g.curves.push(Curve {
            name: name.clone(),
            nth,
            points: points.collect(),
        });
    }
    g.spread = tcs.iter().filter_map(|&t| spread(&mine, t)).collect();
    let complete: Vec<(usize, &Search)> = g
        .searches
        .iter()
        .map(|&i| (i, &searches[i]))
        .filter(|(_, x)| x.complete)
        .collect();
    for &(i, x) in &complete {
        let several = complete
            .iter()
            .filter(|(_, y)| y.toolchain() == x.toolchain())
            .count()
            > 1;
        let tc = data::toolchain_name(x.toolchain()).to_ascii_lowercase();
        g.replays.push(Replayed {
            name: SearchName {
                toolchain: x.toolchain(),
                strategy: None,
                run: several.then_some(x.run),
            },
            search: i,
            stem: format!("tune-replay-{}-{tc}-run{}", g.stem, x.run),
            record: x.replays.clone(),
        });
    }
}

/// A toolchain's final round, best and published default in a group.
fn round<'a>(data: &'a Data, mine: &[&Search], g: &Group<'a>, t: Toolchain) -> Round<'a> {
    let of_tc = || g.finals.iter().filter(|r| r.m.toolchain == t);
    let mut rows: Vec<&Rec<'a>> = of_tc().filter(|r| data::gflops(r.m).is_some()).collect();
    rows.sort_by(|a, b| {
        data::gflops(b.m)
            .unwrap_or(0.0)
            .total_cmp(&data::gflops(a.m).unwrap_or(0.0))
    });
    let mut runs: Vec<usize> = rows.iter().map(|r| r.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let strategies = |run: usize| {
        let of = mine.iter().filter(|x| x.run == run && x.toolchain() == t);
        of.map(|x| x.strategy().to_string()).collect()
    };
    let final_best = rows.first().map(|r| Best {
        gflops: data::gflops(r.m).unwrap_or(0.0),
        vs_vendor: data::vs_vendor(r.m),
        config: r.m.label.clone().unwrap_or_else(|| r.m.config.describe()),
        final_round: true,
    });
    let search_best = || {
        let bests = mine
            .iter()
            .filter(|x| x.toolchain() == t)
            .filter_map(|x| x.best.as_ref());
        bests
            .map(|(gf, config)| Best {
                gflops: *gf,
                vs_vendor: stats::ratio(Some(*gf), g.vendor),
                config: config.clone(),
                final_round: false,
            })
            .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
    };
    let best = final_best.or_else(search_best);
    let default = published(data, mine, g, t);
    Round {
        tuned: Tuned {
            gain: best
                .as_ref()
                .and_then(|b| stats::change(Some(b.gflops), default.as_ref()?.gflops)),
            best,
            default,
            toolchain: t,
        },
        several_runs: runs.len() > 1,
        rows: rows
            .iter()
            .take(TOP)
            .map(|r| FinalRow {
                m: r.m,
                run: r.run + 1,
                strategies: strategies(r.run + 1),
            })
            .collect(),
        failed: of_tc()
            .filter(|r| data::gflops(r.m).is_none())
            .map(|r| r.m)
            .collect(),
    }
}

/// The published default: a compare row of the same kernel, size, toolchain
/// and device, else the default point of a search.
fn published(data: &Data, mine: &[&Search], g: &Group, t: Toolchain) -> Option<Published> {
    let rows: Vec<&Measurement> = data
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
    if let Some(m) = rows
        .iter()
        .find(|m| data::gflops(m).is_some())
        .or(rows.first())
    {
        return Some(Published {
            gflops: data::gflops(m),
            vs_vendor: data::vs_vendor(m),
            source: Source::Compare,
            failed: (!m.status.is_ok()).then(|| m.status.label().to_string()),
        });
    }
    let spec = kernels::find(&g.kernel).ok()?;
    let point = mine
        .iter()
        .filter(|x| x.toolchain() == t)
        .flat_map(|x| x.trace.search.tried.iter())
        .find(|tr| {
            spec.is_published(&tr.candidate.config) && tr.candidate.hints == Hints::default()
        })?;
    let gf = speed(point);
    Some(Published {
        gflops: gf,
        vs_vendor: stats::ratio(gf, g.vendor),
        source: Source::Search,
        failed: (!point.record.status.is_ok()).then(|| point.record.status.label().to_string()),
    })
}

/// Every configuration a toolchain's searches tried (each once): the verified
/// speeds fastest first, how many failed, how many are near the best.
fn spread(mine: &[&Search], t: Toolchain) -> Option<Spread> {
    let mine: Vec<&&Search> = mine.iter().filter(|x| x.toolchain() == t).collect();
    if mine.is_empty() {
        return None;
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut speeds: Vec<f64> = mine
        .iter()
        .flat_map(|x| x.trace.search.tried.iter())
        .filter(|tr| seen.insert(tr.candidate.describe()))
        .filter_map(speed)
        .collect();
    speeds.sort_by(|a, b| b.total_cmp(a));
    let mut strategies: Vec<String> = Vec::new();
    for x in &mine {
        if !strategies.iter().any(|s| s == x.strategy()) {
            strategies.push(x.strategy().to_string());
        }
    }
    let best = speeds.first().copied().unwrap_or(0.0);
    let near = speeds.iter().filter(|v| **v >= NEAR_BEST * best).count();
    let tried = seen.len();
    Some(Spread {
        of: Hardness {
            toolchain: t,
            tried,
            near,
            share: near as f64 / tried.max(1) as f64,
            best,
            failed: tried - speeds.len(),
            strategies,
            whole_space: mine.iter().any(|x| x.complete),
        },
        speeds,
    })
}

/// A group's findings in the order the section gives them: tuned bests, the
/// toolchain gap, how hard each space is, each replay, the search rates.
fn group_findings(searches: &[Search], g: &Group) -> Vec<Finding> {
    let (kernel, size) = (g.kernel.clone(), g.size);
    let progress = (!g.curves.is_empty()).then(|| format!("tune-progress-{}", g.stem));
    let mut out = Vec::new();
    let tuned: Vec<Tuned> = g.rounds.iter().map(|r| r.tuned.clone()).collect();
    if tuned.iter().any(|t| t.best.is_some()) {
        let gain = tuned.iter().filter_map(|t| t.gain).fold(0.0, f64::max);
        let search_only = tuned.iter().flat_map(|t| &t.best).any(|b| !b.final_round);
        let has_vendor = g.vendor.is_some();
        let kind = Kind::Tuned {
            kernel: kernel.clone(),
            size,
            toolchains: tuned,
            search_only,
            has_vendor,
        };
        out.push(finding(kind).weight(gain).chart(progress.clone()));
    }
    if let Some(f) = gap(g) {
        out.push(f.chart(progress.clone()));
    }
    let with: Vec<Hardness> = g
        .spread
        .iter()
        .filter(|x| !x.speeds.is_empty())
        .map(|x| x.of.clone())
        .collect();
    if !with.is_empty() {
        let mut weight = 0.0;
        let mut harder = None;
        if let [a, b] = with.as_slice() {
            if (a.share - b.share).abs() > 0.0 && a.whole_space == b.whole_space {
                let (h, e) = if a.share < b.share { (a, b) } else { (b, a) };
                harder = Some([h.toolchain, e.toolchain]);
                weight = (a.share - b.share).abs();
            }
        }
        let kind = Kind::HowHard {
            kernel: kernel.clone(),
            size,
            near_best: NEAR_BEST,
            toolchains: with,
            harder,
        };
        out.push(
            finding(kind)
                .weight(weight)
                .chart(Some(format!("tune-spread-{}", g.stem))),
        );
    }
    out.extend(search_findings(searches, g, progress));
    out
}

/// The replay of each complete search with a record, and the search rates.
fn search_findings(searches: &[Search], g: &Group, progress: Option<String>) -> Vec<Finding> {
    let (kernel, size) = (g.kernel.clone(), g.size);
    let mut out = Vec::new();
    for r in &g.replays {
        let Some(rec) = r.record.as_ref().filter(|rec| rec.error.is_none()) else {
            continue;
        };
        let kind = Kind::Replayed {
            kernel: kernel.clone(),
            size,
            search: r.name.clone(),
            space: searches[r.search].trace.search.tried.len(),
            replays: rec.clone(),
        };
        out.push(finding(kind).chart(Some(r.stem.clone())));
    }
    let rates: Vec<Rate> = g
        .searches
        .iter()
        .zip(&g.names)
        .map(|(&i, name)| {
            let x = &searches[i];
            let s = &x.trace.search;
            Rate {
                name: SearchName {
                    strategy: Some(s.strategy.clone()),
                    ..name.clone()
                },
                rate: x.rate,
                measured: x.measured,
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
        let f = finding(Kind::SearchRate {
            kernel,
            size,
            searches: rates,
        })
        .chart(progress);
        out.push(if headline { f } else { f.detail() });
    }
    out
}

fn finding(kind: Kind) -> Finding {
    let topic = match kind {
        Kind::ToolchainGap { .. } => Topic::Toolchains,
        _ => Topic::Tuning,
    };
    Finding::new(topic, super::Kind::Tune(kind))
}

/// Whether the gap between the two toolchains survives tuning.
fn gap(g: &Group) -> Option<Finding> {
    let [ra, rb] = g.rounds.as_slice() else {
        return None;
    };
    let (ra, rb) = (&ra.tuned, &rb.tuned);
    let (a, b) = (ra.best.as_ref()?, rb.best.as_ref()?);
    if a.gflops <= 0.0 || b.gflops <= 0.0 {
        return None;
    }
    let tuned = a.gflops / b.gflops;
    let size = |r: f64| r.max(1.0 / r) - 1.0;
    let even = |r: f64| stats::is_same(size(r));
    let default = match (&ra.default, &rb.default) {
        (Some(pa), Some(pb)) => match (pa.gflops, pb.gflops) {
            (Some(ga), Some(gb)) if gb > 0.0 => Some((ga / gb, [pa.source, pb.source])),
            _ => None,
        },
        _ => None,
    };
    let default = default.map(|(dr, sources)| {
        let verdict = if even(dr) && even(tuned) {
            Verdict::NoGap
        } else if even(tuned) {
            Verdict::Closes
        } else if even(dr) {
            Verdict::Opens
        } else if (dr > 1.0) != (tuned > 1.0) {
            Verdict::Reverses
        } else if size(tuned) < size(dr) - super::SAME_SPEED {
            Verdict::Shrinks
        } else if size(tuned) > size(dr) + super::SAME_SPEED {
            Verdict::Grows
        } else {
            Verdict::Unchanged
        };
        (dr, sources, verdict)
    });
    let kind = Kind::ToolchainGap {
        kernel: g.kernel.clone(),
        size: g.size,
        toolchains: [ra.toolchain, rb.toolchain],
        tuned,
        lead: if tuned >= 1.0 {
            ra.toolchain
        } else {
            rb.toolchain
        },
        gap: size(tuned),
        same: even(tuned),
        both_final: a.final_round && b.final_round,
        default,
    };
    Some(finding(kind).weight(size(tuned)))
}
