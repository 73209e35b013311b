//! `gemmlab tune --suite FILE`: tunes the GEMM routine for every call of a suite.
//! Per call, each family that can run it (by default the direct kernel, the
//! indirect one and the SIMT family, packed and in place) is searched with the
//! tuner at that shape, layout and transposes, seeded with the configurations
//! chosen for the calls nearest to it; then the whole routine (packing, kernels,
//! unpacking) is timed with each family's best and with the neighbours' choices,
//! checked, next to the vendor BLAS, and the fastest is kept in the database the
//! routine reads.

use gemmlab::gemm::driver::Session;
use gemmlab::gemm::{Operands, Reference};
use gemmlab::kernel::builtin::fixed_form;
use gemmlab::kernel::builtin::{emulates_fp32, Abi, Config, Hints, KernelSpec};
use gemmlab::measure::progress::Progress;
use gemmlab::results::bests::{Database, RoutineEntry};
use gemmlab::results::{Measurement, ResultWriter};
use gemmlab::routine::fit;
use gemmlab::routine::shape::{call_label, ShapeClass};
use gemmlab::routine::suite::Suite;
use gemmlab::routine::{Choice, Gemm};
use gemmlab::tune::run::{run_tune, TuneOptions};
use gemmlab::tune::search::SearchResult;
use gemmlab::tune::space::Candidate;
use gemmlab::tune::space::Space;
use gemmlab::{Backend, Result};

/// The families the routine chooses from when `--kernels` does not say.
pub const FAMILIES: &str = "xgemmdirect,xgemm,simt,simtdirect";
/// Neighbouring calls whose choices seed a call and are timed beside its own bests.
const NEIGHBOURS: usize = 2;

/// A suite's tuning: its calls, the run's options and searched spaces, and how
/// each call's whole routine is timed.
pub struct SuiteRun<'a> {
    pub suite: &'a Suite,
    pub opts: &'a TuneOptions,
    pub spaces: &'a [Vec<Space>],
    /// Timed repetitions of the whole routine with each candidate.
    pub reps: usize,
    /// The routine may compute f32 calls by FP32 emulation (kept beside the FP32 choice).
    pub fp32_emulation: bool,
}

pub fn run(
    sessions: &mut [Session],
    run: &SuiteRun,
    writer: &mut ResultWriter,
    pb: &Progress,
    on_search: &mut dyn FnMut(&SearchResult),
    on_final: &mut dyn FnMut(&[Measurement]),
) -> Result<()> {
    let db_dir = &run.opts.db_dir;
    let devices: Vec<String> = sessions
        .iter()
        .map(|s| s.backend.borrow().info().name.clone())
        .collect();
    // Choices made in this run, for seeding when no database is written.
    let mut chosen: Vec<RoutineEntry> = Vec::new();
    for (i, call) in run.suite.calls.iter().enumerate() {
        let (mut o, p) = call_options(run.opts, call)?;
        let class = ShapeClass::of(p.m, p.n, p.k);
        let known = known_choices(db_dir, &devices, &chosen)?;
        let neighbours = nearest(&known, &p, run.opts.call.precision);
        let tuned_near = tuned_nearest(db_dir, &devices, &o, &p);
        let fitted = seed(
            &mut o,
            sessions,
            run.spaces,
            &p,
            &known,
            &neighbours,
            &tuned_near,
        );
        let at = (i + 1, run.suite.calls.len());
        print_header(pb, at, call, class, &neighbours, &fitted);
        let tuned = run_tune(
            sessions,
            &o,
            run.spaces,
            writer,
            pb,
            &mut *on_search,
            &mut *on_final,
        )?;
        let searched = Searched {
            p: &p,
            class,
            kernels: &o.kernels,
            finals: &tuned.finals,
            known: &known,
            tuned_near: &tuned_near,
        };
        let (entries, vendor) = time_routine(sessions, run, &searched, pb)?;
        for mut e in entries {
            e.vendor_ns = vendor.as_ref().map(|(s, _)| s.median_ns);
            let vendor_name = vendor.as_ref().map(|(_, b)| b.as_str());
            keep(&e, vendor_name, db_dir, &devices, pb)?;
            chosen.push(e);
        }
    }
    Ok(())
}

/// The run's options narrowed to one call (its size, layout and transposes), and
/// the call's problem.
fn call_options(
    opts: &TuneOptions,
    call: &gemmlab::routine::suite::SuiteCall,
) -> Result<(TuneOptions, gemmlab::gemm::problem::Problem)> {
    let mut o = opts.clone();
    o.sizes = vec![(call.m, call.n, call.k)];
    o.call.layout = call.layout;
    o.call.trans_a = call.trans_a;
    o.call.trans_b = call.trans_b;
    let p = o.call.at(call.m, call.n, call.k)?;
    Ok((o, p))
}

/// One call with its searches done: what its whole-routine candidates come from.
struct Searched<'a> {
    p: &'a gemmlab::gemm::problem::Problem,
    class: ShapeClass,
    /// The families searched.
    kernels: &'a [&'static KernelSpec],
    /// The searches' final rounds.
    finals: &'a [Measurement],
    known: &'a [RoutineEntry],
    tuned_near: &'a [(gemmlab::Toolchain, String, Candidate)],
}

/// A vendor BLAS's time for a call, and its name.
type VendorTime = (gemmlab::measure::Stats, String);

/// The whole routine timed on each session with each of its candidates, checked,
/// next to the vendor BLAS (timed once per call): each session's best as an
/// entry, and the vendor's time.
fn time_routine(
    sessions: &mut [Session],
    run: &SuiteRun,
    searched: &Searched,
    pb: &Progress,
) -> Result<(Vec<RoutineEntry>, Option<VendorTime>)> {
    let ops = Operands::for_problem(*searched.p, run.opts.seed);
    let reference = Reference::cpu(&ops);
    let mut vendor = None;
    let mut entries = Vec::new();
    for session in sessions.iter_mut() {
        let info = session.backend.borrow().info().clone();
        let mut candidates = candidates(
            info.toolchain,
            searched.finals,
            searched.kernels,
            searched.known,
            searched.p,
            searched.tuned_near,
            run.fp32_emulation,
        );
        for (kernel, c) in thin_fitted(searched.p, &info) {
            add_candidate(&mut candidates, kernel, c);
        }
        let timed = time_candidates(
            session,
            candidates,
            &ops,
            &reference,
            run.reps,
            &mut vendor,
            run.fp32_emulation,
            pb,
        )?;
        let bests = bests(&timed);
        if bests.is_empty() {
            pb.suspend(|| println!("  {}: no kernel ran this call", info.toolchain));
            continue;
        }
        let entry = |best| routine_entry(&info, searched, &timed, best);
        entries.extend(bests.into_iter().map(entry));
    }
    Ok((entries, vendor))
}

/// A session's best for the call as the database keeps it (its vendor time is
/// set once every session has run).
fn routine_entry(
    info: &gemmlab::backend::DeviceInfo,
    searched: &Searched,
    timed: &[(String, Candidate, f64)],
    (kernel, c, routine_ns, emulated): (String, Candidate, f64, bool),
) -> RoutineEntry {
    let p = searched.p;
    RoutineEntry {
        toolchain: info.toolchain,
        precision: p.precision,
        call: call_label(p),
        class: searched.class,
        m: p.m,
        n: p.n,
        k: p.k,
        emulated,
        kernel,
        config: c.config,
        hints: c.hints,
        routine_ns,
        vendor_ns: None,
        candidates: timed.iter().map(|(k, _, t)| (k.clone(), *t)).collect(),
        compiler: info.compiler_version.clone(),
        gemmlab: env!("CARGO_PKG_VERSION").to_string(),
        tuned_utc: gemmlab::results::utc_now(),
    }
}

