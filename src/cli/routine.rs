//! `gemmlab gemm`: the complete GEMM routine on one BLAS call per size, or on
//! every call of a suite file, the way a library user calls it (the kernel chosen
//! per call, pre- and post-processing included), checked against the f64
//! reference and timed next to the vendor BLAS with the same arguments. An
//! OpenCL routine is timed next to cuBLAS too, from the CUDA session of the same
//! device when the run has one.

use std::path::PathBuf;

use clap::Args;

use gemmlab::backend::{Buffer, GemmCall};
use gemmlab::experiment::failed_row;
use gemmlab::gemm::check::check_widened;
use gemmlab::gemm::driver::Status;
use gemmlab::gemm::driver::{read_c, vendor_call, Session};
use gemmlab::gemm::problem::{Matrix, Problem};
use gemmlab::gemm::{parse_size, Operands, Reference};
use gemmlab::kernel::builtin::{Config, Hints};
use gemmlab::measure::{Plan, Stats};
use gemmlab::results::bests::Database;
use gemmlab::results::{Environment, Measurement, ResultWriter};
use gemmlab::routine::shape::{call_label, ShapeClass};
use gemmlab::routine::suite::Suite;
use gemmlab::routine::ROUTINE;
use gemmlab::routine::{upload_operand, Gemm, Selection};
use gemmlab::{Backend, Error, Result};

use super::compare::{seed_or_random, Auto, DeviceArgs, ProblemArgs};

#[derive(Args, Debug)]
pub struct GemmArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Sizes: N or MxNxK (0 allowed, as in BLAS), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub sizes: Vec<String>,
    /// Every call of a suite file instead of --sizes (one per line: MxNxK [col|row]
    /// [NN|NT|TN|TT]; suites/routine.txt is the default suite): a table per toolchain
    /// with the routine's time next to cuBLAS's and the geometric mean of the ratios.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Timed samples per call (after a checked call and a warm-up call).
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    /// Calls per timed sample: auto (calls back to back filling ~2 ms samples, each
    /// timed as one device span, for the routine and the vendor BLAS alike) or a
    /// fixed count (1: one call per sample, the idle device's latencies and all).
    #[arg(long, default_value = "auto", value_parser = |s: &str| gemmlab::measure::parse_batch(s).map(Auto))]
    pub batch: Auto<usize>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Use the kernels' published defaults instead of the tuned database.
    #[arg(long)]
    pub published: bool,
    /// Let f32 calls run FP32 emulation where `tune --suite --fp32-emulation` found
    /// it faster: 3xTF32 on the TF32 tensor cores (family `tc`), FP32-accurate as
    /// `gemmlab accuracy` measures it but not FP32 arithmetic (off by default, as
    /// cuBLAS's emulated math modes are).
    #[arg(long)]
    pub fp32_emulation: bool,
    /// How a call no entry was tuned for is given its kernel: `measure` times the
    /// nearest tuned shape's entry, the next nearest and the cost model's best-ranked
    /// configurations of other entries (five in all; each SIMT kernel's nearest entry
    /// re-tiled for the call where the model predicts it 15% faster; for a call with a
    /// side of C at most 64, also the `thin` kernel fitted to its shape) on the call's
    /// first run, in two rounds, on a scratch C, and keeps the fastest for the call, as
    /// cuDNN's benchmark mode does
    /// (the first call takes their compiles and runs; the timed calls do not); `model`
    /// ranks every tuned configuration, each with the other splits of K its kernel
    /// takes, by the cost model calibrated on the entry's own measurement, and takes
    /// its pick where it predicts a clear gain over the nearest tuned shape; `nearest`
    /// takes the nearest tuned shape's entry as it is.
    #[arg(long, default_value = "measure", value_parser = ["measure", "model", "nearest"])]
    pub selection: String,
    /// Kernels the routine does not choose (comma-separated ids, e.g. thin,simtdirect):
    /// their database entries are passed over and none of their configurations is
    /// fitted or timed; for comparing the routine with and without a kernel.
    #[arg(long, value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Force one kernel: direct or indirect (default: chosen per call).
    #[arg(long, value_parser = ["direct", "indirect"])]
    pub path: Option<String>,
    /// The database of bests (tuned configurations, crossover, per-call choices):
    /// a folder (the device's file in it) or one database file.
    #[arg(long, default_value = gemmlab::results::bests::DEFAULT_DIR)]
    pub db: PathBuf,
    /// -v: each call's chosen configuration on its line; -vv: also why it was chosen.
    #[arg(long, short, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Also write every call's rows (the routine's, with the kernel and configuration
    /// it chose, and the vendor BLAS's) as result records in this folder, call by
    /// call: `gemmlab report` turns them into "The routine against cuBLAS across shapes".
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// "N", "MxNxK", with zeros allowed (a BLAS call may be empty).
fn parse_dims(s: &str) -> Result<(usize, usize, usize)> {
    let bad = || Error::invalid(format!("size '{s}': expected N or MxNxK"));
    let v: Vec<usize> = s
        .trim()
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    match v[..] {
        [0] => Ok((0, 0, 0)),
        [m, n, k] if m == 0 || n == 0 || k == 0 => Ok((m, n, k)),
        [_] | [_, _, _] => parse_size(s),
        _ => Err(bad()),
    }
}

