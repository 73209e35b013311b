//! The measuring core every kernel goes through: built-in GEMMs and users' spec
//! kernels alike. A [`Workload`] is one problem point (a GEMM size with its f64
//! reference, or a spec's dimensions with its reference outputs); it knows how to
//! make one configuration ready on a session and what its rows say. The core does
//! the rest once: prepare every item, time them interleaved (A B C A B C ...)
//! with the vendor BLAS beside them where the workload has one, read the clocks
//! around the timed window, and turn each outcome into a row.

use super::isolate;
use crate::backend::{Backend, BuildReport, DeviceInfo, KernelResources};
use crate::error::Result;
use crate::gemm::driver::{Attempt, Session, Status, VendorCall, VendorRunner};
use crate::measure::clocks::ClockWindow;
use crate::measure::{interleaved, CacheState, Plan, Stats, Timed};
use crate::occupancy;
use crate::results::Measurement;

/// Rates a timed run reaches: GFLOP/s (median and best) and GB/s, where the
/// workload states its work in that unit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rates {
    pub gflops: Option<f64>,
    pub gflops_best: Option<f64>,
    pub gbs: Option<f64>,
}

/// One problem point as the measuring core sees it, for items of type `I` (one
/// configuration of a kernel on one session each).
pub trait Workload<I> {
    /// A configuration compiled, set up and checked once: ready to time.
    type Ready;

    /// Which session an item runs on.
    fn session(&self, item: &I) -> usize;

    /// Compiles, sets up, runs once on poisoned outputs and checks. A kernel-level
    /// failure is the attempt's status, never an error: the run goes on.
    fn prepare(&self, sessions: &mut [Session], item: &I, cold: bool) -> Attempt<Self::Ready>;

    /// `count` timed launches of a ready item; device nanoseconds in all.
    fn launch(&self, session: &Session, ready: &Self::Ready, count: usize) -> Result<u64>;

    /// Evicts the item's data from the caches before a cold repetition.
    fn flush(&self, session: &Session, ready: &Self::Ready) -> Result<()>;

    /// Frees what preparing made.
    fn release(&self, session: &Session, ready: Self::Ready);

    /// The item's row before anything ran: kernel, size, configuration, label.
    fn row(&self, experiment: &str, session: &Session, item: &I, plan: &Plan) -> Measurement;

    /// The measured entry point's resources in a build, and the work-items per
    /// work-group its occupancy is computed for.
    fn resources(
        &self,
        item: &I,
        build: &BuildReport,
        info: &DeviceInfo,
    ) -> (Option<KernelResources>, Option<usize>);

    /// What only a ready item tells its row (padding, pre/post-processing time).
    fn fill_ready(&self, _row: &mut Measurement, _ready: &Self::Ready) {}

    /// The rates of a timed item.
    fn rates(&self, ready: &Self::Ready, stats: &Stats) -> Rates;

    /// The vendor BLAS's call on this point, checked, to be timed inside the
    /// interleaved repetitions: `(session, call)`. None where there is none.
    fn paired_vendor(&self, _sessions: &mut [Session], _cold: bool) -> Option<(usize, VendorCall)> {
        None
    }
}

/// Times a ready item through the shared method.
struct Runner<'a, W: Workload<I>, I> {
    workload: &'a W,
    session: &'a Session,
    ready: &'a W::Ready,
    _item: std::marker::PhantomData<fn(&I)>,
}

impl<W: Workload<I>, I> Timed for Runner<'_, W, I> {
    fn run_batch(&mut self, count: usize) -> Result<u64> {
        self.workload.launch(self.session, self.ready, count)
    }

    fn flush(&mut self) -> Result<()> {
        self.workload.flush(self.session, self.ready)
    }
}

