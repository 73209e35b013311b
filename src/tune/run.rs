//! A whole tuning run: for each size, cuBLAS first; for each kernel, one search
//! per toolchain in its own space; then each toolchain's top configurations
//! re-measured with the full timing method, every toolchain's repetitions
//! interleaved, and the best of each written to the database of bests.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::search::{key_base, search, SearchOptions, SearchResult, Workload};
use super::space::{Space, SpaceRequest};
use super::store::{Phase, Record, Store};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::experiment::{measure_items, measure_vendor, refused_size, Lane, Point, Problem};
use crate::gemm::driver::Session;
use crate::gemm::problem::Template;
use crate::kernel::builtin::KernelSpec;
use crate::kernel::user::{Dims, UserKernel};
use crate::kernel::Kernel;
use crate::measure::progress::Progress;
use crate::measure::Plan;
use crate::results::bests::{Best, Database};
use crate::results::{Measurement, ResultWriter};
use crate::util::keys::fnv1a;

#[derive(Clone)]
pub struct TuneOptions {
    pub kernels: Vec<&'static KernelSpec>,
    pub sizes: Vec<(usize, usize, usize)>,
    /// Users' kernels (spec files), tuned after the built-in ones.
    pub specs: Vec<&'static UserKernel>,
    /// Their size points (`--sizes NAME=VALUE,...`); empty: each spec's defaults.
    pub spec_points: Vec<Dims>,
    /// The GEMM call at each size (layout, transposes, alpha/beta, ld, precision).
    pub call: Template,
    pub request: SpaceRequest,
    pub search: SearchOptions,
    /// The full timing method of the final round.
    pub plan: Plan,
    /// Configurations per toolchain re-measured in the final round.
    pub top: usize,
    /// Seed of the random inputs.
    pub seed: u64,
    /// Where the store lives (one file per device inside).
    pub store_dir: PathBuf,
    /// The database of bests to update; `None` leaves it alone.
    pub db_dir: Option<PathBuf>,
    /// Where each search's trace is written (search-KERNEL-TOOLCHAIN-SIZE.json).
    pub out: PathBuf,
}

/// One search's trace as written next to the results (what the report charts).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trace {
    pub search: SearchResult,
    pub space: SpaceInfo,
}

/// The space of a search, as the report shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpaceInfo {
    pub axes: Vec<super::space::Axis>,
    pub before: u128,
    pub after: usize,
    pub removals: Vec<super::space::Removal>,
    pub notes: Vec<String>,
}

impl SpaceInfo {
    pub fn of(space: &Space) -> SpaceInfo {
        SpaceInfo {
            axes: space.axes.clone(),
            before: space.before,
            after: space.len(),
            removals: space.removals.clone(),
            notes: space.notes.clone(),
        }
    }
}

/// Builds the space of every kernel on every session before anything runs, so
/// a bad request fails at once and the sizes are printed first.
pub fn spaces(
    sessions: &[Session],
    kernels: &[Kernel],
    request: &SpaceRequest,
) -> Result<Vec<Vec<Space>>> {
    kernels
        .iter()
        .map(|spec| {
            sessions
                .iter()
                .map(|s| Space::build(*spec, s.backend.borrow().info(), request))
                .collect()
        })
        .collect()
}

/// Everything one run did.
pub struct TuneResult {
    pub searches: Vec<SearchResult>,
    pub finals: Vec<Measurement>,
}

impl TuneResult {
    /// One kernel's final rows and its searches (by session).
    fn keep(&mut self, finals: Vec<Measurement>, searched: Vec<(usize, SearchResult)>) {
        self.finals.extend(finals);
        self.searches.extend(searched.into_iter().map(|(_, r)| r));
    }
}