/// The database a session's routine reads: the device's file in a folder, or the
/// file given, which must be this device's.
pub fn database_for(db: &std::path::Path, device: &str) -> Result<Database> {
    if db.is_file() {
        let d = Database::read(db)?;
        d.check_device(db, device)?;
        Ok(d)
    } else {
        Database::load(db, device)
    }
}

/// The calls to run: the suite's, or --sizes with the command line's layout and transposes.
fn calls(args: &GemmArgs) -> Result<Vec<Problem>> {
    let template = args.problem.template()?;
    if let Some(path) = &args.suite {
        let suite = Suite::load(path)?;
        return suite
            .calls
            .iter()
            .map(|c| {
                let mut t = template;
                t.layout = c.layout;
                t.trans_a = c.trans_a;
                t.trans_b = c.trans_b;
                t.at(c.m, c.n, c.k)
            })
            .collect();
    }
    let sizes: Vec<(usize, usize, usize)> = args
        .sizes
        .iter()
        .map(|s| parse_dims(s))
        .collect::<Result<_>>()?;
    let template = args.problem.template_for(&sizes)?;
    sizes
        .iter()
        .map(|&(m, n, k)| template.at(m, n, k))
        .collect()
}

/// One call on one toolchain: what ran and how long it took.
pub(crate) struct Timed {
    pub kernel: String,
    /// The configuration the routine chose (empty for a quick return).
    pub config: Config,
    /// The switches and register cap it compiled the kernel with.
    pub hints: Hints,
    pub why: String,
    pub rel_err: f64,
    /// The checked call's check (method, passed, error measures).
    pub check: gemmlab::gemm::check::CheckReport,
    pub routine: Option<Stats>,
    pub parts_ns: (u64, u64, u64),
}

pub fn run(args: GemmArgs) -> Result<()> {
    let problems = calls(&args)?;
    // Kernel names checked once, before any device is opened.
    let exclude: Vec<String> = (args.exclude.iter())
        .map(|k| gemmlab::kernel::builtin::find(k).map(|spec| spec.id.to_string()))
        .collect::<gemmlab::Result<_>>()?;
    let mut sessions = args.device.sessions()?;
    let seed = seed_or_random(args.seed);
    println!("seed {seed}");
    let plan = Plan {
        warmup: 1,
        reps: args.reps,
        batch: args.batch.0,
        ..Default::default()
    };
    let mut writer = match &args.out {
        Some(dir) => Some(ResultWriter::create(
            dir,
            environment(&args, &sessions, seed, plan),
        )?),
        None => None,
    };
    let mut gemms = Vec::new();
    for session in &sessions {
        gemms.push(routine_for(&args, session, &sessions, &exclude, &problems)?);
    }
    // rows[call][session]; the vendor's time per call, from whichever session has one.
    let mut rows: Vec<Vec<Result<Timed>>> = Vec::new();
    let mut vendor: Vec<Option<Vendor>> = Vec::new();
    for p in &problems {
        let call = time_call(&mut sessions, &mut gemms, p, seed, &plan);
        if args.suite.is_none() {
            print_lines(&sessions, p, &call, args.verbose);
        }
        if let Some(w) = writer.as_mut() {
            write_call(w, &sessions, p, &call)?;
        }
        rows.push(call.row);
        vendor.push(call.vendor);
    }
    if let Some(w) = writer {
        let dir = args.out.clone().unwrap_or_default();
        w.finish()?;
        println!("results in {}", dir.display());
    }
    if args.suite.is_some() {
        for (i, session) in sessions.iter().enumerate() {
            let tc = session.backend.borrow().info().toolchain;
            print_table(tc, &problems, &rows, &vendor, i, args.verbose);
        }
    }
    for (session, gemm) in sessions.iter().zip(gemms) {
        gemm.release(session);
    }
    // The first failure is the command's (exit 1 for a failed measurement).
    for r in rows.into_iter().flatten() {
        r?;
    }
    Ok(())
}