/// Several items at one point, all their repetitions interleaved so drift falls
/// on all alike; one row per item, in order. `vendor` holds the vendor BLAS's
/// rows at this point (empty where none was measured): where it ran, it is timed
/// again inside the repetitions and every row's ratio is against that.
pub fn measure<W: Workload<I>, I>(
    sessions: &mut [Session],
    workload: &W,
    items: &[I],
    plan: &Plan,
    experiment: &str,
    vendor: &[Measurement],
) -> Vec<Measurement> {
    let cold = plan.cache == CacheState::Cold;
    let named: Vec<(String, String)> = items
        .iter()
        .map(|it| {
            let s = &sessions[workload.session(it)];
            let r = workload.row(experiment, s, it, plan);
            (isolate::row_key(&r), row_what(&r))
        })
        .collect();
    // A point an earlier process of this run measured whole (before a crash
    // elsewhere) keeps its rows: nothing is measured twice.
    let earlier: Vec<Option<Measurement>> =
        named.iter().map(|(k, _)| isolate::earlier(k)).collect();
    if !earlier.is_empty() && earlier.iter().all(Option::is_some) {
        return earlier.into_iter().flatten().collect();
    }
    let attempts: Vec<Attempt<W::Ready>> = items
        .iter()
        .zip(&named)
        .map(|(it, (key, what))| prepare_isolated(sessions, workload, it, key, what, cold))
        .collect();
    let paired_call = match vendor.iter().any(|v| v.status.is_ok())
        && attempts.iter().any(|a| a.prepared.is_some())
    {
        true => workload.paired_vendor(sessions, cold),
        false => None,
    };
    let mut runners: Vec<Runner<W, I>> = items
        .iter()
        .zip(&attempts)
        .filter_map(|(it, a)| {
            a.prepared.as_ref().map(|ready| Runner {
                workload,
                session: &sessions[workload.session(it)],
                ready,
                _item: std::marker::PhantomData,
            })
        })
        .collect();
    let mut paired = paired_call.map(|(i, call)| VendorRunner {
        session: &sessions[i],
        call,
    });
    let mut timed_refs: Vec<&mut dyn Timed> =
        runners.iter_mut().map(|r| r as &mut dyn Timed).collect();
    if let Some(v) = paired.as_mut() {
        timed_refs.push(v as &mut dyn Timed);
    }
    let ready_keys: Vec<String> = (named.iter().map(|(k, _)| k).zip(&attempts))
        .filter(|(_, a)| a.prepared.is_some())
        .map(|(k, _)| k.clone())
        .collect();
    isolate::begin_timing(
        &ready_keys,
        &format!("{experiment}: the kernels of one point"),
    );
    let before = crate::gemm::driver::read_clocks(sessions);
    let mut timed = interleaved(&mut timed_refs, plan);
    let after = crate::gemm::driver::read_clocks(sessions);
    isolate::end();
    drop(timed_refs);
    drop(runners);
    let vendor_paired = match paired {
        Some(v) => {
            v.release();
            timed.pop().and_then(|t| t.ok())
        }
        None => None,
    };
    let vendor_gflops = vendor
        .iter()
        .find(|v| v.status.is_ok())
        .and_then(|v| v.gflops);
    let mut timed = timed.into_iter();
    let mut rows = Vec::with_capacity(items.len());
    for (it, a) in items.iter().zip(attempts) {
        let i = workload.session(it);
        let s = &sessions[i];
        let mut row = workload.row(experiment, s, it, plan);
        row.status = a.status.clone();
        row.check = a.check.clone();
        if let Some(b) = &a.build {
            fill_build(&mut row, workload, it, s, b);
        }
        if let Some(ready) = a.prepared {
            row.clocks = ClockWindow::new(before[i].clone(), after[i].clone());
            workload.fill_ready(&mut row, &ready);
            match timed.next() {
                Some(Ok(stats)) => {
                    let r = workload.rates(&ready, &stats);
                    row.gflops = r.gflops;
                    row.gflops_best = r.gflops_best;
                    row.gbs = r.gbs;
                    row.vs_vendor = match (vendor_paired, row.gflops, vendor_gflops) {
                        (Some(v), _, _) => Some(v.median_ns / stats.median_ns),
                        (None, Some(g), Some(v)) if v > 0.0 => Some(g / v),
                        _ => None,
                    };
                    row.vendor_paired = vendor_paired;
                    row.time = Some(stats);
                }
                Some(Err(e)) => row.status = Status::LaunchError(e.to_string()),
                None => row.status = Status::LaunchError("internal: no timing result".into()),
            }
            workload.release(s, ready);
        }
        rows.push(row);
    }
    rows
}