/// Runs the tuning. `on_search` sees each finished search, `on_final` each
/// kernel's final rows (for printing as they come).
#[allow(clippy::too_many_arguments)]
pub fn run_tune(
    sessions: &mut [Session],
    opts: &TuneOptions,
    spaces: &[Vec<Space>],
    writer: &mut ResultWriter,
    progress: &Progress,
    mut on_search: impl FnMut(&SearchResult),
    mut on_final: impl FnMut(&[Measurement]),
) -> Result<TuneResult> {
    let device = sessions
        .first()
        .map(|s| s.backend.borrow().info().clone())
        .ok_or_else(|| Error::invalid("no device to tune on"))?;
    let mut store = Store::open_at(&opts.store_dir.to_string_lossy(), &device)?;
    for w in &store.warnings {
        progress.suspend(|| eprintln!("warning: {}: {w}", store.describe()));
    }
    let mut db = match &opts.db_dir {
        Some(dir) => Some((dir.clone(), Database::load(dir, &device.name)?)),
        None => None,
    };
    let mut result = TuneResult {
        searches: Vec::new(),
        finals: Vec::new(),
    };
    // Sizes are GEMM sizes: without a built-in kernel there is nothing to run at them.
    let gemm_sizes: &[(usize, usize, usize)] = if opts.kernels.is_empty() {
        &[]
    } else {
        &opts.sizes
    };
    for &size in gemm_sizes {
        tune_gemm_size(
            sessions,
            opts,
            size,
            spaces,
            &mut store,
            db.as_mut(),
            writer,
            progress,
            &mut result,
            &mut on_search,
            &mut on_final,
        )?;
    }
    let first_spec = opts.kernels.len();
    for (j, k) in opts.specs.iter().enumerate() {
        tune_spec(
            sessions,
            opts,
            k,
            &spaces[first_spec + j],
            &mut store,
            db.as_mut().map(|(_, d)| d),
            writer,
            progress,
            &mut result,
            &mut on_search,
            &mut on_final,
        )?;
        if let Some((dir, db)) = &db {
            db.save(dir)?;
        }
    }
    Ok(result)
}

/// Every built-in kernel at one GEMM size: cuBLAS first, a search per
/// toolchain, then the top configurations of every toolchain re-measured
/// interleaved, the store and the database of bests updated.
#[allow(clippy::too_many_arguments)]
fn tune_gemm_size(
    sessions: &mut [Session],
    opts: &TuneOptions,
    size: (usize, usize, usize),
    spaces: &[Vec<Space>],
    store: &mut Store,
    mut db: Option<&mut (PathBuf, Database)>,
    writer: &mut ResultWriter,
    progress: &Progress,
    result: &mut TuneResult,
    on_search: &mut impl FnMut(&SearchResult),
    on_final: &mut impl FnMut(&[Measurement]),
) -> Result<()> {
    let call = opts.call.at(size.0, size.1, size.2)?;
    let problem = match Problem::prepare(sessions, &call, opts.seed, &opts.plan, progress) {
        Ok(p) => p,
        Err(status) => {
            let ids = opts.kernels.iter().map(|k| k.id.to_string());
            let rows = refused_size(sessions, ids, &status, size, "tune", writer)?;
            on_final(&rows);
            result.finals.extend(rows);
            return Ok(());
        }
    };
    // The same call with K cut short, for the searches' screen; without it
    // (too small a K, or a size the screen could not take) they go unscreened.
    let screen = match super::search::screen_k(size.2, opts.search.screen) {
        Some(k) => opts
            .call
            .at(size.0, size.1, k)
            .ok()
            .and_then(|c| Problem::prepare(sessions, &c, opts.seed, &opts.plan, progress).ok()),
        None => None,
    };
    let vendor = measure_vendor(sessions, &problem, &opts.plan, "tune");
    for row in &vendor {
        writer.push(row.clone())?;
    }
    for (ki, spec) in opts.kernels.iter().enumerate() {
        let (top, searched) = search_each(
            sessions,
            &spaces[ki],
            |_| Some(Workload::Gemm(&problem, screen.as_ref())),
            store,
            opts,
            progress,
            on_search,
        )?;
        let picks: Vec<(Point, Lane)> = top
            .into_iter()
            .map(|(si, c, label)| {
                let point = Point {
                    spec,
                    config: c.config,
                    hints: c.hints,
                    label: Some(label),
                };
                (point, Lane::native(si))
            })
            .collect();
        progress.set_message(format!(
            "{}: final round, {} configurations interleaved",
            spec.id,
            picks.len()
        ));
        let items: Vec<(&Point, Lane)> = picks.iter().map(|(p, l)| (p, l.clone())).collect();
        let rows = measure_items(sessions, &items, &problem, &opts.plan, "tune", &vendor);
        let finals: Vec<Final> = picks
            .iter()
            .zip(&rows)
            .map(|((point, lane), row)| Final {
                session: lane.session,
                config: &point.config,
                hints: &point.hints,
                row,
            })
            .collect();
        let at = TunedAt {
            size,
            precision: problem.ops.problem.precision,
            call: super::search::call_tag(&problem.ops.problem),
        };
        record_finals(sessions, &spaces[ki], &finals, &at, opts, store, writer)?;
        // Saved after each kernel: an interrupted run keeps what it found.
        if let Some((dir, db)) = db.as_deref_mut() {
            offer_bests(db, sessions, &searched, &finals, spec.id, &at, |tc| {
                fnv1a(&spec.source(tc))
            });
            db.save(dir)?;
        }
        let mut shown = vendor.clone();
        shown.extend(rows.iter().cloned());
        on_final(&shown);
        result.keep(rows, searched);
    }
    for s in sessions.iter_mut() {
        s.unload();
    }
    Ok(())
}

