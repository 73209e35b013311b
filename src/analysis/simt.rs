//! gemmlab's SIMT family (`simt`) at each toolchain's tuned configuration
//! (`compare --tuned`), else at its published defaults, next to cuBLAS of the same run and CLBlast's xgemm; the
//! share of the FP32 peak, and from Nsight Compute (`ncu-*.csv`) where the rest goes.

use std::path::PathBuf;

use crate::backend::Toolchain;
use crate::kernel::builtin::Family;
use crate::results::Measurement;

use super::data::{self, fp32_lanes, is_vendor, Data, GpuFacts, Rec, LANES_ONE_FFMA_PER_CYCLE};
use super::stats::distinct;
use super::{Finding, Topic};
use crate::results::ncu::{self, NcuFile, NcuLaunch, CLOCK, FFMA, INSTRUCTIONS, ISSUE, TIME};
use crate::results::ncu::{STALL_PREFIX, STALL_SUFFIX};

/// CLBlast's tuned kernel; the family's entry point as ncu names it; the
/// sizes the headline findings quote where measured; their chart.
pub const CLBLAST: &str = "xgemm";
pub const ENTRY: &str = "simt_gemm";
const HEADLINE: [usize; 2] = [4096, 8192];
pub const CHART: &str = "simt-vs-cublas";

type Size = (usize, usize, usize);

pub fn is_simt(m: &Measurement) -> bool {
    crate::kernel::builtin::find(&m.kernel).is_ok_and(|k| k.family == Family::Simt)
}

/// One row of a device's table: a kernel on a toolchain at a size, or cuBLAS;
/// its median over cuBLAS's of the same run (1 for cuBLAS), GFLOP/s over the
/// FP32 peak, FMA instructions over all of the PTX listing (static).
pub struct Cell<'a> {
    pub kernel: String,
    pub toolchain: Toolchain,
    pub rec: Rec<'a>,
    pub ratio: Option<f64>,
    pub of_peak: Option<f64>,
    pub fma_share: Option<f64>,
}

/// One size on one device: the family's and xgemm's cells, and cuBLAS.
pub struct SizeRows<'a> {
    pub size: Size,
    pub cells: Vec<Cell<'a>>,
    pub vendor: Option<Cell<'a>>,
}

pub struct Device<'a> {
    pub name: &'a str,
    pub sizes: Vec<SizeRows<'a>>,
}

/// The share of the FP32 peak a profiled launch accounts for: issue-slot use
/// x FFMA share, and which of the two loses more.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Share {
    pub toolchain: Toolchain,
    pub issue: f64,
    pub ffma: f64,
    pub product: f64,
    pub issue_loses_more: bool,
}

/// The longest launch of the family's (`family`) or cuBLAS's in `Profile::files[file]`:
/// its FFMA share, three largest stalls but "selected", and `measured`, the
/// FFMA work ncu counted over the launch's time, of the peak at the measured clock.
pub struct ProfileRow {
    pub file: usize,
    pub family: bool,
    pub launch: NcuLaunch,
    pub ffma: Option<f64>,
    pub stalls: Vec<(String, f64)>,
    pub lanes: Option<u32>,
    pub gpu: Option<GpuFacts>,
    pub share: Option<Share>,
    pub measured: Option<f64>,
}

pub struct Profile {
    pub files: Vec<NcuFile>,
    pub rows: Vec<ProfileRow>,
}

/// Which configurations rows ran: `compare --tuned`'s, the published defaults, or some of each.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Configs {
    Tuned,
    Published,
    Both,
}

/// A row `compare --tuned` ran (labelled "tuned at ...").
fn is_tuned(m: &Measurement) -> bool {
    m.label.as_deref().is_some_and(|l| l.starts_with("tuned"))
}

impl Configs {
    fn of<'a>(mut rows: impl Iterator<Item = &'a Measurement>) -> Configs {
        let tuned = |m: &Measurement| is_tuned(m);
        let first = rows.next().is_some_and(tuned);
        match (first, rows.all(|m| tuned(m) == first)) {
            (_, false) => Configs::Both,
            (true, true) => Configs::Tuned,
            (false, true) => Configs::Published,
        }
    }
}

