//! The "compare" experiment: kernels x toolchains x sizes next to cuBLAS, the
//! compilers' resources, the PTX instruction mix; findings on the best kernel
//! of each toolchain, and registers against speed between two toolchains.

use std::path::PathBuf;

use crate::backend::Toolchain;
use crate::kernel::builtin::Hints;
use crate::results::Measurement;

use super::data::{self, find, is_vendor, of_size, Rec};
use super::{stats, Data, Finding, Topic};

pub type Size = (usize, usize, usize);

/// The native rows of compare without repeats, the sizes (largest first) and
/// kernels (cuBLAS apart) they cover, and what the section shows of them.
pub struct Compare<'a> {
    pub recs: Vec<Rec<'a>>,
    pub toolchains: Vec<Toolchain>,
    /// The pairs of toolchains compared ([`data::toolchain_pairs`]).
    pub pairs: Vec<[Toolchain; 2]>,
    pub sizes: Vec<Size>,
    pub kernels: Vec<String>,
    pub has_vendor: bool,
    /// Some row's share of cuBLAS is against cuBLAS timed interleaved with it.
    pub vendor_paired: bool,
    /// Rows repeated in a later run and left out.
    pub repeats: usize,
    /// The bar chart's size: the one asked for if measured, else the findings'.
    pub bar_size: Option<Size>,
    /// A size asked for that compare did not measure.
    pub unmeasured: Option<Size>,
    /// N of the square sizes, ascending, when there are two or more.
    pub square: Vec<usize>,
    /// Per kernel and toolchain, the row with the compiler's resources.
    pub resources: Vec<Vec<Option<&'a Measurement>>>,
    /// Rows with a PTX mix: compare's, else another experiment's.
    pub mix: Vec<&'a Measurement>,
    pub listings: Vec<Listing>,
    pub findings: Vec<Finding>,
}

/// Two toolchains' PTX of a published kernel as a compare run kept it: their
/// lines, and the lines that differ once register and label numbering is ignored.
pub struct Listing {
    pub kernel: String,
    pub toolchains: [Toolchain; 2],
    pub lines: [usize; 2],
    pub differ: usize,
    pub archive: PathBuf,
}

/// The fastest kernel of a toolchain at a size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Best {
    pub toolchain: Toolchain,
    pub kernel: String,
    /// Its form: "published defaults", "tuned at ...", "published + ...".
    pub form: String,
    pub gflops: f64,
    pub vs_vendor: Option<f64>,
}

/// One kernel on two toolchains; `change` is the first's speed over the
/// second's minus one, `gflops` both speeds where both have one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pair {
    pub kernel: String,
    pub registers: (u32, u32),
    pub occupancy: (Option<f64>, Option<f64>),
    pub gflops: Option<(f64, f64)>,
    pub change: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// The fastest kernel of each toolchain at `size`, and at every other size.
    BestPerToolchain {
        size: Size,
        vendor: Option<f64>,
        best: Vec<Best>,
        others: Vec<(Size, Vec<Best>)>,
    },
    /// Kernels whose register counts differ, the largest difference first; `top` the
    /// pair whose speeds differ most, and whether no kernel's speeds differ more.
    RegistersDiffer {
        size: Size,
        toolchains: [Toolchain; 2],
        kernels: usize,
        pairs: Vec<Pair>,
        top: Option<usize>,
        top_is_widest: bool,
    },
    /// Kernels with the same registers whose speeds differ by more than
    /// `SAME_SPEED`; the smallest and largest change, as magnitudes.
    SameRegistersDifferentSpeed {
        size: Size,
        toolchains: [Toolchain; 2],
        pairs: Vec<Pair>,
        least: f64,
        most: f64,
    },
    /// Kernels with the same registers and speeds within `SAME_SPEED`.
    Alike {
        size: Size,
        toolchains: [Toolchain; 2],
        kernels: Vec<String>,
    },
}