/// One user kernel at each of its size points: a search per toolchain (each
/// checked against the reference computed on that toolchain), then the top
/// configurations of every toolchain re-measured interleaved, the store and the
/// database of bests updated.
#[allow(clippy::too_many_arguments)]
fn tune_spec(
    sessions: &mut [Session],
    opts: &TuneOptions,
    k: &'static UserKernel,
    spaces: &[Space],
    store: &mut Store,
    mut db: Option<&mut Database>,
    writer: &mut ResultWriter,
    progress: &Progress,
    result: &mut TuneResult,
    on_search: &mut impl FnMut(&SearchResult),
    on_final: &mut impl FnMut(&[Measurement]),
) -> Result<()> {
    let points = crate::experiment::points_for(k, &opts.specs, &opts.spec_points)?;
    for dims in points {
        progress.set_message(format!(
            "{}: {}: reference",
            k.id,
            UserKernel::describe_dims(&dims)
        ));
        let refs = crate::experiment::references(sessions, k, &dims, opts.seed);
        let tcs = crate::experiment::toolchains(sessions);
        let (top, searched) = search_each(
            sessions,
            spaces,
            |si| {
                let reference = refs[si].as_ref().ok()?;
                k.source(tcs[si]).map(|_| Workload::Spec {
                    dims: &dims,
                    seed: opts.seed,
                    reference,
                })
            },
            store,
            opts,
            progress,
            on_search,
        )?;
        let mut items: Vec<crate::experiment::Item> = top
            .into_iter()
            .map(|(si, c, label)| crate::experiment::Item {
                config: c.config,
                hints: c.hints,
                lane: crate::experiment::Lane::native(si),
                label: Some(label),
            })
            .collect();
        // Toolchains that could not search (no source, no reference) get their row too.
        for (si, r) in refs.iter().enumerate() {
            if r.is_err() || !searched.iter().any(|(s, _)| *s == si) {
                items.push(crate::experiment::Item {
                    config: k.defaults(),
                    hints: Default::default(),
                    lane: crate::experiment::Lane::native(si),
                    label: Some(format!(
                        "{} (not searched)",
                        crate::kernel::unchanged_name(true)
                    )),
                });
            }
        }
        progress.set_message(format!(
            "{}: final round, {} configurations interleaved",
            k.id,
            items.len()
        ));
        let rows = crate::experiment::measure_spec_items(
            sessions, k, &items, &dims, &refs, &opts.plan, opts.seed, "tune",
        );
        let finals: Vec<Final> = items
            .iter()
            .zip(&rows)
            .map(|(it, row)| Final {
                session: it.lane.session,
                config: &it.config,
                hints: &it.hints,
                row,
            })
            .collect();
        let at = TunedAt {
            size: (0, 0, 0),
            precision: Default::default(),
            call: Some(UserKernel::describe_dims(&dims)),
        };
        record_finals(sessions, spaces, &finals, &at, opts, store, writer)?;
        if let Some(db) = db.as_deref_mut() {
            offer_bests(db, sessions, &searched, &finals, &k.id, &at, |tc| {
                Kernel::User(k).fingerprint(tc)
            });
        }
        on_final(&rows);
        result.keep(rows, searched);
        for s in sessions.iter_mut() {
            s.unload();
        }
    }
    Ok(())
}