/// `hints`: whether `sweep hints` ran the family.
pub struct Simt<'a> {
    pub devices: Vec<Device<'a>>,
    /// The configurations of the family's rows.
    pub configs: Configs,
    pub sizes: Vec<Size>,
    pub throttled: bool,
    pub hints: bool,
    pub profile: Profile,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A family kernel on a toolchain against cuBLAS at the headline sizes;
    /// `device` is named where the report covers several.
    SimtVsCublas {
        kernel: String,
        toolchain: Toolchain,
        device: Option<String>,
        ratios: Vec<(Size, f64)>,
        configuration: Configs,
    },
    /// The size where the family's best toolchain is furthest from cuBLAS.
    SimtFurthest {
        device: Option<String>,
        size: Size,
        ratio: f64,
        toolchain: Toolchain,
        closest_size: Size,
        closest: f64,
    },
    /// What ncu's numbers account for of the FP32 peak, per family profile.
    NcuShares { shares: Vec<Share> },
}

/// Whose launch it is: the family's (`Some(true)`), cuBLAS's (another GEMM), or neither.
pub fn is_family_launch(kernel: &str) -> Option<bool> {
    let family = kernel.contains(ENTRY);
    (family || kernel.to_ascii_lowercase().contains("gemm")).then_some(family)
}

/// The cell `compare` measured: the tuned row (labelled "tuned at ..."), else
/// a row that ran, the fastest first.
fn cell<'a>(
    data: &Data,
    kernel: &str,
    toolchain: Toolchain,
    cands: impl Iterator<Item = Rec<'a>>,
) -> Option<Cell<'a>> {
    let key = |r: &Rec| (is_tuned(r.m), r.m.status.is_ok());
    let speed = |r: &Rec| data::gflops(r.m).unwrap_or(f64::NEG_INFINITY);
    let rec = cands.max_by(|a, b| key(a).cmp(&key(b)).then(speed(a).total_cmp(&speed(b))))?;
    let (m, peak) = (rec.m, data.gpu_facts(rec.run, rec.m).peak_gflops());
    let mix = m.ptx_mix.as_ref().filter(|x| x.total > 0);
    Some(Cell {
        kernel: kernel.to_string(),
        toolchain,
        rec,
        ratio: match is_vendor(m) {
            true => m.status.is_ok().then_some(1.0),
            false => data::vs_vendor(m),
        },
        of_peak: data::gflops(m).zip(peak).map(|(g, p)| g / p),
        fma_share: mix.map(|x| f64::from(x.fma) / f64::from(x.total)),
    })
}

/// Squares by size, then the other shapes by their work.
fn size_key(&(m, n, k): &Size) -> (bool, u128) {
    (!(m == n && n == k), (m as u128) * (n as u128) * (k as u128))
}

/// Every kernel (CLBlast's last) on every toolchain.
fn series(kernels: &[String]) -> impl Iterator<Item = (&String, Toolchain)> {
    kernels.iter().flat_map(|k| Toolchain::ALL.map(|t| (k, t)))
}

fn device<'a>(data: &Data, recs: &[Rec<'a>], name: &'a str) -> Device<'a> {
    let on = recs.iter().copied().filter(|r| r.m.device == name);
    let on: Vec<Rec> = on.collect();
    let family = || on.iter().filter(|r| is_simt(r.m));
    let mut sizes = distinct(family().map(|r| (r.m.m, r.m.n, r.m.k)));
    let mut kernels = distinct(family().map(|r| r.m.kernel.clone()));
    sizes.sort_by_key(size_key);
    kernels.sort();
    kernels.push(CLBLAST.to_string());
    let rows = sizes.into_iter().map(|size| {
        let at = || on.iter().copied().filter(|r| data::of_size(r.m, size));
        let cells: Vec<Cell> = series(&kernels)
            .filter_map(|(k, t)| {
                let cands = at().filter(|r| &r.m.kernel == k && r.m.toolchain == t);
                cell(data, k, t, cands)
            })
            .collect();
        // cuBLAS of the same run as the cells, whose ratios are to it.
        let vendors = || at().filter(|r| is_vendor(r.m));
        let same_run = vendors().filter(|r| cells.iter().any(|c| c.rec.run == r.run));
        let vendor = cell(data, "cuBLAS", Toolchain::Cuda, same_run);
        let vendor = vendor.or_else(|| cell(data, "cuBLAS", Toolchain::Cuda, vendors()));
        SizeRows {
            size,
            vendor,
            cells,
        }
    });
    Device {
        name,
        sizes: rows.collect(),
    }
}