pub fn analyse(data: &Data, chosen: Option<Size>) -> Option<Compare<'_>> {
    let mut recs: Vec<Rec> = data.experiment("compare");
    recs.retain(|r| r.m.variant.is_none());
    if recs.is_empty() {
        return None;
    }
    let sizes = data::sizes(&recs);
    let mut kernels = data::kernels(&recs);
    kernels.retain(|k| k != data::VENDOR);
    let toolchains = data.toolchains();
    let with_speed = (sizes.iter().copied()).find(|sz| best(&recs, None, *sz).is_some());
    let squares = sizes.iter().filter(|s| s.0 == s.1 && s.1 == s.2);
    let mut square: Vec<usize> = squares.map(|s| s.0).collect();
    square.sort();
    if square.len() < 2 {
        square.clear();
    }
    // Resources do not depend on the size: the largest size's row, else any with them.
    let resource = |k: &String, t: Toolchain| {
        let at_largest = sizes.first().and_then(|sz| find(&recs, k, t, *sz));
        let of = |m: &&Measurement| m.kernel == *k && m.toolchain == t && m.resources.is_some();
        let any = || recs.iter().map(|r| r.m).find(of);
        let with = at_largest.filter(|m| m.resources.is_some());
        with.or_else(any).or(at_largest)
    };
    let of_kernel = |k| toolchains.iter().map(|t| resource(k, *t)).collect();
    let pairs = data::toolchain_pairs(&toolchains);
    let mut a = Compare {
        has_vendor: recs.iter().any(|r| is_vendor(r.m)),
        vendor_paired: recs.iter().any(|r| r.m.vendor_paired.is_some()),
        repeats: data.repeats("compare"),
        bar_size: chosen.filter(|c| sizes.contains(c)).or(with_speed),
        unmeasured: chosen.filter(|c| !sizes.contains(c)),
        resources: kernels.iter().map(of_kernel).collect(),
        mix: ptx_mix(data, &kernels, &toolchains),
        listings: listings(data, &kernels, &pairs),
        findings: Vec::new(),
        recs,
        toolchains,
        pairs,
        sizes,
        kernels,
        square,
    };
    a.findings = with_speed.map_or(Vec::new(), |size| findings(&a, size));
    Some(a)
}

/// The fastest kernel with a speed at a size, on a toolchain or on any.
fn best<'a>(recs: &[Rec<'a>], t: Option<Toolchain>, size: Size) -> Option<&'a Measurement> {
    let of =
        |m: &&Measurement| t.is_none_or(|t| m.toolchain == t) && !is_vendor(m) && of_size(m, size);
    let speeds = recs.iter().map(|r| r.m).filter(of);
    let speeds = speeds.filter_map(|m| Some((m, data::gflops(m)?)));
    speeds.max_by(|a, b| a.1.total_cmp(&b.1)).map(|(m, _)| m)
}

fn bests(a: &Compare, size: Size) -> Vec<Best> {
    (a.toolchains.iter())
        .filter_map(|t| best(&a.recs, Some(*t), size))
        .map(|m| Best {
            toolchain: m.toolchain,
            kernel: m.kernel.clone(),
            form: data::form(m),
            gflops: data::gflops(m).unwrap_or(0.0),
            vs_vendor: data::vs_vendor(m),
        })
        .collect()
}

fn findings(a: &Compare, size: Size) -> Vec<Finding> {
    // The bar chart shows the findings' size unless --size chose another.
    let chart = match a.bar_size == Some(size) {
        true => Some(format!("perf-{}", data::size_label(size))),
        false => (!a.square.is_empty()).then(|| "perf-vs-size".to_string()),
    };
    let mut out = Vec::new();
    let best = bests(a, size);
    if !best.is_empty() {
        // What is left to cuBLAS.
        let share = best.iter().filter_map(|b| b.vs_vendor).reduce(f64::max);
        let others = (a.sizes.iter().filter(|&&sz| sz != size)).map(|&sz| (sz, bests(a, sz)));
        let k = Kind::BestPerToolchain {
            size,
            vendor: data::vendor_at(&a.recs, size).and_then(data::gflops),
            best,
            others: others.filter(|(_, b)| !b.is_empty()).collect(),
        };
        let k = super::Kind::Compare(k);
        out.push(Finding::new(Topic::VsVendor, k).weight(share.map_or(0.0, |b| 1.0 - b)));
    }
    for &pair in &a.pairs {
        out.extend(between(a, size, pair));
    }
    out.into_iter().map(|f| f.chart(chart.clone())).collect()
}