/// The environment of the run's result records, with what the experiment measures.
fn environment(args: &GemmArgs, sessions: &[Session], seed: u64, plan: Plan) -> Environment {
    let infos = sessions
        .iter()
        .map(|s| s.backend.borrow().info().clone())
        .collect();
    let mut env = Environment::capture(infos, seed, plan);
    env.record_clocks(sessions);
    env.notes.push(
        "experiment \"routine\": the time of the whole GEMM call (packing, kernels, unpacking), \
         median of --reps samples after a checked call; a sample is a batch of calls back to back \
         timed as one device span, divided by its size (the record's time.batch; --batch)"
            .into(),
    );
    if args.fp32_emulation {
        env.notes.push(
            "--fp32-emulation: f32 calls may run 3xTF32 on the TF32 tensor cores (kernel tc)"
                .into(),
        );
    }
    env
}

/// The routine of one session as the arguments set it up (published or tuned,
/// forced path, selection, exclusions), after a line that says so.
fn routine_for(
    args: &GemmArgs,
    session: &Session,
    sessions: &[Session],
    exclude: &[String],
    problems: &[Problem],
) -> Result<Gemm> {
    let info = session.backend.borrow().info().clone();
    let mut gemm = if args.published {
        Gemm::published()?
    } else {
        Gemm::tuned(&database_for(&args.db, &info.name)?, info.toolchain)?
    };
    gemm.force = match args.path.as_deref() {
        Some("direct") => Some(gemmlab::routine::Path::Direct),
        Some("indirect") => Some(gemmlab::routine::Path::Indirect),
        _ => None,
    };
    gemm.fp32_emulation = args.fp32_emulation;
    gemm.exclude = exclude.to_vec();
    gemm.selection = match args.selection.as_str() {
        "nearest" => Selection::Nearest,
        "measure" => Selection::Measure,
        _ => Selection::Model,
    };
    gemm.device = Some(gemmlab::routine::fit::model_device(session, sessions));
    let source = gemm
        .tuning(
            problems
                .first()
                .map_or(gemmlab::Precision::F32, |p| p.precision),
        )
        .map(|t| t.source.clone())
        .unwrap_or_default();
    let calls = match gemm.tuned_calls() {
        0 => String::new(),
        n => format!("; {n} tuned calls"),
    };
    let emulation = match args.fp32_emulation {
        true => "; FP32 emulation allowed",
        false => "",
    };
    let dependent = match info.dependent_launch {
        true => "; dependent launches",
        false => "",
    };
    println!(
        "{} via {} ({source}{calls}{emulation}{dependent})",
        info.name, info.toolchain
    );
    Ok(gemm)
}

/// One call on every session.
struct CallRow {
    /// Per session.
    row: Vec<Result<Timed>>,
    /// The vendor BLAS's time, from the first session that has one.
    vendor: Option<Vendor>,
    /// The session whose vendor BLAS timed the call (its row names it).
    v_session: usize,
    /// The sessions' clocks before the call.
    before: Vec<Option<gemmlab::measure::clocks::ClockReading>>,
}

/// Checks and times call `p` on every session, the vendor BLAS on the first that has one.
fn time_call(
    sessions: &mut [Session],
    gemms: &mut [Gemm],
    p: &Problem,
    seed: u64,
    plan: &Plan,
) -> CallRow {
    let ops = Operands::for_problem(*p, seed);
    let reference = Reference::cpu(&ops);
    let mut row = Vec::new();
    let mut v = None;
    let mut v_session = 0;
    let before = gemmlab::gemm::driver::read_clocks(sessions);
    for (i, (session, gemm)) in sessions.iter_mut().zip(gemms.iter_mut()).enumerate() {
        let r = one(session, gemm, &ops, &reference, plan, v.is_none());
        row.push(r.map(|(t, vt)| {
            if v.is_none() && vt.is_some() {
                (v, v_session) = (vt, i);
            }
            t
        }));
    }
    CallRow {
        row,
        vendor: v,
        v_session,
        before,
    }
}