/// "xgemm (variant) on opencl at 1024" for the person watching.
fn row_what(r: &Measurement) -> String {
    let variant = r
        .variant
        .as_deref()
        .map_or(String::new(), |v| format!(" ({v})"));
    format!(
        "{}{variant} on {} at {}",
        r.kernel,
        r.toolchain,
        r.size_label()
    )
}

/// Prepares one item where a crash, a hang or a lost device costs its row only
/// (see `isolate`): an item an earlier process of this run failed on is answered
/// with that failure.
fn prepare_isolated<W: Workload<I>, I>(
    sessions: &mut [Session],
    workload: &W,
    item: &I,
    key: &str,
    what: &str,
    cold: bool,
) -> Attempt<W::Ready> {
    match isolate::guard(key, what, || workload.prepare(sessions, item, cold)) {
        Ok(mut a) => {
            let session = &sessions[workload.session(item)];
            let found = isolate::sanitizer_news();
            if isolate::sanitizing().is_some() {
                // Under compute-sanitizer: the checked run only, never timed.
                if let Some(ready) = a.prepared.take() {
                    workload.release(session, ready);
                }
                if !found.is_empty() {
                    let report = found
                        .iter()
                        .take(8)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" | ");
                    a.status = Status::OutOfBounds(format!("compute-sanitizer memcheck: {report}"));
                }
            }
            isolate::after_failure(key, &a.status, session);
            a
        }
        Err(status) => Attempt {
            prepared: None,
            status,
            build: None,
            check: None,
        },
    }
}

/// What the compiler said about the measured entry point, on its row.
fn fill_build<W: Workload<I>, I>(
    row: &mut Measurement,
    workload: &W,
    item: &I,
    s: &Session,
    b: &BuildReport,
) {
    let info = s.backend.borrow().info().clone();
    if let Some(c) = &b.compiler {
        row.compiler = Some(c.clone());
    }
    let (resources, threads) = workload.resources(item, b, &info);
    row.resources = resources;
    row.compile_ms = Some(b.compile_ms);
    row.build_notes = b.notes.clone();
    row.ptx_mix = b.ptx.as_deref().map(crate::backend::ptx::instruction_mix);
    if let (Some(dir), Some(ptx)) = (&s.keep_ptx, &b.ptx) {
        row.ptx_file = keep_ptx(dir, row, ptx);
    }
    if let (Some(r), Some(t)) = (&row.resources, threads) {
        row.occupancy = occupancy::for_kernel(&info, r, t);
    }
}

/// Writes a build's PTX under `dir` (named by kernel, toolchain and content hash,
/// so identical listings are stored once) and returns its path relative to the
/// result directory. A write failure costs the file, not the measurement.
pub(crate) fn keep_ptx(dir: &std::path::Path, row: &Measurement, ptx: &str) -> Option<String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ptx.hash(&mut h);
    let variant = row
        .variant
        .as_deref()
        .map_or(String::new(), |v| format!("-{v}"));
    let name = format!(
        "{}-{}{variant}-{:016x}.ptx",
        row.kernel,
        row.toolchain,
        h.finish()
    );
    let path = dir.join(&name);
    if !path.exists() {
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, ptx)) {
            eprintln!("note: could not keep PTX in {}: {e}", path.display());
            return None;
        }
    }
    let folder = dir
        .file_name()
        .map_or("ptx".into(), |f| f.to_string_lossy().into_owned());
    Some(format!("{folder}/{name}"))
}