/// Seeds a call's searches: its neighbours' choices and the database's nearest
/// tuned configurations, each also with K shared the other ways and re-tiled
/// narrow where the call is thin, the model's ranking for the shape, and earlier
/// and neighbouring choices with one switch turned. Returns the model's seeds.
fn seed(
    o: &mut TuneOptions,
    sessions: &[Session],
    spaces: &[Vec<Space>],
    p: &gemmlab::gemm::problem::Problem,
    known: &[RoutineEntry],
    neighbours: &[&RoutineEntry],
    tuned_near: &[(gemmlab::Toolchain, String, Candidate)],
) -> Vec<(&'static KernelSpec, Config)> {
    o.search.seeds = neighbours.iter().map(|e| as_point(e)).collect();
    // The database's tuned configurations of each family nearest this shape seed it too.
    add_seeds(
        &mut o.search.seeds,
        tuned_near.iter().map(|(_, _, c)| c.clone()),
    );
    // Each seed's tiles with the other ways of sharing K: a neighbour's tile is
    // often right for this call where its split is not.
    let shared: Vec<Candidate> = o
        .search
        .seeds
        .iter()
        .flat_map(|c| {
            k_sharing_variants(&c.config)
                .into_iter()
                .map(|config| Candidate {
                    config,
                    hints: c.hints.clone(),
                })
        })
        .collect();
    add_seeds(&mut o.search.seeds, shared);
    // Each seed re-tiled to a narrow width where the call is thin: the search's
    // steps change one parameter at a time, and a 48-wide tile needs its warp
    // and thread tiles changed with it.
    let narrow: Vec<Candidate> = o
        .search
        .seeds
        .iter()
        .flat_map(|c| narrow_variants(c, p))
        .collect();
    add_seeds(&mut o.search.seeds, narrow);
    // And the configurations a model of the device ranks best for this shape.
    let fitted = model_seeds(sessions, o, spaces, p);
    add_seeds(
        &mut o.search.seeds,
        fitted.iter().map(|(_, c)| Candidate::plain(c.clone())),
    );
    // This call's earlier choices and its neighbours' with one switch of their
    // kernel turned the other way each: where the search varies switches, a
    // choice tuned with the published ones is often faster with one changed.
    let earlier = known.iter().filter(|e| {
        e.precision == p.precision && e.call == call_label(p) && (e.m, e.n, e.k) == (p.m, p.n, p.k)
    });
    let flipped: Vec<Candidate> = earlier
        .chain(neighbours.iter().copied())
        .flat_map(switch_flips)
        .collect();
    add_seeds(&mut o.search.seeds, flipped);
    fitted
}