/// A line per session for call `p`.
fn print_lines(sessions: &[Session], p: &Problem, call: &CallRow, verbose: u8) {
    for (session, r) in sessions.iter().zip(&call.row) {
        let tc = session.backend.borrow().info().toolchain;
        match r {
            Ok(t) => println!(
                "  {tc} {}: {}",
                p.describe(),
                line(t, p, call.vendor.as_ref(), verbose)
            ),
            Err(e) => println!("  {tc} {}: error: {e}", p.describe()),
        }
    }
}

/// Writes call `p`'s records, each with its session's clocks over the call.
fn write_call(
    w: &mut ResultWriter,
    sessions: &[Session],
    p: &Problem,
    call: &CallRow,
) -> Result<()> {
    let after = gemmlab::gemm::driver::read_clocks(sessions);
    let clocks: Vec<_> = (call.before.iter().cloned().zip(after))
        .map(|(b, a)| gemmlab::measure::clocks::ClockWindow::new(b, a))
        .collect();
    let vendor = call.vendor.as_ref().map(|v| (v, call.v_session));
    for r in records(sessions, p, &call.row, vendor, &clocks) {
        w.push(r)?;
    }
    Ok(())
}

/// The result records of one call: each session's routine row (experiment
/// "routine": the whole call's time, its parts on the checked call, the kernel
/// and configuration chosen, why in the label) and the vendor BLAS's row.
fn records(
    sessions: &[Session],
    p: &Problem,
    row: &[Result<Timed>],
    vendor: Option<(&(Stats, String), usize)>,
    clocks: &[Option<gemmlab::measure::clocks::ClockWindow>],
) -> Vec<Measurement> {
    let size = (p.m, p.n, p.k);
    let mut out = Vec::new();
    let base = |s: &Session, kernel: &str, status: Status| {
        let be = s.backend.borrow();
        let info = be.info();
        let mut r = failed_row(
            ROUTINE,
            &info.name,
            &info.id,
            info.toolchain,
            kernel,
            status,
            size,
        );
        r.problem = Some(*p);
        r
    };
    for (i, (s, r)) in sessions.iter().zip(row).enumerate() {
        let mut rec = match r {
            Err(e) => base(s, "routine", Status::from_error(e)),
            Ok(t) => {
                let mut rec = base(s, &t.kernel, Status::Ok);
                rec.check = Some(t.check.clone());
                rec.config = t.config.clone();
                rec.hints = t.hints.clone();
                rec.label = Some(t.why.clone());
                rec.pre_ns = Some(t.parts_ns.0);
                rec.post_ns = Some(t.parts_ns.2);
                if let Some(st) = &t.routine {
                    rec.gflops = Some(p.flops() / st.median_ns);
                    rec.gflops_best = Some(p.flops() / st.min_ns);
                    rec.vs_vendor = vendor.map(|((v, _), _)| v.median_ns / st.median_ns);
                    rec.time = Some(*st);
                }
                rec
            }
        };
        rec.clocks = clocks.get(i).cloned().flatten();
        out.push(rec);
    }
    if let Some(((v, _), i, s)) = vendor.and_then(|(v, i)| Some((v, i, sessions.get(i)?))) {
        let mut rec = base(s, "cublas", Status::Ok);
        rec.clocks = clocks.get(i).cloned().flatten();
        rec.gflops = Some(p.flops() / v.median_ns);
        rec.gflops_best = Some(p.flops() / v.min_ns);
        rec.vs_vendor = Some(1.0);
        rec.time = Some(*v);
        out.push(rec);
    }
    out
}

/// "BK=8 ... published + ASYNC_COPY=1": the configuration with its hints.
fn chosen(t: &Timed) -> String {
    match (t.config.0.is_empty(), t.hints.is_published()) {
        (true, _) => String::new(),
        (false, true) => t.config.describe(),
        (false, false) => format!("{} {}", t.config.describe(), t.hints.describe(true)),
    }
}

/// What -v and -vv add to a call's line: its configuration on the line, why on the next.
fn said(t: &Timed, verbose: u8) -> String {
    let mut s = String::new();
    let c = chosen(t);
    if verbose >= 1 && !c.is_empty() {
        s += &format!(" [{c}]");
    }
    if verbose >= 2 {
        s += &format!("\n      why: {}", t.why);
    }
    s
}