/// Registers and speed, toolchain against toolchain.
fn between(a: &Compare, size: Size, tcs: [Toolchain; 2]) -> Vec<Finding> {
    let speeds = |k: &String| tcs.map(|t| find(&a.recs, k, t, size).and_then(data::gflops));
    let change = |s: [Option<f64>; 2]| stats::change(s[0], s[1]);
    // The largest speed gap of any kernel, wherever it is listed (the first of equals).
    let gaps = (a.kernels.iter()).filter_map(|k| Some((k, change(speeds(k))?.abs())));
    let widest = gaps.reduce(|w, x| if x.1 > w.1 { x } else { w });
    let at = tcs.map(|t| a.toolchains.iter().position(|x| *x == t));
    let pairs = a.kernels.iter().zip(&a.resources).filter_map(|(k, res)| {
        let res = at.map(|i| res[i?]);
        let [Some(x), Some(y)] = res.map(|m| m.and_then(data::registers)) else {
            return None;
        };
        let speed = speeds(k);
        let change = change(speed);
        Some(Pair {
            kernel: k.clone(),
            registers: (x, y),
            occupancy: (res[0]?.occupancy, res[1]?.occupancy),
            gflops: speed[0].zip(speed[1]).filter(|_| change.is_some()),
            change,
        })
    });
    let (mut differ, same): (Vec<Pair>, Vec<Pair>) =
        pairs.partition(|p| p.registers.0 != p.registers.1);
    let same = same.into_iter().filter(|p| p.change.is_some());
    let (alike, same): (Vec<Pair>, Vec<Pair>) =
        same.partition(|p| p.change.is_some_and(stats::is_same));
    let f = |k: Kind, w: f64| Finding::new(Topic::Toolchains, super::Kind::Compare(k)).weight(w);
    let abs = |p: &Pair| p.change.map_or(0.0, f64::abs);
    let mut out = Vec::new();
    if !differ.is_empty() {
        differ.sort_by_key(|p| std::cmp::Reverse(p.registers.0.abs_diff(p.registers.1)));
        // The summary names the kernel whose speeds differ most.
        let top = (0..differ.len())
            .filter(|&i| differ[i].change.is_some())
            .max_by(|&i, &j| abs(&differ[i]).total_cmp(&abs(&differ[j])));
        let weight = top.and_then(|i| differ[i].change).unwrap_or(0.0);
        let top_is_widest = top.is_some_and(|i| widest.is_some_and(|w| *w.0 == differ[i].kernel));
        let k = Kind::RegistersDiffer {
            size,
            toolchains: tcs,
            kernels: a.kernels.len(),
            pairs: differ,
            top,
            top_is_widest,
        };
        out.push(f(k, weight));
    }
    if !same.is_empty() {
        let least = same.iter().map(abs).fold(f64::INFINITY, f64::min);
        let most = same.iter().map(abs).fold(0.0, f64::max);
        let k = Kind::SameRegistersDifferentSpeed {
            size,
            toolchains: tcs,
            pairs: same,
            least,
            most,
        };
        out.push(f(k, most));
    }
    if !alike.is_empty() {
        let kernels = alike.into_iter().map(|p| p.kernel).collect();
        let toolchains = tcs;
        out.push(f(
            Kind::Alike {
                size,
                toolchains,
                kernels,
            },
            0.0,
        ));
    }
    out
}

/// Per kernel and toolchain, a default-hint row with a PTX mix: compare's, else another experiment's.
fn ptx_mix<'a>(data: &'a Data, kernels: &[String], tcs: &[Toolchain]) -> Vec<&'a Measurement> {
    let experiments = ["compare", "hints", "registers", "jit", "tiling"];
    let rows = experiments.into_iter().flat_map(|e| data.experiment(e));
    let with_mix = |m: &&Measurement| m.ptx_mix.is_some() && m.hints == Hints::default();
    let rows = rows.map(|r| r.m).filter(|m| m.variant.is_none());
    let rows: Vec<&Measurement> = rows.filter(with_mix).collect();
    let of = |k: &String, t: &Toolchain| {
        (rows.iter().copied()).find(|m| m.kernel == *k && m.toolchain == *t)
    };
    let of_kernel = |k| tcs.iter().filter_map(move |t| of(k, t));
    kernels.iter().flat_map(of_kernel).collect()
}

/// What the runs kept with --keep-ptx (RUN/ptx.tar.gz): per pair of toolchains
/// and kernel at its published state, each listing's lines and how many
/// normalized lines differ (`gemmlab ptx --from RUN --kernel K --diff` prints the diff).
fn listings(data: &Data, kernels: &[String], pairs: &[[Toolchain; 2]]) -> Vec<Listing> {
    let mut out = Vec::new();
    for run in &data.runs {
        let Ok(store) = crate::results::ptx_archive::PtxStore::open(&run.dir) else {
            continue;
        };
        let listing = |k: &String, t: Toolchain| {
            let native = |m: &&Measurement| m.experiment == "compare" && !data::is_offline(m);
            let ours = |m: &&Measurement| m.kernel == *k && m.toolchain == t;
            let published = |m: &&Measurement| m.variant.is_none() && m.hints.is_published();
            let rows = run.measurements.iter().filter(ours).filter(native);
            let mut rows = rows.filter(published);
            rows.find_map(|m| store.get(m.ptx_file.as_deref()?))
        };
        for (&toolchains, k) in pairs
            .iter()
            .flat_map(|p| kernels.iter().map(move |k| (p, k)))
        {
            let (Some(a), Some(b)) = (listing(k, toolchains[0]), listing(k, toolchains[1])) else {
                continue;
            };
            out.push(Listing {
                kernel: k.clone(),
                toolchains,
                lines: [a.lines().count(), b.lines().count()],
                differ: crate::backend::ptx::changed_lines(a, b),
                archive: run.dir.join(crate::results::ptx_archive::ARCHIVE),
            });
        }
    }
    out
}