/// The line that opens a call's part of the output.
fn print_header(
    pb: &Progress,
    (at, of): (usize, usize),
    call: &gemmlab::routine::suite::SuiteCall,
    class: ShapeClass,
    neighbours: &[&RoutineEntry],
    fitted: &[(&'static KernelSpec, Config)],
) {
    pb.suspend(|| {
        println!(
            "\n== suite call {}/{} (line {}): {} [{class}]{}",
            at,
            of,
            call.line,
            call.describe(),
            if neighbours.is_empty() {
                String::new()
            } else {
                format!(
                    ", seeded from {}",
                    neighbours
                        .iter()
                        .map(|e| format!("{} at {}x{}x{} {}", e.kernel, e.m, e.n, e.k, e.call))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        if !fitted.is_empty() {
            println!(
                "  model seeds (tile MxNxK): {}",
                fitted
                    .iter()
                    .map(|(spec, c)| seed_label(spec, c))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    });
}

/// The candidates of one session: each family's best from the searches, the
/// call's earlier choice (a rerun keeps it unless something beats it), its
/// neighbours' and the database's nearest tuned configurations.
fn candidates(
    toolchain: gemmlab::Toolchain,
    finals: &[Measurement],
    kernels: &[&KernelSpec],
    known: &[RoutineEntry],
    p: &gemmlab::gemm::problem::Problem,
    tuned_near: &[(gemmlab::Toolchain, String, Candidate)],
    fp32_emulation: bool,
) -> Vec<(String, Candidate)> {
    let mut candidates = searched_bests(toolchain, finals, kernels, p);
    // This call's earlier choice (a rerun keeps it unless something beats it),
    // then its neighbours'; then the other toolchains' choices for this call. Twins
    // take the same configurations, and a compiler's search can miss what the
    // other's found: the same source timed here decides.
    let earlier = |own: bool| {
        known.iter().filter(move |e| {
            (e.toolchain == toolchain) == own
                && e.precision == p.precision
                && e.call == call_label(p)
                && (e.m, e.n, e.k) == (p.m, p.n, p.k)
        })
    };
    let near = earlier(true)
        .chain(nearest(known, p, p.precision))
        .filter(|e| e.toolchain == toolchain)
        .chain(earlier(false))
        .filter(|e| fp32_emulation || !e.emulated)
        .map(|e| (e.kernel.clone(), as_point(e)));
    let tuned = tuned_near
        .iter()
        .filter(|(tc, _, _)| *tc == toolchain)
        .map(|(_, k, c)| (k.clone(), c.clone()));
    for (kernel, c) in near.chain(tuned) {
        add_candidate(&mut candidates, kernel, c);
    }
    let named = |k: &str, twin: Option<Candidate>| twin.map(|t| (k.to_string(), t));
    add_twins(&mut candidates, |k, c| {
        named(k, runs_twin(k, c, p, toolchain))
    });
    add_twins(&mut candidates, |k, c| in_place_twins(k, c, p, toolchain));
    add_twins(&mut candidates, |k, c| {
        named(k, along_k_twin(k, c, p, toolchain))
    });
    add_twins(&mut candidates, |k, c| ktile_twins(k, c, p, toolchain));
    candidates
}

/// Each family's best in the searches' final rounds on `toolchain`, each followed by
/// its variant reading the operands as the call stores them (where that differs).
fn searched_bests(
    toolchain: gemmlab::Toolchain,
    finals: &[Measurement],
    kernels: &[&KernelSpec],
    p: &gemmlab::gemm::problem::Problem,
) -> Vec<(String, Candidate)> {
    let mut candidates: Vec<(String, Candidate)> = Vec::new();
    for k in kernels {
        let best = finals
            .iter()
            .filter(|m| m.toolchain == toolchain && m.kernel == k.id && m.status.is_ok())
            .max_by(|a, b| a.gflops.unwrap_or(0.0).total_cmp(&b.gflops.unwrap_or(0.0)));
        if let Some(m) = best {
            let c = Candidate {
                config: m.config.clone(),
                hints: m.hints.clone(),
            };
            let stored = as_stored(k, &c, p, toolchain);
            candidates.push((m.kernel.clone(), c));
            candidates.extend(stored.map(|c| (m.kernel.clone(), c)));
        }
    }
    candidates
}

/// Appends `kernel` at `c` unless it is a candidate already.
fn add_candidate(candidates: &mut Vec<(String, Candidate)>, kernel: String, c: Candidate) {
    if !candidates.iter().any(|(k, x)| *k == kernel && *x == c) {
        candidates.push((kernel, c));
    }
}

/// Appends the twins `twins_of` finds for each candidate there now, those not there already.
fn add_twins<T: IntoIterator<Item = (String, Candidate)>>(
    candidates: &mut Vec<(String, Candidate)>,
    twins_of: impl Fn(&str, &Candidate) -> T,
) {
    let twins: Vec<(String, Candidate)> = (candidates.iter())
        .flat_map(|(k, c)| twins_of(k, c))
        .collect();
    for (kernel, c) in twins {
        add_candidate(candidates, kernel, c);
    }
}

/// The `thin` kernel fitted to a thin call's shape, in every form: no search
/// covers it, and the routine fits it only for calls without an entry, so a
/// suite's thin calls would otherwise never time it.
fn thin_fitted(
    p: &gemmlab::gemm::problem::Problem,
    info: &gemmlab::backend::DeviceInfo,
) -> Vec<(String, Candidate)> {
    let id = gemmlab::kernel::builtin::thin::THIN.id;
    (gemmlab::routine::thin_fits(p, info).into_iter())
        .map(|(config, hints)| (id.to_string(), Candidate { config, hints }))
        .collect()
}

/// The in-place kernel of `kernel`'s family (`simtdirect` for `simt`) at `c`'s tiles and
/// switches, and each in-place candidate with its cp.async copies on where they are
/// off; each of those reading its operands' forms at run time also compiled for one
/// form: along M and N (`ALONG_MN`: the routine transposes or copies first an operand
/// the call stores otherwise), where cp.async copies both and nothing goes through
/// registers, and the call's own (`FIXED_FORM`: nothing transposed, and no code for the
/// other forms: 213 registers against 167 at 64 x 64 for a column-major NN call); and
/// every one of them with `USE_BOUNDS` turned. A packed
/// kernel's search never sees what its packs cost the whole call, nor the in-place
/// kernel's search the tiles the packed one found: all are timed as whole calls here.
fn in_place_twins(
    kernel: &str,
    c: &Candidate,
    p: &gemmlab::gemm::problem::Problem,
    toolchain: gemmlab::Toolchain,
) -> Vec<(String, Candidate)> {
    let Ok(spec) = gemmlab::kernel::builtin::find(kernel) else {
        return Vec::new();
    };
    let Some(direct) = in_place_kernel(spec) else {
        return Vec::new();
    };
    let own = std::ptr::eq(direct, spec);
    let takes = |name: &str| direct.params.iter().any(|q| q.name == name);
    // A packed kernel's forms are its own: in place, the call gives them.
    let config = Config(
        (c.config.0.iter())
            .filter(|(name, _)| takes(name) && (own || !name.starts_with("KMAJOR_")))
            .map(|(name, v)| (name.clone(), *v))
            .collect(),
    );
    // The packed kernel's tiles as they are, and cp.async on where it is off.
    let mut hints = Vec::new();
    if !own {
        hints.push(c.hints.clone());
    }
    if direct.has_switch("ASYNC_COPY") && !switch_on(direct, toolchain, &c.hints, "ASYNC_COPY") {
        hints.push(c.hints.with_switch("ASYNC_COPY", true));
    }
    let mut out: Vec<Candidate> = (hints.iter())
        .map(|h| Candidate {
            config: config.clone(),
            hints: h.clone(),
        })
        .collect();
    // Each of those, and an in-place `c` itself, along M and N and in the call's form.
    if own {
        hints.push(c.hints.clone());
    }
    out.extend(fixed_forms(direct, &config, &hints, p));
    // Each with USE_BOUNDS turned too: the same tiles are scheduled differently in
    // place. With cp.async along M and N and no launch bounds, ptxas issued the
    // fragment loads just before their FMAs (a tenth slower at 1024^3); with them it
    // pipelined them as in the packed kernel (results/h200/routine/bounds/).
    let turned = bounds_turned(direct, toolchain, &out);
    out.extend(turned);
    out.into_iter()
        .filter(|t| {
            direct
                .validate_with_switches(&t.config, &t.hints, toolchain)
                .is_ok()
        })
        .map(|t| (direct.id.to_string(), t))
        .collect()
}

/// The in-place kernel of `spec`'s family: `spec` itself where it is one.
fn in_place_kernel(spec: &'static KernelSpec) -> Option<&'static KernelSpec> {
    if spec.abi == Abi::DirectInPlace {
        Some(spec)
    } else {
        (gemmlab::kernel::builtin::all().iter())
            .find(|d| d.family == spec.family && d.abi == Abi::DirectInPlace)
    }
}

/// `config` compiled for each fixed form (along M and N, and the call's own) it is
/// not already, with each of `hints`; none where `config` fixes a form already.
fn fixed_forms(
    direct: &KernelSpec,
    config: &Config,
    hints: &[Hints],
    p: &gemmlab::gemm::problem::Problem,
) -> Vec<Candidate> {
    if fixed_form(config).is_some() {
        return Vec::new();
    }
    let mut forms: Vec<Config> = [(false, false), p.k_contiguous()]
        .into_iter()
        .filter_map(|form| gemmlab::kernel::builtin::compiled_for_form(direct, config, form))
        .collect();
    forms.dedup();
    (forms.into_iter().filter(|f| f != config))
        .flat_map(|fixed| {
            hints.iter().map(move |h| Candidate {
                config: fixed.clone(),
                hints: h.clone(),
            })
        })
        .collect()
}

/// Each of `twins` with `USE_BOUNDS` the other way, where the kernel has the switch.
fn bounds_turned(
    direct: &KernelSpec,
    toolchain: gemmlab::Toolchain,
    twins: &[Candidate],
) -> Vec<Candidate> {
    if !direct.has_switch("USE_BOUNDS") {
        return Vec::new();
    }
    (twins.iter())
        .map(|t| {
            let on = switch_on(direct, toolchain, &t.hints, "USE_BOUNDS");
            Candidate {
                config: t.config.clone(),
                hints: t.hints.with_switch("USE_BOUNDS", !on),
            }
        })
        .collect()
}

/// Whether switch `name` is on in `hints` for this kernel (its published state where unset).
fn switch_on(spec: &KernelSpec, toolchain: gemmlab::Toolchain, hints: &Hints, name: &str) -> bool {
    (spec.switch_values(toolchain, hints).into_iter()).any(|(s, on)| on && s.name() == name)
}

/// `c` with `KMAJOR_RUNS` the other way, where the kernel has the switch and the call
/// has it read an operand along K. The search times kernels on operands in the form
/// the point reads, mostly along M and N, where the switch does nothing; the
/// as-stored variants and earlier choices read along K, and both of its states are
/// timed there.
fn runs_twin(
    kernel: &str,
    c: &Candidate,
    p: &gemmlab::gemm::problem::Problem,
    toolchain: gemmlab::Toolchain,
) -> Option<Candidate> {
    let spec = gemmlab::kernel::builtin::find(kernel).ok()?;
    if !spec.has_switch("KMAJOR_RUNS") {
        return None;
    }
    let along_k = gemmlab::routine::fit::reads_along_k(spec, &c.config, p);
    if !(along_k.0 || along_k.1) {
        return None;
    }
    let hints = (c.hints).with_switch(
        "KMAJOR_RUNS",
        !switch_on(spec, toolchain, &c.hints, "KMAJOR_RUNS"),
    );
    spec.validate_with_switches(&c.config, &hints, toolchain)
        .ok()?;
    Some(Candidate {
        config: c.config.clone(),
        hints,
    })
}

/// `c` reading each operand as the call stores it, those stored along K copied by cp.async
/// too (`ASYNC_ALONG_K`, with `ASYNC_COPY`): 4-byte copies into the transposed tile, where
/// otherwise a transposing pack or loads through registers feed it. simt takes the call's
/// forms (`KMAJOR_A`/`KMAJOR_B`); the in-place kernel reads them as stored unless `ALONG_MN`
/// or `FIXED_FORM` has the routine transpose them first. None where the call stores nothing
/// along K.
fn along_k_twin(
    kernel: &str,
    c: &Candidate,
    p: &gemmlab::gemm::problem::Problem,
    toolchain: gemmlab::Toolchain,
) -> Option<Candidate> {
    let spec = gemmlab::kernel::builtin::find(kernel).ok()?;
    let takes = |name: &str| spec.params.iter().any(|q| q.name == name);
    let stored = p.k_contiguous();
    if !spec.has_switch("ASYNC_ALONG_K") || !(stored.0 || stored.1) {
        return None;
    }
    let mut config = c.config.clone();
    if spec.abi == Abi::DirectInPlace {
        if fixed_form(&config).is_some_and(|form| form != stored) {
            return None;
        }
    } else if takes("KMAJOR_A") && takes("KMAJOR_B") {
        config.0.insert("KMAJOR_A".into(), i64::from(stored.0));
        config.0.insert("KMAJOR_B".into(), i64::from(stored.1));
    }
    let hints = gemmlab::kernel::builtin::copying_along_k(spec, &config, &c.hints, toolchain)?;
    let twin = Candidate { config, hints };
    (twin != *c).then_some(twin)
}

/// `c` reading the call's operands as stored where it stores B along K, B kept so in the
/// local tile (`KTILE_B`: 16-byte copies, no transposition), padded and not: where the
/// packed kernel reads B along N, a pack feeds it, and where it reads B along K, the
/// copy transposes it. Empty where the call stores B along M or N, or `kernel` is not
/// simt's packed kernel.
fn ktile_twins(
    kernel: &str,
    c: &Candidate,
    p: &gemmlab::gemm::problem::Problem,
    toolchain: gemmlab::Toolchain,
) -> Vec<(String, Candidate)> {
    let (Ok(spec), (a_along_k, true)) = (gemmlab::kernel::builtin::find(kernel), p.k_contiguous())
    else {
        return Vec::new();
    };
    (gemmlab::kernel::builtin::keeping_b_along_k(spec, &c.config, &c.hints, a_along_k, toolchain))
        .into_iter()
        .map(|(config, hints)| (kernel.to_string(), Candidate { config, hints }))
        .filter(|(_, twin)| twin != c)
        .collect()
}

/// `c` with each operand read as the call stores it (`KMAJOR_A`/`KMAJOR_B`), where the
/// kernel takes both forms and `c` reads one the other way. The search times kernels on
/// operands already in their form, so it never sees the transposing pack the other form
/// costs the whole call (B's 64 MiB at 128x4096x4096 NN, longer than a third of the
/// product): this variant is timed as a whole call beside the search's best. cp.async
/// copies only M- or N-contiguous tiles: it keeps copying the operand read that way, and
/// is off where both are K-contiguous.
fn as_stored(
    spec: &KernelSpec,
    c: &Candidate,
    p: &gemmlab::gemm::problem::Problem,
    toolchain: gemmlab::Toolchain,
) -> Option<Candidate> {
    let takes = |name: &str| spec.params.iter().any(|q| q.name == name);
    // In place, the call's form is read as stored already (`in_place_twins` fixes it).
    if spec.abi == Abi::DirectInPlace || !takes("KMAJOR_A") || !takes("KMAJOR_B") {
        return None;
    }
    let want = p.k_contiguous();
    if spec.k_major(&c.config) == want {
        return None;
    }
    let mut config = c.config.clone();
    config.0.insert("KMAJOR_A".into(), i64::from(want.0));
    config.0.insert("KMAJOR_B".into(), i64::from(want.1));
    let hints = if switch_on(spec, toolchain, &c.hints, "ASYNC_COPY") && want.0 && want.1 {
        c.hints.with_switch("ASYNC_COPY", false)
    } else {
        c.hints.clone()
    };
    spec.validate_with_switches(&config, &hints, toolchain)
        .ok()?;
    Some(Candidate { config, hints })
}

/// The whole routine timed with each candidate, checked, next to the vendor BLAS
/// (timed once per call, by whichever session has it).
#[allow(clippy::too_many_arguments)]
fn time_candidates(
    session: &mut Session,
    candidates: Vec<(String, Candidate)>,
    ops: &Operands,
    reference: &Reference,
    reps: usize,
    vendor: &mut Option<VendorTime>,
    fp32_emulation: bool,
    pb: &Progress,
) -> Result<Vec<(String, Candidate, f64)>> {
    let toolchain = session.backend.borrow().info().toolchain;
    let mut timed: Vec<(String, Candidate, f64)> = Vec::new();
    // The routine's own timing (`gemm`): batches of calls for short calls.
    let plan = gemmlab::measure::Plan {
        warmup: 1,
        reps,
        ..Default::default()
    };
    let built = prebuilt(session, &candidates, ops.problem.precision, pb);
    for ((kernel, c), built) in candidates.into_iter().zip(built) {
        let mut gemm = Gemm::published()?;
        gemm.fp32_emulation = fp32_emulation;
        if let Some((choice, artefact)) = built {
            gemm.adopt(session, &choice, ops.problem.precision, artefact)?;
        }
        gemm.force_choice = Some((kernel.clone(), c.config.clone(), c.hints.clone()));
        let r = super::routine::one(session, &mut gemm, ops, reference, &plan, vendor.is_none());
        gemm.release(session);
        match r {
            Ok((t, v)) => {
                *vendor = vendor.take().or(v);
                if let Some(st) = t.routine {
                    timed.push((kernel, c, st.median_ns));
                }
            }
            Err(e) => pb.suspend(|| println!("  {} {kernel}: not a candidate: {e}", toolchain)),
        }
    }
    Ok(timed)
}

/// Each candidate's kernel built ahead, on every core (NVRTC), or in helper processes
/// where the compiler builds one program at a time (NVIDIA's OpenCL): built one by one
/// as each whole call is timed, the 1000^3 call's candidates on CUDA waited over two
/// minutes on the compiler. A candidate that fails to build here is built again when
/// timed, which reports why.
fn prebuilt(
    session: &Session,
    candidates: &[(String, Candidate)],
    precision: gemmlab::gemm::problem::Precision,
    pb: &Progress,
) -> Vec<Option<(Choice, gemmlab::backend::Artefact)>> {
    let (compiler, device) = {
        let be = session.backend.borrow();
        (be.compiler(), be.info().clone())
    };
    let choices: Vec<Option<Choice>> = (candidates.iter())
        .map(|(kernel, c)| {
            let spec = gemmlab::kernel::builtin::find(kernel).ok()?;
            Some(Choice {
                kernel: spec,
                config: c.config.clone(),
                hints: c.hints.clone(),
                why: String::new(),
            })
        })
        .collect();
    let none = || candidates.iter().map(|_| None).collect();
    let started = std::time::Instant::now();
    // A compiler that builds one program at a time (NVIDIA's OpenCL) builds in helper
    // processes, as the tuner's searches do, where it has them.
    let threads = gemmlab::gemm::parallel::threads();
    let compiler = match compiler.parallel_builds() {
        true => compiler,
        false => {
            let processes = threads.min(gemmlab::tune::search::AUTO_PROCESSES);
            let pooled = (std::env::current_exe().ok())
                .and_then(|exe| compiler.in_processes(processes, &exe, false).ok().flatten());
            match pooled {
                Some(pooled) => pooled,
                None => return none(),
            }
        }
    };
    let known: Vec<&Choice> = choices.iter().flatten().collect();
    let mut built =
        gemmlab::routine::prebuild_all(compiler.as_ref(), &device, &known, precision).into_iter();
    let out: Vec<Option<(Choice, gemmlab::backend::Artefact)>> = (choices.into_iter())
        .map(|c| {
            let c = c?;
            Some((c, built.next()??))
        })
        .collect();
    let count = out.iter().filter(|b| b.is_some()).count();
    pb.suspend(|| {
        println!(
            "  {}: {count} of {} candidates built on {threads} threads in {:.1} s",
            device.toolchain,
            candidates.len(),
            started.elapsed().as_secs_f64()
        )
    });
    out
}

/// The fastest, and where that one emulates FP32, the fastest in FP32
/// arithmetic too: the routine without emulation keeps its choice.
fn bests(timed: &[(String, Candidate, f64)]) -> Vec<(String, Candidate, f64, bool)> {
    let emulated = |k: &str, c: &Candidate| emulates_fp32(k, &c.config, &c.hints);
    let fastest = |emulation: bool| {
        (timed.iter())
            .filter(|(k, c, _)| emulation || !emulated(k, c))
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .cloned()
    };
    let mut bests: Vec<(String, Candidate, f64)> = fastest(true).into_iter().collect();
    if bests.first().is_some_and(|(k, c, _)| emulated(k, c)) {
        bests.extend(fastest(false));
    }
    bests
        .into_iter()
        .map(|(k, c, t)| {
            let e = emulated(&k, &c);
            (k, c, t, e)
        })
        .collect()
}

/// Prints a call's choice and keeps it in the database (where one is written).
fn keep(
    e: &RoutineEntry,
    vendor: Option<&str>,
    db_dir: &Option<std::path::PathBuf>,
    devices: &[String],
    pb: &Progress,
) -> Result<()> {
    let ratio = e
        .vendor_ns
        .map_or("-".into(), |v| format!("{:.2}", v / e.routine_ns));
    pb.suspend(|| {
        println!(
            "  routine on {}: {} ({}) {:.1} us, {} x {}; candidates {}",
            e.toolchain,
            if e.emulated {
                format!("{} (3xTF32, FP32 emulation)", e.kernel)
            } else {
                e.kernel.clone()
            },
            as_point(e).describe(),
            e.routine_ns / 1e3,
            ratio,
            vendor.unwrap_or("the vendor BLAS"),
            e.candidates
                .iter()
                .map(|(k, t)| format!("{k} {:.1} us", t / 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    if let Some(dir) = db_dir {
        let device = devices.first().cloned().unwrap_or_default();
        let mut db = Database::load(dir, &device)?;
        db.set_routine(e.clone());
        db.save(dir)?;
    }
    Ok(())
}

/// Model-ranked configurations per family and device searched (`routine::fit`).
const MODEL_SEEDS: usize = 6;
/// Points of a space the model looks at (evenly spaced beyond this).
const MODEL_POINTS: usize = 100_000;

/// The configurations of each searched space that `routine::fit`'s model of the
/// device ranks fastest for `p`, at most `MODEL_SEEDS` per family and device.
fn model_seeds(
    sessions: &[Session],
    o: &TuneOptions,
    spaces: &[Vec<Space>],
    p: &gemmlab::gemm::problem::Problem,
) -> Vec<(&'static KernelSpec, Config)> {
    let mut out: Vec<(&'static KernelSpec, Config)> = Vec::new();
    for (&spec, per_session) in o.kernels.iter().zip(spaces) {
        for (session, space) in sessions.iter().zip(per_session) {
            let machine = fit::Machine::of(&fit::model_device(session, sessions));
            let step = space.len().div_ceil(MODEL_POINTS).max(1);
            let configs = (0..space.len())
                .step_by(step)
                .map(|i| space.candidate(i).config);
            for (_, c) in fit::fitted(spec, configs, p, &machine, MODEL_SEEDS) {
                if !out.iter().any(|(_, o)| *o == c) {
                    out.push((spec, c));
                }
            }
        }
    }
    out
}

/// A SIMT configuration (one with SPLITK) with its block, warp and thread tiles
/// and pipeline kept and K shared another way: not at all, or by stream-K with
/// one or two work-groups per compute unit. Where the kernel has no STREAMK, the
/// search finds no such point and drops the seed.
fn k_sharing_variants(c: &Config) -> Vec<Config> {
    if !c.0.contains_key("SPLITK") {
        return Vec::new();
    }
    [(1, 0), (1, 1), (1, 2)]
        .into_iter()
        .map(|(split, stream)| {
            let mut v = c.clone();
            v.0.insert("SPLITK".into(), split);
            v.0.insert("STREAMK".into(), stream);
            // Without split-K there is nothing for a reduction kernel to sum.
            if v.0.contains_key("REDUCE") {
                v.0.insert("REDUCE".into(), 0);
            }
            v
        })
        .filter(|v| v != c)
        .collect()
}

/// A SIMT configuration (one with BM, BN, WM, WN, TM and TN) re-tiled for a thin
/// call: where the call's M or N (column-major) is at most 48 or 96 and the block
/// tile is wider, the narrow width with warp and thread tiles that divide it (thread
/// tiles 4 wide across it and the seed's or 4 along the other side; a warp 16 or 32
/// wide across it). Points the space lacks are dropped by the search.
fn narrow_variants(c: &Candidate, p: &gemmlab::gemm::problem::Problem) -> Vec<Candidate> {
    let g = |n: &str| c.config.0.get(n).copied();
    let (Some(bm), Some(bn), Some(_), Some(_), Some(tm), Some(tn)) =
        (g("BM"), g("BN"), g("WM"), g("WN"), g("TM"), g("TN"))
    else {
        return Vec::new();
    };
    let p = p.column_major();
    // Each side that may be thin: the call's extent, the block tile across it and
    // along the other side, the seed's thread tile along the other side, and the
    // names of (block, warp, thread) across it, then (thread, warp) along the other.
    let sides = [
        (p.n as i64, bn, bm, tm, ["BN", "WN", "TN", "TM", "WM"]),
        (p.m as i64, bm, bn, tn, ["BM", "WM", "TM", "TN", "WN"]),
    ];
    let mut out = Vec::new();
    for (width, across) in [(48, 16), (96, 32)] {
        // Lanes across the narrow side, and along the other side of the warp.
        let lanes_along = 32 / (across / 4);
        for (extent, block, other_block, seed_along, names) in sides {
            // The thread tile along the other side: the seed's, and 4 (a square 4x4).
            for along in [seed_along, 4] {
                if extent <= width && block > width && divides(lanes_along * along, other_block) {
                    let values = [width, across, 4, along, lanes_along * along];
                    out.push(retiled(c, std::array::from_fn(|i| (names[i], values[i]))));
                }
            }
        }
    }
    out.dedup();
    out
}

fn retiled(c: &Candidate, values: [(&str, i64); 5]) -> Candidate {
    let mut v = c.clone();
    for (name, value) in values {
        v.config.0.insert(name.into(), value);
    }
    v
}

fn divides(d: i64, x: i64) -> bool {
    d > 0 && x % d == 0
}

/// "simt 64x128x16/3" for a seed: its family, block tile and split ("/sk2" for
/// stream-K with 2 work-groups per compute unit).
fn seed_label(spec: &KernelSpec, c: &Config) -> String {
    let split = c.get("SPLITK").max(1);
    let stream = c.get("STREAMK");
    let (m, n, k) = spec.tile(c);
    let tile = format!("{} {m}x{n}x{k}", spec.id);
    if stream > 0 {
        format!("{tile}/sk{stream}")
    } else if split > 1 {
        format!("{tile}/{split}")
    } else {
        tile
    }
}

/// A routine choice as a point of the search: its configuration and hints.
fn as_point(e: &RoutineEntry) -> Candidate {
    Candidate {
        config: e.config.clone(),
        hints: e.hints.clone(),
    }
}

/// A routine choice (with its hints) and, for each switch its kernel has on its
/// toolchain, the same choice with that switch turned the other way.
fn switch_flips(e: &RoutineEntry) -> Vec<Candidate> {
    let own = as_point(e);
    let Ok(spec) = gemmlab::kernel::builtin::find(&e.kernel) else {
        return vec![own];
    };
    let flips = spec
        .switch_values(e.toolchain, &e.hints)
        .into_iter()
        .map(|(s, on)| Candidate {
            config: e.config.clone(),
            hints: e.hints.with_switch(s.name(), !on),
        });
    std::iter::once(own.clone()).chain(flips).collect()
}

/// Appends the candidates not already among `seeds`.
fn add_seeds(seeds: &mut Vec<Candidate>, more: impl IntoIterator<Item = Candidate>) {
    for c in more {
        if !seeds.contains(&c) {
            seeds.push(c);
        }
    }
}

/// Per toolchain and family, the database's tuned configuration (with its switches
/// and cap) nearest `p`'s shape (any call), as CLBlast's database serves sizes it
/// was not tuned at.
fn tuned_nearest(
    db_dir: &Option<std::path::PathBuf>,
    devices: &[String],
    o: &TuneOptions,
    p: &gemmlab::gemm::problem::Problem,
) -> Vec<(gemmlab::Toolchain, String, Candidate)> {
    let (Some(dir), Some(device)) = (db_dir, devices.first()) else {
        return Vec::new();
    };
    let Ok(db) = Database::load(dir, device) else {
        return Vec::new();
    };
    let mut toolchains: Vec<_> = db.entries.iter().map(|e| e.toolchain).collect();
    toolchains.sort_by_key(|t| t.as_str());
    toolchains.dedup();
    let mut out = Vec::new();
    for tc in toolchains {
        for k in &o.kernels {
            if let Some(b) = db.lookup_in(k.id, tc, p.precision, (p.m, p.n, p.k)) {
                let c = Candidate {
                    config: b.config.clone(),
                    hints: b.hints.clone(),
                };
                out.push((tc, b.kernel.clone(), c));
            }
        }
    }
    out
}

/// The routine choices known so far: the database's (this device) and this run's.
fn known_choices(
    db_dir: &Option<std::path::PathBuf>,
    devices: &[String],
    chosen: &[RoutineEntry],
) -> Result<Vec<RoutineEntry>> {
    let mut all = chosen.to_vec();
    if let (Some(dir), Some(device)) = (db_dir, devices.first()) {
        // This run's choice replaces the database's for the same slot only: a call's
        // FP32 and emulated choices, and its f32 and f64 ones, are different slots.
        let db = Database::load(dir, device)?;
        all.extend((db.routine.into_iter()).filter(|e| !chosen.iter().any(|c| c.same_slot(e))));
    }
    Ok(all)
}

/// The choices for the calls nearest to `p` (other shapes), per toolchain.
fn nearest<'a>(
    known: &'a [RoutineEntry],
    p: &gemmlab::gemm::problem::Problem,
    precision: gemmlab::Precision,
) -> Vec<&'a RoutineEntry> {
    let mut out = Vec::new();
    let mut toolchains: Vec<_> = known.iter().map(|e| e.toolchain).collect();
    toolchains.sort_by_key(|t| t.as_str());
    toolchains.dedup();
    for tc in toolchains {
        let mut pool: Vec<RoutineEntry> = known
            .iter()
            .filter(|e| {
                e.toolchain == tc && e.precision == precision && (e.m, e.n, e.k) != (p.m, p.n, p.k)
            })
            .cloned()
            .collect();
        for _ in 0..NEIGHBOURS {
            let Some((e, _)) = gemmlab::routine::shape::select(&pool, p) else {
                break;
            };
            let e = e.clone();
            pool.retain(|x| x != &e);
            if let Some(orig) = known.iter().find(|x| **x == e) {
                out.push(orig);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemmlab::gemm::problem::{Layout, Template, Trans};

    fn call(layout: Layout, m: usize, n: usize, k: usize) -> gemmlab::gemm::problem::Problem {
        called(layout, (Trans::N, Trans::N), m, n, k)
    }

    fn col_call(
        t: (Trans, Trans),
        m: usize,
        n: usize,
        k: usize,
    ) -> gemmlab::gemm::problem::Problem {
        called(Layout::ColMajor, t, m, n, k)
    }

    fn called(
        layout: Layout,
        (trans_a, trans_b): (Trans, Trans),
        m: usize,
        n: usize,
        k: usize,
    ) -> gemmlab::gemm::problem::Problem {
        let t = Template {
            layout,
            trans_a,
            trans_b,
            ..Template::plain()
        };
        t.at(m, n, k).unwrap()
    }

    fn seed(spec: &KernelSpec, d: &[(&str, i64)]) -> Candidate {
        let d: Vec<(String, i64)> = d.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        Candidate::plain(spec.config(&d).unwrap())
    }

    fn entry(kernel: &str, precision: gemmlab::Precision, emulated: bool, ns: f64) -> RoutineEntry {
        let p = call(Layout::ColMajor, 300, 200, 100);
        RoutineEntry {
            toolchain: gemmlab::Toolchain::OpenCl,
            precision,
            call: call_label(&p),
            class: ShapeClass::of(p.m, p.n, p.k),
            m: p.m,
            n: p.n,
            k: p.k,
            emulated,
            kernel: kernel.into(),
            config: gemmlab::kernel::builtin::find(kernel).unwrap().defaults(),
            hints: Default::default(),
            routine_ns: ns,
            vendor_ns: None,
            candidates: Vec::new(),
            compiler: None,
            gemmlab: "test".into(),
            tuned_utc: "2026-11-28T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_calls_fp32_emulated_and_f64_choices_all_stay_candidates() {
        use gemmlab::Precision::{F32, F64};
        let dir = std::env::temp_dir().join(format!("gemmlab-known-{}", std::process::id()));
        let device = "test device".to_string();
        let mut db = Database::load(&dir, &device).unwrap();
        // The emulated choice first: the database's order must not hide the FP32 one.
        let emulated = entry("tc", F32, true, 50.0);
        let fp32 = entry("simtdirect", F32, false, 80.0);
        let f64 = entry("xgemmdirect", F64, false, 150.0);
        for e in [&emulated, &fp32, &f64] {
            db.set_routine(e.clone());
        }
        db.save(&dir).unwrap();
        let devices = [device];
        let known = known_choices(&Some(dir.clone()), &devices, &[]).unwrap();
        assert_eq!(known.len(), 3);
        // This run's FP32 choice replaces the database's FP32 one only.
        let newer = entry("xgemmdirect", F32, false, 70.0);
        let known =
            known_choices(&Some(dir.clone()), &devices, std::slice::from_ref(&newer)).unwrap();
        assert_eq!(known.len(), 3);
        assert!(known.contains(&newer) && known.contains(&emulated) && known.contains(&f64));
        assert!(!known.contains(&fp32));
        // The call's FP32 choice is a candidate of the FP32 routine; the emulated one
        // only where emulation is allowed.
        let p = call(Layout::ColMajor, 300, 200, 100);
        let known = known_choices(&Some(dir.clone()), &devices, &[]).unwrap();
        let kernels = |emulation| {
            candidates(
                gemmlab::Toolchain::OpenCl,
                &[],
                &[],
                &known,
                &p,
                &[],
                emulation,
            )
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>()
        };
        // The in-place kernel reads this NN call's B along K: its K-runs twin comes next,
        // then the in-place twins (cp.async, along M and N).
        let (plain, emulated) = (kernels(false), kernels(true));
        assert_eq!(plain[..2], ["simtdirect", "simtdirect"]);
        assert_eq!(emulated[..3], ["tc", "simtdirect", "simtdirect"]);
        assert_eq!(emulated[1..], plain);
        assert!(plain[2..].iter().all(|k| k == "simtdirect") && plain.len() > 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_other_toolchains_choice_for_the_same_call_is_a_candidate_after_its_own() {
        use gemmlab::Precision::F32;
        use gemmlab::Toolchain::{Cuda, OpenCl};
        let cuda = RoutineEntry {
            toolchain: Cuda,
            ..entry("xgemm", F32, false, 90.0)
        };
        let opencl = entry("simtdirect", F32, false, 70.0);
        // Another call's OpenCL choice: a neighbour of OpenCL's, not CUDA's.
        let elsewhere = RoutineEntry {
            m: 600,
            call: call_label(&call(Layout::ColMajor, 600, 200, 100)),
            ..entry("simt", F32, false, 80.0)
        };
        let known = [cuda, opencl, elsewhere];
        let p = call(Layout::ColMajor, 300, 200, 100);
        let kernels = |toolchain| {
            let c = candidates(toolchain, &[], &[], &known, &p, &[], false);
            c.into_iter().map(|(k, _)| k).collect::<Vec<_>>()
        };
        // Then the K-runs twin of the in-place kernel, which reads this NN call's B along K,
        // then the in-place twins (the packed kernel's in place, cp.async, along M and N),
        // then each one's twin copying B along K with cp.async (simt's too, where it is one).
        let (cuda, opencl) = (kernels(Cuda), kernels(OpenCl));
        assert_eq!(cuda[..3], ["xgemm", "simtdirect", "simtdirect"]);
        assert_eq!(opencl[..4], ["simtdirect", "simt", "xgemm", "simtdirect"]);
        for twins in [&cuda[3..], &opencl[4..]] {
            assert!(!twins.is_empty() && twins.iter().all(|k| k == "simtdirect" || k == "simt"));
        }
        assert!(!cuda[3..].contains(&"simt".to_string()));
        assert!(opencl[4..].contains(&"simt".to_string()));
    }

    #[test]
    fn neighbours_are_at_most_two_per_toolchain_however_the_database_orders_them() {
        use gemmlab::Toolchain::{Cuda, OpenCl};
        let at = |toolchain, m: usize| {
            let mut e = entry("simtdirect", gemmlab::Precision::F32, false, 10.0);
            e.toolchain = toolchain;
            e.m = m;
            e
        };
        // Toolchains interleaved, as a database written by several runs holds them.
        let known: Vec<RoutineEntry> = (1..=4)
            .flat_map(|i| [at(Cuda, 100 * i), at(OpenCl, 100 * i)])
            .collect();
        let p = call(Layout::ColMajor, 250, 200, 100);
        let near = nearest(&known, &p, gemmlab::Precision::F32);
        let count = |t| near.iter().filter(|e| e.toolchain == t).count();
        assert_eq!((count(Cuda), count(OpenCl)), (NEIGHBOURS, NEIGHBOURS));
        // The nearest shapes: 200 and 300 rows against 250.
        let mut rows: Vec<usize> = near.iter().map(|e| e.m).collect();
        rows.sort();
        assert_eq!(rows, [200, 200, 300, 300]);
    }

    #[test]
    fn each_familys_best_is_also_timed_reading_the_operands_as_stored() {
        let simt = gemmlab::kernel::builtin::find("simt").unwrap();
        let tc = gemmlab::Toolchain::Cuda;
        // The search's best at 128x4096x4096 NN: B read N-contiguous, through cp.async.
        let best = Candidate {
            config: simt.config(&[("SPLITK".into(), 6)]).unwrap(),
            hints: gemmlab::kernel::builtin::Hints::default().with_switch("ASYNC_COPY", true),
        };
        let nn = call(Layout::ColMajor, 128, 4096, 4096);
        let v = as_stored(simt, &best, &nn, tc).unwrap();
        assert_eq!(simt.k_major(&v.config), (false, true));
        // cp.async still copies A, read along M; B goes through registers.
        assert_eq!(v.hints.switch("ASYNC_COPY"), Some(true));
        assert_eq!(v.config.get("SPLITK"), 6);
        simt.validate_with_switches(&v.config, &v.hints, tc)
            .unwrap();
        // NT stores B N-contiguous, as the best reads it: nothing to add.
        let nt = col_call((Trans::N, Trans::T), 128, 4096, 4096);
        assert!(as_stored(simt, &best, &nt, tc).is_none());
        // TN stores A K-contiguous (and B too).
        let tn = col_call((Trans::T, Trans::N), 1024, 1024, 1024);
        let v = as_stored(simt, &best, &tn, tc).unwrap();
        assert_eq!(simt.k_major(&v.config), (true, true));
        assert_eq!(v.hints.switch("ASYNC_COPY"), Some(false));
        // A kernel without the two forms (the direct one reads the call as it is) adds nothing.
        let direct = gemmlab::kernel::builtin::find("simtdirect").unwrap();
        let d = Candidate::plain(direct.defaults());
        assert!(as_stored(direct, &d, &nn, tc).is_none());
    }

    fn direct_spec() -> &'static KernelSpec {
        gemmlab::kernel::builtin::find("simtdirect").unwrap()
    }

    #[test]
    fn a_packed_candidate_is_also_timed_in_place_and_with_cp_async() {
        let tc = gemmlab::Toolchain::Cuda;
        let simt = gemmlab::kernel::builtin::find("simt").unwrap();
        let d = [
            ("BM".into(), 64),
            ("KMAJOR_B".into(), 1),
            ("SPLITK".into(), 2),
        ];
        let packed = Candidate {
            config: simt.config(&d).unwrap(),
            hints: Hints::default().with_switch("ASYNC_COPY", true),
        };
        // The in-place twin, reading the call as stored, along M and N, and compiled
        // for the call's own form (A along M, B along K: column-major NN).
        let nn = call(Layout::ColMajor, 1000, 1000, 1000);
        let twins = in_place_twins("simt", &packed, &nn, tc);
        let forms: Vec<Option<(bool, bool)>> =
            twins.iter().map(|(_, c)| fixed_form(&c.config)).collect();
        let three = [None, Some((false, false)), Some((false, true))];
        assert_eq!(forms, three.repeat(2));
        // The second three: launch bounds turned.
        let bounds = |c: &Candidate| switch_on(direct_spec(), tc, &c.hints, "USE_BOUNDS");
        assert_ne!(bounds(&twins[0].1), bounds(&twins[3].1));
        assert_eq!(twins[0].1.config, twins[3].1.config);
        let (kernel, twin) = &twins[0];
        assert_eq!(kernel, "simtdirect");
        // The same tiles and split, without the forms the call's arguments give in place.
        assert_eq!((twin.config.get("BM"), twin.config.get("SPLITK")), (64, 2));
        assert!(!twin.config.0.contains_key("KMAJOR_B"));
        assert_eq!(twin.hints, packed.hints);
        // Through registers: the twin as it is and with cp.async, each both ways.
        let plain = Candidate::plain(simt.config(&d).unwrap());
        let twins = in_place_twins("simt", &plain, &nn, tc);
        let kinds: Vec<(Option<bool>, i64)> = (twins.iter())
            .map(|(_, c)| (c.hints.switch("ASYNC_COPY"), c.config.get("ALONG_MN")))
            .collect();
        let (off, on) = (None, Some(true));
        assert_eq!(
            kinds,
            [(off, 0), (on, 0), (off, 1), (on, 1), (off, 0), (on, 0)].repeat(2)
        );
        // A call stored along M and N has no form of its own besides ALONG_MN's.
        let nt = col_call((Trans::N, Trans::T), 1000, 1000, 1000);
        let twins = in_place_twins("simt", &packed, &nt, tc);
        assert_eq!(twins.len(), 4);
        assert!(twins.iter().all(|(_, c)| c.config.get("FIXED_FORM") == 0));
        // An in-place candidate gains cp.async, and the fixed forms with and without it.
        let direct = gemmlab::kernel::builtin::find("simtdirect").unwrap();
        let own = Candidate::plain(direct.defaults());
        let twins = in_place_twins("simtdirect", &own, &nn, tc);
        assert_eq!(twins.len(), 10);
        for form in [Some((false, false)), Some((false, true))] {
            let done = (twins.iter())
                .find(|(_, c)| {
                    fixed_form(&c.config) == form && c.hints.switch("ASYNC_COPY") == Some(true)
                })
                .unwrap();
            assert!(in_place_twins("simtdirect", &done.1, &nn, tc).is_empty());
        }
        // Families without an in-place kernel add nothing.
        let xgemm = gemmlab::kernel::builtin::find("xgemm").unwrap();
        let plain = Candidate::plain(xgemm.defaults());
        assert!(in_place_twins("xgemm", &plain, &nn, tc).is_empty());
    }

    #[test]
    fn a_candidate_reading_along_k_is_also_timed_with_its_k_runs_the_other_way() {
        let tc = gemmlab::Toolchain::Cuda;
        let nn = call(Layout::ColMajor, 128, 4096, 4096);
        let nt = col_call((Trans::N, Trans::T), 128, 4096, 4096);
        let kmajor_b = gemmlab::kernel::builtin::find("simt")
            .unwrap()
            .config(&[("KMAJOR_B".into(), 1)])
            .unwrap();
        let v = runs_twin("simt", &Candidate::plain(kmajor_b.clone()), &nn, tc).unwrap();
        assert_eq!(v.hints.switch("KMAJOR_RUNS"), Some(true));
        assert_eq!(v.config, kmajor_b);
        // And back: the twin's twin has the switch off.
        let back = runs_twin("simt", &v, &nn, tc).unwrap();
        assert_ne!(back.hints.switch("KMAJOR_RUNS"), Some(true));
        // simt reading both operands along M and N: the switch does nothing there.
        let plain = gemmlab::kernel::builtin::find("simt").unwrap().defaults();
        assert!(runs_twin("simt", &Candidate::plain(plain), &nn, tc).is_none());
        // The in-place kernel reads the call as it is stored: B along K in NN, not in NT.
        let direct = gemmlab::kernel::builtin::find("simtdirect")
            .unwrap()
            .defaults();
        assert!(runs_twin("simtdirect", &Candidate::plain(direct.clone()), &nn, tc).is_some());
        assert!(runs_twin("simtdirect", &Candidate::plain(direct), &nt, tc).is_none());
        // A kernel without the switch adds nothing.
        let x = gemmlab::kernel::builtin::find("xgemm").unwrap().defaults();
        assert!(runs_twin("xgemm", &Candidate::plain(x), &nn, tc).is_none());
    }

    #[test]
    fn a_call_storing_b_along_k_is_also_timed_keeping_b_along_k_in_the_local_tile() {
        let tc = gemmlab::Toolchain::Cuda;
        let nn = call(Layout::ColMajor, 1024, 1024, 1024);
        let nt = col_call((Trans::N, Trans::T), 1024, 1024, 1024);
        let tt = col_call((Trans::T, Trans::T), 1024, 1024, 1024);
        let simt = gemmlab::kernel::builtin::find("simt").unwrap();
        let copied = Candidate {
            config: simt.defaults(),
            hints: Hints::default()
                .with_switch("ASYNC_COPY", true)
                .with_switch("ASYNC_ALONG_K", true),
        };
        let twins = ktile_twins("simt", &copied, &nn, tc);
        assert_eq!(twins.len(), 2, "padded and not");
        for (_, t) in &twins {
            assert_eq!((t.config.get("KMAJOR_A"), t.config.get("KMAJOR_B")), (0, 1));
            assert_eq!(t.hints.switch("KTILE_B"), Some(true));
            assert_eq!(t.hints.switch("ASYNC_ALONG_K"), None);
            assert_eq!(t.hints.switch("ASYNC_COPY"), Some(true));
            assert!(simt.validate_with_switches(&t.config, &t.hints, tc).is_ok());
        }
        // TT stores A along K too: A read so, B kept along K.
        let twins = ktile_twins("simt", &Candidate::plain(simt.defaults()), &tt, tc);
        assert!(twins.iter().all(|(_, t)| t.config.get("KMAJOR_A") == 1));
        // Nothing for B stored along N, nor for a kernel without the switch.
        assert!(ktile_twins("simt", &copied, &nt, tc).is_empty());
        let direct = gemmlab::kernel::builtin::find("simtdirect")
            .unwrap()
            .defaults();
        assert!(ktile_twins("simtdirect", &Candidate::plain(direct), &nn, tc).is_empty());
    }

    #[test]
    fn a_call_storing_an_operand_along_k_is_also_timed_with_cp_async_copying_it() {
        let tc = gemmlab::Toolchain::Cuda;
        let nn = call(Layout::ColMajor, 1024, 1024, 1024);
        let nt = col_call((Trans::N, Trans::T), 1024, 1024, 1024);
        let tn = col_call((Trans::T, Trans::N), 1024, 1024, 1024);
        let simt = gemmlab::kernel::builtin::find("simt").unwrap();
        // The search's best reads along M and N (B packed in NN): the twin reads B as
        // stored and copies it with cp.async.
        let plain = Candidate::plain(simt.defaults());
        let v = along_k_twin("simt", &plain, &nn, tc).unwrap();
        assert_eq!((v.config.get("KMAJOR_A"), v.config.get("KMAJOR_B")), (0, 1));
        assert_eq!(v.hints.switch("ASYNC_COPY"), Some(true));
        assert_eq!(v.hints.switch("ASYNC_ALONG_K"), Some(true));
        assert_eq!(v.hints.switch("SMEM_PAD"), Some(true));
        assert!(simt.validate_with_switches(&v.config, &v.hints, tc).is_ok());
        // Where padded tiles would not fit, unpadded.
        let big = simt
            .config(&[("STAGES".into(), 3), ("BK".into(), 16)])
            .unwrap();
        let u = along_k_twin("simt", &Candidate::plain(big), &nn, tc).unwrap();
        assert_eq!(u.hints.switch("SMEM_PAD"), None);
        // TN stores both along K: both copied, where 16-byte copies alone take neither.
        let v = along_k_twin("simt", &plain, &tn, tc).unwrap();
        assert_eq!((v.config.get("KMAJOR_A"), v.config.get("KMAJOR_B")), (1, 1));
        // Already the twin, or nothing stored along K: none.
        assert!(along_k_twin("simt", &v, &tn, tc).is_none());
        assert!(along_k_twin("simt", &plain, &nt, tc).is_none());
        // In place: as the call stores B (along K in NN, not in NT), never after ALONG_MN's pack.
        let direct = gemmlab::kernel::builtin::find("simtdirect").unwrap();
        let d = Candidate::plain(direct.defaults());
        let v = along_k_twin("simtdirect", &d, &nn, tc).unwrap();
        assert_eq!(v.config, d.config);
        assert!(along_k_twin("simtdirect", &d, &nt, tc).is_none());
        let packed = Candidate::plain(direct.config(&[("ALONG_MN".into(), 1)]).unwrap());
        assert!(along_k_twin("simtdirect", &packed, &nn, tc).is_none());
        let x = gemmlab::kernel::builtin::find("xgemm").unwrap().defaults();
        assert!(along_k_twin("xgemm", &Candidate::plain(x), &nn, tc).is_none());
    }

    fn device(vendor: &str, units: u32) -> gemmlab::backend::DeviceInfo {
        gemmlab::backend::DeviceInfo {
            compute_units: Some(units),
            ..gemmlab::backend::DeviceInfo::new(
                gemmlab::Toolchain::OpenCl,
                "opencl:0:0",
                "a device",
                vendor,
                "a driver",
                gemmlab::backend::DeviceKind::Gpu,
            )
        }
    }

    #[test]
    fn a_thin_call_times_thin_in_every_fitted_form_where_the_device_takes_it() {
        let thin_call = call(Layout::ColMajor, 4097, 33, 2049);
        let fitted = thin_fitted(&thin_call, &device("NVIDIA Corporation", 132));
        let forms: Vec<(i64, i64)> = (fitted.iter())
            .map(|(k, c)| {
                assert_eq!(k, "thin");
                (c.config.get("XS"), c.config.get("PIPE"))
            })
            .collect();
        assert_eq!(forms, [(0, 0), (1, 0), (0, 1)]);
        assert!(fitted.iter().all(|(_, c)| c.config.get("BT") == 36));
        // Row-major, the same call is thin along M in column-major terms.
        let row = thin_fitted(
            &call(Layout::RowMajor, 4097, 33, 2049),
            &device("NVIDIA", 132),
        );
        assert!(row.iter().all(|(_, c)| c.config.get("SIDE") == 0));
        // Not for a call without a short side; split-K only where it is verified.
        assert!(thin_fitted(
            &call(Layout::ColMajor, 500, 500, 500),
            &device("NVIDIA", 132)
        )
        .is_empty());
        let cpu = thin_fitted(
            &call(Layout::ColMajor, 40, 300, 64),
            &device("Portable Computing Language", 1),
        );
        assert!(!cpu.is_empty() && cpu.iter().all(|(_, c)| c.config.get("SPLITK") == 1));
        let cpu = thin_fitted(&thin_call, &device("Portable Computing Language", 4));
        assert!(cpu.iter().all(|(_, c)| c.config.get("SPLITK") == 1));
    }

    #[test]
    fn thin_calls_are_seeded_with_narrow_tiles_that_the_kernel_takes() {
        let direct = gemmlab::kernel::builtin::find("simtdirect").unwrap();
        let thin_tile = [
            ("BK", 32),
            ("BM", 64),
            ("BN", 64),
            ("WM", 16),
            ("WN", 64),
            ("TM", 4),
            ("TN", 8),
        ];
        let s = seed(direct, &thin_tile);
        let tile = |c: &Candidate| (c.config.get("BM"), c.config.get("BN"));
        // N = 33: a 48-wide tile, valid as it is.
        let v = narrow_variants(&s, &call(Layout::ColMajor, 4097, 33, 2049));
        assert_eq!(v.iter().map(tile).collect::<Vec<_>>(), [(64, 48)]);
        direct.validate(&v[0].config).unwrap();
        // Row-major, the same call is thin along M in column-major terms.
        // with the seed's 8-wide thread tiles along N and with 4-wide ones.
        let v = narrow_variants(&s, &call(Layout::RowMajor, 4097, 33, 2049));
        assert_eq!(v.iter().map(tile).collect::<Vec<_>>(), [(48, 64), (48, 64)]);
        assert_eq!(
            v.iter().map(|c| c.config.get("TN")).collect::<Vec<_>>(),
            [8, 4]
        );
        for c in &v {
            direct.validate(&c.config).unwrap();
        }
        // N = 80 takes 96 only where the tile is wider; squares take none.
        let wide = seed(direct, &[]);
        let v = narrow_variants(&wide, &call(Layout::ColMajor, 4096, 80, 512));
        assert_eq!(
            v.iter().map(tile).collect::<Vec<_>>(),
            [(128, 96), (128, 96)]
        );
        for c in &v {
            direct.validate(&c.config).unwrap();
        }
        assert!(narrow_variants(&wide, &call(Layout::ColMajor, 1024, 1024, 1024)).is_empty());
    }
}