fn line(t: &Timed, p: &Problem, vendor: Option<&(Stats, String)>, verbose: u8) -> String {
    let mut s = format!("{}, check ok ({:.1e})", t.kernel, t.rel_err);
    if let Some(st) = &t.routine {
        let (pre, k, post) = t.parts_ns;
        s += &format!(
            ", routine {:.1} us median ({:.1} GFLOP/s; pre {:.1} + kernel {:.1} + post {:.1} us on the checked call)",
            st.median_ns / 1e3,
            p.flops() / st.median_ns,
            pre as f64 / 1e3,
            k as f64 / 1e3,
            post as f64 / 1e3
        );
        if let Some((vs, blas)) = vendor {
            s += &format!(
                "; {blas} {:.1} us ({:.2} x its speed)",
                vs.median_ns / 1e3,
                vs.median_ns / st.median_ns
            );
        }
    }
    s + &said(t, verbose)
}

fn print_table(
    tc: gemmlab::Toolchain,
    problems: &[Problem],
    rows: &[Vec<Result<Timed>>],
    vendor: &[Option<(Stats, String)>],
    col: usize,
    verbose: u8,
) {
    let blas = vendor
        .iter()
        .flatten()
        .map(|(_, b)| b.clone())
        .next()
        .unwrap_or_else(|| "vendor BLAS".into());
    println!("\nthe {tc} routine, every call checked; time of the whole call (median; calls back to back in ~2 ms samples, one device span each), {blas} with the same arguments in the same run, timed alike");
    println!(
        "  {:<22} {:<8} {:<12} {:>10} {:>10} {:>10} {:>7}",
        "call", "class", "kernel", "us", "GFLOP/s", "blas us", "x blas"
    );
    let mut logs = Vec::new();
    let mut lowest: Option<(f64, String)> = None;
    for (i, p) in problems.iter().enumerate() {
        let call = format!("{}x{}x{} {}", p.m, p.n, p.k, call_label(p));
        let class = ShapeClass::of(p.m, p.n, p.k).as_str();
        match &rows[i][col] {
            Err(e) => println!("  {call:<22} {class:<8} error: {e}"),
            Ok(t) => {
                let us = t.routine.as_ref().map(|s| s.median_ns / 1e3);
                let v = vendor[i].as_ref().map(|(s, _)| s.median_ns);
                let ratio = t.routine.as_ref().zip(v).map(|(s, v)| v / s.median_ns);
                if let Some(r) = ratio {
                    logs.push(r.ln());
                    if lowest.as_ref().is_none_or(|(l, _)| r < *l) {
                        lowest = Some((r, call.clone()));
                    }
                }
                let f =
                    |x: Option<f64>, d: usize| x.map_or("-".to_string(), |x| format!("{x:.d$}"));
                println!(
                    "  {call:<22} {class:<8} {:<12} {:>10} {:>10} {:>10} {:>7}{}",
                    kernel_label(t),
                    f(us, 1),
                    f(t.routine.as_ref().map(|s| p.flops() / s.median_ns), 0),
                    f(v.map(|v| v / 1e3), 1),
                    f(ratio, 2),
                    said(t, verbose)
                );
            }
        }
    }
    if logs.is_empty() {
        println!("  no {blas} timings: run the CUDA toolchain beside it (--backends cuda,{tc}) for the ratios");
    } else {
        let g = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        let (low, at) = lowest.unwrap_or_default();
        println!(
            "  geometric mean {g:.3} x {blas} over {} calls; lowest {low:.2} ({at})",
            logs.len()
        );
    }
}

/// The kernel that ran, "(3xTF32)" added where it emulated FP32.
fn kernel_label(t: &Timed) -> String {
    match gemmlab::kernel::builtin::emulates_fp32(&t.kernel, &t.config, &t.hints) {
        true => format!("{} (3xTF32)", t.kernel),
        false => t.kernel.clone(),
    }
}