/// Per toolchain the family's ratio to cuBLAS at the headline sizes, and the
/// size where the family (its best toolchain) is furthest from cuBLAS.
fn findings(device: Option<String>, rows: &[SizeRows]) -> Vec<Finding> {
    let cells = rows.iter().flat_map(|sr| &sr.cells);
    let kernels = distinct(cells.filter(|c| is_simt(c.rec.m)).map(|c| c.kernel.clone()));
    let mut squares = rows.iter().filter(|r| !size_key(&r.size).0);
    let at_headline = squares.clone().filter(|r| HEADLINE.contains(&r.size.0));
    let mut headline: Vec<&SizeRows> = at_headline.collect();
    if headline.is_empty() {
        headline.extend(squares.next_back().or(rows.last()));
    }
    let finding = |kind, weight| {
        let f = Finding::new(Topic::Simt, super::Kind::Simt(kind)).weight(weight);
        f.chart(Some(CHART.into()))
    };
    let each: Vec<(Toolchain, f64, Finding)> = series(&kernels)
        .filter_map(|(kernel, toolchain)| {
            let cells: Vec<(Size, &Cell)> = (headline.iter())
                .filter_map(|sr| {
                    let mut of = sr.cells.iter();
                    let c = of.find(|c| &c.kernel == kernel && c.toolchain == toolchain)?;
                    c.ratio.is_some().then_some((sr.size, c))
                })
                .collect();
            let ratios: Vec<(Size, f64)> = (cells.iter())
                .filter_map(|(size, c)| Some((*size, c.ratio?)))
                .collect();
            let weight = 1.0 - ratios.first()?.1;
            let kind = Kind::SimtVsCublas {
                kernel: kernel.clone(),
                toolchain,
                device: device.clone(),
                ratios,
                configuration: Configs::of(cells.iter().map(|(_, c)| c.rec.m)),
            };
            Some((toolchain, weight, finding(kind, weight)))
        })
        .collect();
    // Of several family kernels, a toolchain's closest to cuBLAS is its headline; the
    // rest (a kernel for thin calls at a square size, say) are details.
    let closest = |t: Toolchain| {
        let of = each.iter().filter(|e| e.0 == t);
        of.map(|e| e.1).fold(f64::INFINITY, f64::min)
    };
    let mut out: Vec<Finding> = (each.iter())
        .map(|(t, w, f)| match *w > closest(*t) {
            true => f.clone().detail(),
            false => f.clone(),
        })
        .collect();
    // The family's best toolchain per size; the size where that is lowest.
    let best: Vec<(Size, f64, Toolchain)> = (rows.iter())
        .filter_map(|sr| {
            let family = sr.cells.iter().filter(|c| is_simt(c.rec.m));
            let of = family.filter_map(|c| Some((c.ratio?, c.toolchain)));
            let (v, t) = of.max_by(|a, b| a.0.total_cmp(&b.0))?;
            Some((sr.size, v, t))
        })
        .collect();
    let by = |a: &&(Size, f64, Toolchain), b: &&(Size, f64, Toolchain)| a.1.total_cmp(&b.1);
    let (lo, hi) = (best.iter().min_by(by), best.iter().max_by(by));
    if let (true, Some(&(size, ratio, toolchain)), Some(&(closest_size, closest, _))) =
        (best.len() > 1, lo, hi)
    {
        let kind = Kind::SimtFurthest {
            device,
            size,
            ratio,
            toolchain,
            closest_size,
            closest,
        };
        out.push(finding(kind, 1.0 - ratio));
    }
    out
}