/// One search per toolchain (each session in its own space, where `workload`
/// gives it something to search), its trace written; returns each search's top
/// configurations `(session, candidate, label)` for the final round, and the
/// searches.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn search_each<'w>(
    sessions: &mut [Session],
    spaces: &[Space],
    workload: impl Fn(usize) -> Option<Workload<'w>>,
    store: &mut Store,
    opts: &TuneOptions,
    progress: &Progress,
    on_search: &mut impl FnMut(&SearchResult),
) -> Result<(
    Vec<(usize, super::space::Candidate, String)>,
    Vec<(usize, SearchResult)>,
)> {
    let mut top = Vec::new();
    let mut searched = Vec::new();
    for (si, space) in spaces.iter().enumerate() {
        let Some(w) = workload(si) else { continue };
        let r = search(&mut sessions[si], space, &w, store, &opts.search, progress)?;
        write_trace(&opts.out, &r, space)?;
        on_search(&r);
        for t in r.ranked().into_iter().take(opts.top) {
            let label = t.candidate.describe_from(r.unchanged());
            top.push((si, t.candidate.clone(), label));
        }
        searched.push((si, r));
    }
    Ok((top, searched))
}

/// One row of a final round, with the configuration it measured.
struct Final<'a> {
    session: usize,
    config: &'a crate::kernel::builtin::Config,
    hints: &'a crate::kernel::builtin::Hints,
    row: &'a Measurement,
}

/// Where a final round ran: a GEMM call's size, precision and tag, or a user
/// kernel's dimensions (`call`, with no size).
struct TunedAt {
    size: (usize, usize, usize),
    precision: crate::gemm::problem::Precision,
    call: Option<String>,
}

/// Writes a final round's rows and appends each to the store, keyed like the
/// search's own records (a user kernel's by its dimensions).
fn record_finals(
    sessions: &[Session],
    spaces: &[Space],
    finals: &[Final],
    at: &TunedAt,
    opts: &TuneOptions,
    store: &mut Store,
    writer: &mut ResultWriter,
) -> Result<()> {
    for f in finals {
        writer.push(f.row.clone())?;
        let c = super::space::Candidate {
            config: f.config.clone(),
            hints: f.hints.clone(),
        };
        let mut key = key_base(&sessions[f.session], &spaces[f.session], at.size).with(&c);
        if at.size == (0, 0, 0) {
            key.call = at.call.clone();
        }
        let row = f.row;
        store.append(Record {
            key,
            phase: Phase::Final,
            status: row.status.clone(),
            gflops: row.gflops.or(row.gbs),
            time: row.time,
            pruned: false,
            screen_k: None,
            resources: row.resources.clone(),
            occupancy: row.occupancy,
            compile_ms: row.compile_ms,
            device_s: 0.0,
            split: Default::default(),
            run: opts.search.run.clone(),
            elapsed_s: None,
            strategy: opts.search.strategy.clone(),
            at_utc: crate::results::utc_now(),
        })?;
    }
    Ok(())
}