/// Checks, then times the routine and, where asked and the session has one, the
/// vendor BLAS on the same buffers.
pub(crate) fn one(
    session: &mut Session,
    gemm: &mut Gemm,
    ops: &Operands,
    reference: &Reference,
    plan: &Plan,
    want_vendor: bool,
) -> Result<(Timed, Option<(Stats, String)>)> {
    let p = ops.problem;
    let a = upload_operand(session, ops, Matrix::A, f32::NAN)?;
    let b = upload_operand(session, ops, Matrix::B, f32::NAN)?;
    let c = upload_operand(session, ops, Matrix::C, gemmlab::gemm::data::C_GAP)?;
    let result = (|| -> Result<(Timed, Option<(Stats, String)>)> {
        let first = gemm.run(session, &p, a, b, c)?;
        // After the first run: `--selection measure` learns its choice there.
        let choice = gemm.choose(&p)?;
        let (logical, gap) = read_c(session, c, &p)?;
        let mut report = check_widened(p.m, &logical, reference, p.precision);
        if let Some(at) = gap {
            report.passed = false;
            report.method = Some(format!(
                "element {at} of C's buffer, outside the matrix, changed"
            ));
        }
        if !report.passed {
            return Err(Error::Check {
                what: format!("the GEMM routine on {}", p.describe()),
                detail: report.summary(),
            });
        }
        let call = vendor_call(&p, a, b, c);
        let (routine, vendor) = match first.kernel.is_some() {
            true => time_with_vendor(session, gemm, &p, [a, b, c], &call, plan, want_vendor)?,
            false => (None, None),
        };
        // No kernel ran: nothing to do, or only C = beta C (K = 0 or alpha = 0).
        let (none, why) = match p.is_noop() || p.beta == 1.0 {
            true => ("quick return", "BLAS's quick return: nothing to multiply"),
            false => (
                "C = beta C",
                "K = 0 or alpha = 0: C scaled by beta, nothing to multiply",
            ),
        };
        let timed = Timed {
            kernel: first.kernel.clone().unwrap_or_else(|| none.into()),
            config: if first.kernel.is_some() {
                choice.config.clone()
            } else {
                Config::default()
            },
            hints: if first.kernel.is_some() {
                choice.hints.clone()
            } else {
                Hints::default()
            },
            why: if first.kernel.is_some() {
                choice.why
            } else {
                why.into()
            },
            rel_err: report.rel_frobenius,
            check: report.clone(),
            routine,
            parts_ns: (first.pre_ns, first.kernel_ns, first.post_ns),
        };
        Ok((timed, vendor))
    })();
    let mut be = session.backend.borrow_mut();
    for x in [a, b, c] {
        be.free(x);
    }
    result
}

/// The vendor BLAS's time for a call, and the library's name and version.
type Vendor = (Stats, String);

/// The routine's time per call and, where `want_vendor`, the vendor BLAS's for
/// the same call on the same buffers, as `measure` times kernels: a warm call
/// of each sizes its batches (`plan.batch_to_fill`), then each sample is a batch of
/// back-to-back calls as one device span, divided by its size; the routine's
/// samples alternate with the vendor's, so drift falls on both alike.
fn time_with_vendor(
    session: &mut Session,
    gemm: &mut Gemm,
    p: &Problem,
    bufs: [Buffer; 3],
    call: &GemmCall,
    plan: &Plan,
    want_vendor: bool,
) -> Result<(Option<Stats>, Option<Vendor>)> {
    let vendor = |session: &Session, count: usize| -> Result<Option<u64>> {
        match want_vendor {
            true => session.backend.borrow_mut().vendor_gemm(call, count),
            false => Ok(None),
        }
    };
    // The routine's checked call warmed it up; the vendor's first call for a shape
    // loads and chooses its kernel, so a second one sizes its batches.
    let n = plan.batch_to_fill(gemm.time_calls(session, p, bufs, 1)? as f64);
    vendor(session, 1)?;
    let nv = vendor(session, 1)?.map(|t| plan.batch_to_fill(t as f64));
    let (mut times, mut v) = (Vec::new(), Vec::new());
    // Each sample follows an untimed call of its own: what the other one left
    // behind (caches, the host's state) is not timed into it.
    for _ in 0..plan.reps.max(1) {
        gemm.time_calls(session, p, bufs, 1)?;
        times.push(gemm.time_calls(session, p, bufs, n)? as f64 / n as f64);
        if let Some(nv) = nv {
            vendor(session, 1)?;
            if let Some(t) = vendor(session, nv)? {
                v.push(t as f64 / nv as f64);
            }
        }
    }
    let batched = |st: Stats, b: usize| Stats { batch: b, ..st };
    let routine = Stats::from_sample_ns(&times).map(|st| batched(st, n));
    // Named after its first call: the library is loaded on demand.
    let blas = session.backend.borrow().vendor_blas();
    let vendor = Stats::from_sample_ns(&v).zip(nv).map(|(st, nv)| {
        (
            batched(st, nv),
            blas.unwrap_or_else(|| "vendor BLAS".into()),
        )
    });
    Ok((routine, vendor))
}