/// ncu's files next to the results; of each file the longest launch of the
/// family's and of cuBLAS's (the measured one rather than a warm-up or a check).
/// Its GPU is that of the runs' devices of its compute capability (all, where
/// ncu did not say it), when they agree.
fn profile(from: &[PathBuf], gpus: &[GpuFacts]) -> Profile {
    let files = ncu::discover(from).into_iter();
    let files: Vec<NcuFile> = files.map(|(p, n)| ncu::load(&p, &n)).collect();
    let time = |l: &&NcuLaunch| l.seconds(TIME).unwrap_or(f64::NEG_INFINITY);
    let row = |(file, family): (usize, bool)| {
        let launches = files[file].launches.iter();
        let of = launches.filter(|l| is_family_launch(&l.kernel) == Some(family));
        let l = of.max_by(|a, b| time(a).total_cmp(&time(b)).then(a.id.cmp(&b.id)))?;
        let cc = l.compute_capability;
        let fits = |g: &&GpuFacts| cc.is_none() || g.compute_capability == cc;
        let mut fits = gpus.iter().filter(fits);
        let gpu = fits.next().filter(|&f| fits.all(|g| g == f)).copied();
        let lanes = cc.or_else(|| gpu?.compute_capability).and_then(fp32_lanes);
        let inst = l.count(INSTRUCTIONS).filter(|v| *v > 0.0);
        // FFMA warp instructions (thread instructions / 32) over warp instructions issued.
        let ffma = inst.and_then(|i| Some(l.count(FFMA)? / 32.0 / i));
        let one_per_cycle = lanes == Some(LANES_ONE_FFMA_PER_CYCLE);
        let issue = l.fraction(ISSUE).filter(|_| one_per_cycle);
        let share = issue.zip(ffma).map(|(issue, ffma)| Share {
            toolchain: files[file].toolchain,
            issue,
            ffma,
            product: issue * ffma,
            issue_loses_more: 1.0 - issue >= 1.0 - ffma,
        });
        let measured = (|| {
            let per_s = f64::from(gpu?.sms?) * f64::from(lanes?) * l.ghz(CLOCK)? * 1e9;
            Some(l.count(FFMA)? / (l.seconds(TIME)? * per_s))
        })();
        let stalls = l.ranked(STALL_PREFIX, STALL_SUFFIX).into_iter();
        Some(ProfileRow {
            file,
            family,
            launch: l.clone(),
            ffma,
            stalls: stalls.filter(|(k, _)| k != "selected").take(3).collect(),
            lanes,
            gpu,
            share,
            measured,
        })
    };
    let all = (0..files.len()).flat_map(|i| [(i, true), (i, false)]);
    let rows = all.filter_map(row).collect();
    Profile { files, rows }
}

/// `name_devices`: whether findings name their device (the report covers several).
pub fn analyse<'a>(data: &'a Data, from: &[PathBuf], name_devices: bool) -> Simt<'a> {
    let ours = |r: &Rec| {
        let m = r.m;
        let kernel = is_simt(m) || m.kernel == CLBLAST || is_vendor(m);
        m.experiment == "compare" && m.variant.is_none() && m.is_plain_problem() && kernel
    };
    let recs: Vec<Rec> = data.measured().filter(ours).collect();
    let family = recs.iter().filter(|r| is_simt(r.m));
    let names = distinct(family.map(|r| r.m.device.as_str()));
    let devices: Vec<Device> = names.into_iter().map(|n| device(data, &recs, n)).collect();
    let mut sizes = distinct(devices.iter().flat_map(|d| &d.sizes).map(|sr| sr.size));
    sizes.sort_by_key(size_key);
    let of_device = |d: &Device| findings(name_devices.then(|| d.name.to_string()), &d.sizes);
    let mut findings: Vec<Finding> = devices.iter().flat_map(of_device).collect();
    // Without the family no profile.
    let from = if devices.is_empty() { &[][..] } else { from };
    let cuda = recs.iter().filter(|r| r.m.toolchain == Toolchain::Cuda);
    let gpus: Vec<GpuFacts> = cuda.map(|r| data.gpu_facts(r.run, r.m)).collect();
    let profile = profile(from, &gpus);
    let family = profile.rows.iter().filter(|r| r.family);
    let shares: Vec<Share> = family.filter_map(|r| r.share.clone()).collect();
    if !shares.is_empty() {
        let best = shares.iter().map(|s| s.product).fold(0.0, f64::max);
        let kind = super::Kind::Simt(Kind::NcuShares { shares });
        findings.push(Finding::new(Topic::Simt, kind).weight(1.0 - best));
    }
    let throttled = |r: &Rec| r.m.clocks.as_ref().is_some_and(|c| c.throttled());
    let cells = devices
        .iter()
        .flat_map(|d| &d.sizes)
        .flat_map(|sr| &sr.cells);
    let family = cells.filter(|c| is_simt(c.rec.m)).map(|c| c.rec.m);
    Simt {
        configs: Configs::of(family),
        devices,
        sizes,
        throttled: recs.iter().any(throttled),
        hints: data.experiment("hints").iter().any(|r| is_simt(r.m)),
        profile,
        findings,
    }
}