/// Offers each searched toolchain's fastest checked configuration of a final
/// round to the database of bests, with the search behind it.
fn offer_bests(
    db: &mut Database,
    sessions: &[Session],
    searched: &[(usize, SearchResult)],
    finals: &[Final],
    kernel: &str,
    at: &TunedAt,
    source: impl Fn(crate::backend::Toolchain) -> String,
) {
    for (si, r) in searched {
        let fastest = finals
            .iter()
            .filter(|f| f.session == *si && f.row.status.is_ok())
            .filter_map(|f| f.row.time.map(|t| (f, t.median_ns)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((f, ns)) = fastest else { continue };
        let info = sessions[*si].backend.borrow().info().clone();
        let (_, said) = db.offer_said(Best {
            kernel: kernel.to_string(),
            toolchain: info.toolchain,
            compiler: info.compiler_version.clone(),
            driver: info.driver_version.clone(),
            m: at.size.0,
            n: at.size.1,
            k: at.size.2,
            precision: at.precision,
            call: at.call.clone(),
            config: f.config.clone(),
            hints: f.hints.clone(),
            gflops: f.row.gflops.or(f.row.gbs).unwrap_or(1e9 / ns),
            vs_vendor: f.row.vs_vendor,
            source: source(info.toolchain),
            strategy: r.strategy.clone(),
            tried: r.tried.len(),
            search_s: Some(r.wall_s),
            space: Some(r.space_size),
            gemmlab: env!("CARGO_PKG_VERSION").to_string(),
            tuned_utc: crate::results::utc_now(),
        });
        println!("database: {said}");
    }
}

/// File name of a search's trace.
pub fn trace_name(r: &SearchResult) -> String {
    if let Some(d) = &r.dims {
        let size: Vec<String> = d.iter().map(|(k, v)| format!("{k}{v}")).collect();
        return format!(
            "search-{}-{}-{}-{}.json",
            r.kernel,
            r.toolchain,
            size.join("_"),
            r.strategy
        );
    }
    // A call other than the plain one (another layout, transposes, precision) is
    // told apart by its description's hash: `tune --suite` searches 4097x33x2049 in
    // column- and row-major order, and the second trace replaced the first.
    let call = r
        .tried
        .first()
        .and_then(|t| t.record.key.call.as_deref())
        .map(|c| format!("-{}", &crate::util::keys::fnv1a(c)[..8]))
        .unwrap_or_default();
    format!(
        "search-{}-{}-{}x{}x{}-{}{call}.json",
        r.kernel, r.toolchain, r.size.0, r.size.1, r.size.2, r.strategy
    )
}

/// Writes a search's trace and, when the search tried its whole space, the
/// strategies replayed over it (`replay-*.json`, see [`write_replay`]).
fn write_trace(dir: &Path, r: &SearchResult, space: &Space) -> Result<()> {
    let io = |e: std::io::Error| Error::invalid(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let trace = Trace {
        search: r.clone(),
        space: SpaceInfo::of(space),
    };
    let text = serde_json::to_string(&trace).map_err(|e| Error::invalid(e.to_string()))?;
    let name = trace_name(r);
    std::fs::write(dir.join(&name), text).map_err(io)?;
    if super::replay::is_complete(r) {
        write_replay(dir, &trace, &name)?;
    }
    Ok(())
}

/// Replays every strategy over a complete search (its trace `file` in `dir`)
/// and writes the record next to it; returns the record's path.
pub fn write_replay(dir: &Path, trace: &Trace, file: &str) -> Result<PathBuf> {
    let rec = super::replay::record(trace, file);
    let path = dir.join(crate::results::replay_file(file));
    let text = serde_json::to_string(&rec).map_err(|e| Error::invalid(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    Ok(path)
}

/// Every readable search trace in a result directory with its file name, and
/// why the others could not be read: one bad file hides nothing else.
pub fn load_traces(dir: &Path) -> (Vec<(String, Trace)>, Vec<String>) {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut names: Vec<String> = (entries.filter_map(|e| e.file_name().into_string().ok()))
        .filter(|n| n.starts_with("search-") && n.ends_with(".json"))
        .collect();
    names.sort();
    let (mut traces, mut bad) = (Vec::new(), Vec::new());
    for name in names {
        let p = dir.join(&name);
        let read = std::fs::read_to_string(&p).map_err(|e| e.to_string());
        let parsed =
            |t: String| serde_json::from_str(&t).map_err(|e| format!("{}: {e}", p.display()));
        match read.and_then(parsed) {
            Ok(t) => traces.push((name, t)),
            Err(e) => bad.push(format!("{}: {e}", p.display())),
        }
    }
    (traces, bad)
}
