//! gemmlab's SIMT family (`simt`) next to cuBLAS SGEMM: each toolchain at its
//! own tuned configuration (`compare --tuned`), cuBLAS measured in the same
//! run, CLBlast's xgemm beside them where it was measured; how far each is from
//! the FP32 peak, and, from Nsight Compute, where the time cuBLAS does not need goes.

use std::fmt::Write as _;
use std::path::PathBuf;

use plotters::style::RGBColor;

use crate::backend::Toolchain;
use crate::error::Result;
use crate::kernels::Family;
use crate::results::Measurement;

use super::charts::{color, VENDOR_COLOR};
use super::charts::{Bars, Figure, Panel, RefLine, Style, XAxis};
use super::data::{self, is_vendor, Data, Rec};
use super::simt_profile;
use super::{md, ncu, Ctx, Section, Shown, Topic};

pub const SIMT: &str = "The SIMT family against cuBLAS: where the rest goes";

/// CLBlast's tuned kernel, shown beside the family where it was measured.
const CLBLAST: &str = "xgemm";

/// The sizes the headline findings quote, where they were measured.
const HEADLINE: [usize; 2] = [4096, 8192];

fn is_simt(m: &Measurement) -> bool {
    crate::kernels::find(&m.kernel).is_ok_and(|k| k.family == Family::Simt)
}

/// FP32 lanes per SM by compute capability (CUDA C Programming Guide,
/// arithmetic instruction throughput); None where gemmlab does not know it.
pub(super) fn fp32_lanes((major, minor): (u32, u32)) -> Option<u32> {
    match (major, minor) {
        (3, _) => Some(192),
        (5, _) | (6, 1) | (6, 2) => Some(128),
        (6, 0) | (7, _) | (8, 0) => Some(64),
        (8, 6) | (8, 7) | (8, 9) | (9, _) | (10, _) | (12, _) => Some(128),
        _ => None,
    }
}

/// What the FP32 peak of a GPU is computed from.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct GpuFacts {
    pub compute_capability: Option<(u32, u32)>,
    pub sms: Option<u32>,
    /// The device's reported maximum clock.
    pub clock_mhz: Option<u32>,
}

impl GpuFacts {
    pub fn lanes(&self) -> Option<u32> {
        self.compute_capability.and_then(fp32_lanes)
    }

    /// SMs x FP32 lanes x 2 FLOPs (an FMA) x the reported maximum clock.
    pub fn peak_gflops(&self) -> Option<f64> {
        let lanes = f64::from(self.lanes()?);
        Some(f64::from(self.sms?) * lanes * 2.0 * f64::from(self.clock_mhz?) * 1e-3)
    }
}

/// The FP32 peak of the GPU a row ran on, where its records say enough.
pub(super) fn peak_of(data: &Data, run: usize, m: &Measurement) -> Option<f64> {
    gpu_facts(data, run, m).peak_gflops()
}

/// A device as the runs describe it, the fields one record lacks filled from
/// another record of the same device.
fn gpu_facts(data: &Data, run: usize, m: &Measurement) -> GpuFacts {
    let own = data.runs[run]
        .env
        .devices
        .iter()
        .filter(|d| d.id == m.device_id);
    let same_name = data
        .runs
        .iter()
        .flat_map(|r| r.env.devices.iter())
        .filter(|d| d.name == m.device);
    let mut f = GpuFacts::default();
    for d in own.chain(same_name) {
        f.compute_capability = f.compute_capability.or(d.compute_capability);
        f.sms = f.sms.or(d.compute_units);
        f.clock_mhz = f.clock_mhz.or(d.clock_mhz);
    }
    f
}

/// The cell `compare` measured for a kernel on a toolchain at a size: the
/// tuned row (`compare --tuned` labels it "tuned at ..."), else a row that ran,
/// the fastest first. Other compare runs (defaults, a run under the profiler)
/// may hold the same cell.
fn pick<'a>(cands: impl Iterator<Item = Rec<'a>>) -> Option<Rec<'a>> {
    let key = |r: &Rec| {
        (
            r.m.label.as_deref().is_some_and(|l| l.starts_with("tuned")),
            r.m.status.is_ok(),
            data::gflops(r.m).unwrap_or(f64::NEG_INFINITY),
        )
    };
    cands.max_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        (ka.0, ka.1).cmp(&(kb.0, kb.1)).then(ka.2.total_cmp(&kb.2))
    })
}

/// One size on one device: the family's and xgemm's cells, and cuBLAS.
struct SizeRows<'a> {
    size: (usize, usize, usize),
    /// (kernel, toolchain, row), family kernels first.
    cells: Vec<(String, Toolchain, Rec<'a>)>,
    vendor: Option<Rec<'a>>,
}

impl SizeRows<'_> {
    fn ratio(&self, kernel: &str, t: Toolchain) -> Option<f64> {
        self.cells
            .iter()
            .find(|(k, tc, _)| k == kernel && *tc == t)
            .and_then(|(_, _, r)| data::vs_vendor(r.m))
    }
}

/// Squares by size, then the other shapes by their work.
fn size_order(a: &(usize, usize, usize), b: &(usize, usize, usize)) -> std::cmp::Ordering {
    let key = |&(m, n, k): &(usize, usize, usize)| {
        (!(m == n && n == k), (m as u128) * (n as u128) * (k as u128))
    };
    key(a).cmp(&key(b))
}

fn device_rows<'a>(recs: &[Rec<'a>], device: &str) -> Vec<SizeRows<'a>> {
    let on: Vec<Rec> = recs
        .iter()
        .copied()
        .filter(|r| r.m.device == device)
        .collect();
    let mut sizes: Vec<(usize, usize, usize)> = Vec::new();
    for r in on.iter().filter(|r| is_simt(r.m)) {
        if !sizes.contains(&(r.m.m, r.m.n, r.m.k)) {
            sizes.push((r.m.m, r.m.n, r.m.k));
        }
    }
    sizes.sort_by(size_order);
    let mut kernels: Vec<String> = Vec::new();
    for r in on.iter().filter(|r| is_simt(r.m)) {
        if !kernels.contains(&r.m.kernel) {
            kernels.push(r.m.kernel.clone());
        }
    }
    kernels.sort();
    kernels.push(CLBLAST.to_string());
    let mut out = Vec::new();
    for size in sizes {
        let at: Vec<Rec> = on
            .iter()
            .copied()
            .filter(|r| data::of_size(r.m, size))
            .collect();
        let mut cells = Vec::new();
        for k in &kernels {
            for t in Toolchain::ALL {
                let c = at
                    .iter()
                    .copied()
                    .filter(|r| &r.m.kernel == k && r.m.toolchain == t);
                if let Some(r) = pick(c) {
                    cells.push((k.clone(), t, r));
                }
            }
        }
        // cuBLAS of the same run as the cells, whose ratios are to it.
        let runs: Vec<usize> = cells.iter().map(|(_, _, r)| r.run).collect();
        let vendors = at.iter().copied().filter(|r| is_vendor(r.m));
        let vendor =
            pick(vendors.clone().filter(|r| runs.contains(&r.run))).or_else(|| pick(vendors));
        out.push(SizeRows {
            size,
            cells,
            vendor,
        });
    }
    out
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// FMA instructions over all instructions of the PTX listing (static: each
/// counted once as written, however often it runs).
fn fma_share(m: &Measurement) -> Option<f64> {
    let mix = m.ptx_mix.as_ref()?;
    (mix.total > 0).then(|| f64::from(mix.fma) / f64::from(mix.total))
}

fn configuration(m: &Measurement) -> String {
    if is_vendor(m) {
        return "cuBLAS SGEMM".into();
    }
    let mut s = format!("{}; {}", m.config.describe_params(), m.hints.describe(true));
    if let Some(l) = &m.label {
        let _ = write!(s, " ({l})");
    }
    s
}

fn table_row(data: &Data, size: &str, kernel: &str, r: Rec) -> Vec<String> {
    let m = r.m;
    let peak = gpu_facts(data, r.run, m).peak_gflops();
    let ratio = if is_vendor(m) {
        m.status.is_ok().then_some(1.0)
    } else {
        data::vs_vendor(m)
    };
    vec![
        size.to_string(),
        if is_vendor(m) {
            "CUDA".into()
        } else {
            data::toolchain_name(m.toolchain).into()
        },
        kernel.to_string(),
        md::gflops(Some(m)),
        ratio.map_or("-".into(), |v| format!("{v:.2}")),
        match (data::gflops(m), peak) {
            (None, _) => "-".into(),
            (Some(_), None) => "n/a".into(),
            (Some(g), Some(p)) => pct(g / p),
        },
        data::registers(m).map_or("-".into(), |v| v.to_string()),
        m.occupancy
            .filter(|o| o.is_finite())
            .map_or("-".into(), |o| format!("{:.0}%", o * 100.0)),
        fma_share(m).map_or("-".into(), pct),
        configuration(m),
    ]
}

/// A lighter shade of a toolchain's colour, for CLBlast's kernel beside the family.
fn light(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

pub(crate) fn section(ctx: &mut Ctx, from: &[PathBuf]) -> Result<Section> {
    let recs: Vec<Rec> = ctx
        .data
        .measured()
        .filter(|r| {
            let m = r.m;
            m.experiment == "compare"
                && m.variant.is_none()
                && m.is_plain_problem()
                && (is_simt(m) || m.kernel == CLBLAST || is_vendor(m))
        })
        .collect();
    let mut sec = Section::default();
    if !recs.iter().any(|r| is_simt(r.m)) {
        return Ok(sec);
    }
    sec.title = SIMT.to_string();
    let data = ctx.data;
    let mut devices: Vec<&str> = Vec::new();
    for r in recs.iter().filter(|r| is_simt(r.m)) {
        if !devices.contains(&r.m.device.as_str()) {
            devices.push(&r.m.device);
        }
    }
    let per_device: Vec<(&str, Vec<SizeRows>)> = devices
        .iter()
        .map(|d| (*d, device_rows(&recs, d)))
        .collect();
    let all_sizes: Vec<String> = {
        let mut s: Vec<(usize, usize, usize)> = Vec::new();
        for (_, rows) in &per_device {
            for r in rows {
                if !s.contains(&r.size) {
                    s.push(r.size);
                }
            }
        }
        s.sort_by(size_order);
        s.into_iter().map(data::size_label).collect()
    };

    let mut s = format!("## {SIMT}\n\n");
    let _ = writeln!(
        s,
        "gemmlab's SIMT SGEMM (`simt`: block, warp and thread tiles, 128-bit accesses, a copy pipeline, \
         rasterised blocks, split-K) on each toolchain at its own tuned configuration (`compare --tuned`: \
         the database of bests, nearest tuned size), with cuBLAS SGEMM measured in the same run at the same \
         size and CLBlast's tuned xgemm beside it where it was measured. Sizes: {}. \"x cuBLAS\" is the \
         median speed over cuBLAS's median in that run.\n",
        md::join_and(&all_sizes)
    );

    // The table per device, and the findings from its ratios.
    let mut tables = String::new();
    let mut ratio_findings: Vec<Shown> = Vec::new();
    for (device, rows) in &per_device {
        let _ = writeln!(tables, "### {device}\n");
        let mut table = Vec::new();
        for sr in rows {
            let label = data::size_label(sr.size);
            for (k, _, r) in &sr.cells {
                table.push(table_row(data, &label, k, *r));
            }
            if let Some(v) = sr.vendor {
                table.push(table_row(data, &label, "cuBLAS", v));
            }
        }
        tables.push_str(&md::table(
            &md::h(&[
                "size",
                "toolchain",
                "kernel",
                "GFLOP/s",
                "x cuBLAS",
                "% of FP32 peak",
                "registers",
                "occupancy",
                "FMA share (PTX)",
                "configuration + switches",
            ]),
            &table,
        ));
        tables.push('\n');
        ratio_findings.extend(findings(device, rows, ctx.device.is_none()));
    }
    let _ = writeln!(
        tables,
        "% of FP32 peak: GFLOP/s over SMs x FP32 lanes per SM x 2 x clock, where the clock is the device's \
         reported maximum (`clock_mhz`), so it is the fraction of the peak at that clock; a GPU that runs \
         slower under load is further from it than its instructions alone explain. FMA share (PTX): fma/mad instructions over all instructions of the kernel's \
         PTX listing, counted once each as written, not as executed. \"-\": not measured or no PTX; \
         \"n/a\": the peak of a compute capability gemmlab does not know.\n"
    );
    if recs.iter().any(|r| !md::throttle_mark(r.m).is_empty()) {
        tables.push_str(
            "A speed ending in T was measured while the GPU was throttled (see Clocks and throttling).\n\n",
        );
    }

    let fig = ratio_figure(&per_device, all_sizes.len(), &ctx.title_suffix());
    let chart = ctx.chart(&fig, "simt-vs-cublas", "the SIMT family against cuBLAS")?;
    for f in &mut ratio_findings {
        f.chart = Some(chart.svg.clone());
    }

    // Where the rest goes: Nsight Compute, where its files are next to the results.
    let gpus: Vec<GpuFacts> = recs
        .iter()
        .filter(|r| r.m.toolchain == Toolchain::Cuda)
        .map(|r| gpu_facts(data, r.run, r.m))
        .collect();
    let files: Vec<ncu::NcuFile> = ncu::discover(from)
        .iter()
        .map(|(p, name)| ncu::load(p, name))
        .collect();
    let profile = simt_profile::where_the_rest_goes(&files, &gpus);

    sec.findings = ratio_findings;
    if let Some((text, short, weight)) = profile.finding {
        sec.findings.push(
            Shown::legacy(Topic::Simt, text, SIMT)
                .short(short)
                .weight(weight),
        );
    }
    if !sec.findings.is_empty() {
        s.push_str("**In short.**\n\n");
        for f in &sec.findings {
            let _ = writeln!(s, "- {}", f.text);
        }
        s.push('\n');
    }
    s.push_str(&chart.markdown);
    s.push_str(&tables);
    let hints_rows = data.experiment("hints").iter().any(|r| is_simt(r.m));
    if hints_rows {
        let _ = writeln!(
            s,
            "Each switch of the family moved one at a time from the tuned configuration: [{}](#{}).\n",
            super::sweeps::HINTS,
            md::anchor(super::sweeps::HINTS)
        );
    }
    s.push_str(&profile.markdown);
    sec.markdown = s;
    Ok(sec)
}

/// The chart: every device a panel, the bars each kernel's and toolchain's
/// ratio to cuBLAS per size, a line at 1.
fn ratio_figure(per_device: &[(&str, Vec<SizeRows>)], sizes: usize, suffix: &str) -> Figure {
    let mut series: Vec<(String, Toolchain)> = Vec::new();
    for (_, rows) in per_device {
        for sr in rows {
            for (k, t, _) in &sr.cells {
                if !series.contains(&(k.clone(), *t)) {
                    series.push((k.clone(), *t));
                }
            }
        }
    }
    // The family first, CUDA before OpenCL as everywhere in the report.
    let tc_order = |t: &Toolchain| Toolchain::ALL.iter().position(|x| x == t);
    series.sort_by_key(|(k, t)| (k == CLBLAST, k.clone(), tc_order(t)));
    let styles: Vec<Style> = series
        .iter()
        .map(|(k, t)| {
            let c = if k == CLBLAST {
                light(color(*t))
            } else {
                color(*t)
            };
            Style::new(format!("{k} {}", data::toolchain_name(*t)), c)
        })
        .collect();
    let mut panels = Vec::new();
    for (device, rows) in per_device {
        let cats: Vec<String> = rows.iter().map(|r| data::size_label(r.size)).collect();
        let mut values = Vec::new();
        let mut notes = Vec::new();
        for sr in rows {
            let mut v = Vec::new();
            let mut n = Vec::new();
            for (k, t) in &series {
                let cell = sr.cells.iter().find(|(ck, ct, _)| ck == k && ct == t);
                v.push(cell.and_then(|(_, _, r)| data::vs_vendor(r.m)));
                n.push(cell.map(|(_, _, r)| match data::vs_vendor(r.m) {
                    Some(x) => format!("{x:.2}"),
                    None => r.m.status.label().to_string(),
                }));
            }
            values.push(v);
            notes.push(n);
        }
        let title = if per_device.len() > 1 {
            device.to_string()
        } else {
            String::new()
        };
        let mut p = Panel::new(title, XAxis::Categories(cats), "size", "x cuBLAS (median)");
        p.bars = Some(Bars {
            styles: styles.clone(),
            values,
            notes,
        });
        p.refs.push(RefLine {
            label: "cuBLAS".into(),
            y: 1.0,
            color: VENDOR_COLOR,
        });
        panels.push(p);
    }
    let mut legend = styles;
    legend.push(Style::new("cuBLAS = 1", VENDOR_COLOR).dashed());
    let n = panels.len();
    Figure {
        title: format!("The SIMT family at its tuned best, against cuBLAS{suffix}"),
        legend,
        panels,
        cols: n.min(2),
        panel_w: (90 * sizes as u32 * series.len().max(1) as u32 / 2).clamp(640, 1400),
        panel_h: 420,
    }
}

/// Per toolchain the family's ratio to cuBLAS at the headline sizes, and the
/// size where the family (its best toolchain) is furthest from cuBLAS.
fn findings(device: &str, rows: &[SizeRows], name_device: bool) -> Vec<Shown> {
    let on = if name_device {
        format!(" on {device}")
    } else {
        String::new()
    };
    let mut out = Vec::new();
    let family: Vec<&String> = {
        let mut k: Vec<&String> = Vec::new();
        for sr in rows {
            for (kk, _, r) in &sr.cells {
                if is_simt(r.m) && !k.contains(&kk) {
                    k.push(kk);
                }
            }
        }
        k
    };
    let squares: Vec<&SizeRows> = rows
        .iter()
        .filter(|r| r.size.0 == r.size.1 && r.size.1 == r.size.2)
        .collect();
    let mut headline: Vec<&SizeRows> = squares
        .iter()
        .copied()
        .filter(|r| HEADLINE.contains(&r.size.0))
        .collect();
    if headline.is_empty() {
        headline.extend(squares.last().copied().or(rows.last()));
    }
    for k in &family {
        for t in Toolchain::ALL {
            let at: Vec<(String, f64)> = headline
                .iter()
                .filter_map(|sr| Some((data::size_label(sr.size), sr.ratio(k, t)?)))
                .collect();
            let Some(first) = at.first() else {
                continue;
            };
            let parts: Vec<String> = at
                .iter()
                .map(|(size, r)| format!("{r:.2}x cuBLAS at {size}"))
                .collect();
            let tc = data::toolchain_name(t);
            out.push(
                Shown::legacy(
                    Topic::Simt,
                    format!(
                        "**{tc} {k}{on}** at its tuned configuration: {} (cuBLAS SGEMM in the same run).",
                        md::join_and(&parts)
                    ),
                    SIMT,
                )
                .short(format!("{tc} {k}{on} reaches {}.", md::join_and(&parts)))
                .weight(1.0 - first.1),
            );
        }
    }
    // The family's best toolchain per size; the size where that is lowest.
    let best: Vec<(String, f64, Toolchain)> = rows
        .iter()
        .filter_map(|sr| {
            sr.cells
                .iter()
                .filter(|(_, _, r)| is_simt(r.m))
                .filter_map(|(_, t, r)| Some((data::vs_vendor(r.m)?, *t)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(v, t)| (data::size_label(sr.size), v, t))
        })
        .collect();
    if best.len() > 1 {
        if let Some((size, v, t)) = best.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
            let (hi_size, hi, _) = best
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or(&best[0]);
            out.push(
                Shown::legacy(
                    Topic::Simt,
                    format!(
                        "**The SIMT family{on} is furthest from cuBLAS at {size}**: {v:.2}x at best ({}), \
                         against {hi:.2}x at {hi_size}, its closest.",
                        data::toolchain_name(*t)
                    ),
                    SIMT,
                )
                .short(format!(
                    "The SIMT family{on} is furthest from cuBLAS at {size}: {v:.2}x at best ({}).",
                    data::toolchain_name(*t)
                ))
                .weight(1.0 - v),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::backend::{DeviceInfo, DeviceKind, KernelResources};
    use crate::gemm::driver::Status;
    use crate::measure::Plan;
    use crate::ptx::PtxMix;
    use crate::results::{Environment, ResultWriter};

    const GPU: &str = "Made-up H200";

    fn gpu(t: Toolchain) -> DeviceInfo {
        DeviceInfo {
            toolchain: t,
            id: device_id(t).into(),
            name: GPU.into(),
            vendor: "NVIDIA".into(),
            platform: "p".into(),
            kind: DeviceKind::Gpu,
            driver_version: None,
            runtime_version: None,
            compiler_version: None,
            compute_capability: Some((9, 0)),
            compute_units: Some(132),
            clock_mhz: Some(1980),
            global_mem_bytes: None,
            local_mem_bytes: None,
            shared_mem_per_sm_bytes: None,
            max_work_group_size: None,
            registers_per_block: None,
            registers_per_sm: None,
            max_threads_per_sm: None,
            max_blocks_per_sm: None,
            warp_size: None,
            l2_cache_bytes: None,
            memory_bandwidth_gbs: None,
            pci_bus_id: None,
        }
    }

    fn device_id(t: Toolchain) -> &'static str {
        match t {
            Toolchain::Cuda => "cuda:0",
            Toolchain::OpenCl => "opencl:1:0",
        }
    }

    /// A made-up compare row; `vendor` is cuBLAS's GFLOP/s in the same run.
    fn row(
        kernel: &str,
        t: Toolchain,
        size: (usize, usize, usize),
        g: f64,
        vendor: f64,
    ) -> Measurement {
        let mut m = crate::experiment::failed_row(
            "compare",
            GPU,
            device_id(t),
            t,
            kernel,
            Status::Ok,
            size,
        );
        m.gflops = Some(g);
        m.vs_vendor = Some(g / vendor);
        if kernel != data::VENDOR {
            m.label = Some("tuned at 4096x4096x4096".into());
            m.config.0.insert("BM".into(), 128);
            m.config.0.insert("BN".into(), 128);
            m.hints = m.hints.with_switch("ASYNC_COPY", true);
            m.resources = Some(KernelResources {
                registers: Some(128),
                ..Default::default()
            });
            m.occupancy = Some(0.25);
            m.ptx_mix = Some(PtxMix {
                fma: 512,
                total: 1280,
                ..Default::default()
            });
        }
        m
    }

    fn write_run(dir: &Path, rows: Vec<Measurement>) {
        let env = Environment::capture(
            vec![gpu(Toolchain::Cuda), gpu(Toolchain::OpenCl)],
            1,
            Plan::default(),
        );
        let mut w = ResultWriter::create(dir, env).unwrap();
        for m in rows {
            w.push(m).unwrap();
        }
        w.finish().unwrap();
    }

    fn results(root: &Path) {
        use Toolchain::{Cuda, OpenCl};
        let mut rows = Vec::new();
        for (size, cublas, cu, cl) in [
            ((4096, 4096, 4096), 50000.0, 48000.0, 40000.0),
            ((8192, 8192, 8192), 52000.0, 46800.0, 41600.0),
            ((16384, 128, 2048), 20000.0, 9000.0, 8000.0),
        ] {
            rows.push(row(data::VENDOR, Cuda, size, cublas, cublas));
            rows.push(row("simt", Cuda, size, cu, cublas));
            rows.push(row("simt", OpenCl, size, cl, cublas));
            rows.push(row(CLBLAST, Cuda, size, cu * 0.8, cublas));
        }
        let mut failed = row("xgemm", OpenCl, (4096, 4096, 4096), 1.0, 1.0);
        failed.status = Status::WrongResult("max error 1e3".into());
        rows.push(failed);
        write_run(&root.join("compare-tuned"), rows);
    }

    /// ncu's rows for one launch: (metric, unit, value).
    fn launch(id: u32, kernel: &str, metrics: &[(&str, &str, &str)]) -> String {
        let mut s = String::new();
        for (name, unit, value) in metrics {
            let _ = writeln!(
                s,
                r#""{id}","902","gemmlab","h","{kernel}","1","13","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","{name}","{unit}","{value}""#
            );
        }
        s
    }

    const HEADER: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value""#;

    fn ncu_files(root: &Path) {
        let cuda = format!(
            "==PROF== Connected to process 902\n{HEADER}\n{}{}== exit 0\n",
            launch(
                0,
                "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
                &[
                    ("gpu__time_duration.sum", "ns", "2,750,000"),
                    (
                        "smsp__issue_active.avg.pct_of_peak_sustained_active",
                        "%",
                        "90"
                    ),
                ]
            ),
            launch(
                1,
                "simt_gemm",
                &[
                    ("gpu__time_duration.sum", "ns", "3,862,000"),
                    ("launch__registers_per_thread", "register/thread", "128"),
                    (
                        "sm__warps_active.avg.pct_of_peak_sustained_active",
                        "%",
                        "24.5"
                    ),
                    (
                        "smsp__issue_active.avg.pct_of_peak_sustained_active",
                        "%",
                        "85"
                    ),
                    (
                        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                        "%",
                        "62"
                    ),
                    (
                        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                        "inst",
                        "68,719,476,736"
                    ),
                    ("smsp__inst_executed.sum", "inst", "2,863,311,531"),
                    (
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                        "",
                        "1,024"
                    ),
                    (
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                        "",
                        "0"
                    ),
                    (
                        "sm__cycles_elapsed.avg.per_second",
                        "cycle/nsecond",
                        "1.755"
                    ),
                    (
                        "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
                        "ratio",
                        "1"
                    ),
                    (
                        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
                        "ratio",
                        "0.30"
                    ),
                    (
                        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                        "ratio",
                        "0.45"
                    ),
                    (
                        "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
                        "ratio",
                        "0.20"
                    ),
                    (
                        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
                        "ratio",
                        "0.10"
                    ),
                ]
            ),
        );
        fs::write(root.join("ncu-cuda.csv"), cuda).unwrap();
        // CUDA's build of the same configuration first, then OpenCL's PTX; no FFMA count.
        let opencl = format!(
            "{HEADER}\n{}wrote 3 measurements\n{}",
            launch(
                0,
                "simt_gemm",
                &[("gpu__time_duration.sum", "ns", "3,900,000")]
            ),
            launch(
                1,
                "simt_gemm",
                &[
                    ("gpu__time_duration.sum", "ns", "4,800,000"),
                    ("launch__registers_per_thread", "register/thread", "n/a"),
                    (
                        "smsp__issue_active.avg.pct_of_peak_sustained_active",
                        "%",
                        "70"
                    ),
                ]
            ),
        );
        fs::write(root.join("sub").join("ncu-opencl-jit.csv"), opencl).unwrap();
    }

    fn report(root: &Path) -> String {
        let out = root.join("out");
        let opts = super::super::Options {
            from: vec![root.join("in")],
            out: out.clone(),
            png: false,
            font: None,
            size: None,
        };
        let o = super::super::generate_with(&opts, Err("no font (test)".into())).unwrap();
        fs::read_to_string(o.markdown).unwrap()
    }

    fn part(md: &str) -> &str {
        let at = md
            .find(&format!("\n## {SIMT}\n"))
            .unwrap_or_else(|| panic!("no section in\n{md}"));
        let body = &md[at + 1..];
        &body[..body[3..].find("\n## ").map_or(body.len(), |i| i + 3)]
    }

    #[test]
    fn fp32_lanes_by_compute_capability() {
        assert_eq!(fp32_lanes((9, 0)), Some(128));
        assert_eq!(fp32_lanes((8, 0)), Some(64));
        assert_eq!(fp32_lanes((8, 6)), Some(128));
        assert_eq!(fp32_lanes((6, 1)), Some(128));
        assert_eq!(fp32_lanes((3, 5)), Some(192));
        assert_eq!(fp32_lanes((2, 1)), None);
        let h200 = GpuFacts {
            compute_capability: Some((9, 0)),
            sms: Some(132),
            clock_mhz: Some(1980),
        };
        assert!((h200.peak_gflops().unwrap() - 66908.16).abs() < 1e-6);
        assert_eq!(GpuFacts::default().peak_gflops(), None);
    }

    #[test]
    fn the_section_from_tuned_rows_and_ncu_files() {
        let root = std::env::temp_dir().join(format!("gemmlab-simt-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        results(&root.join("in"));
        fs::create_dir_all(root.join("in/sub")).unwrap();
        ncu_files(&root.join("in"));
        let md = report(&root);
        let s = part(&md);
        println!("{s}");
        assert!(md.find("## Speed: kernels").unwrap() < md.find(&format!("## {SIMT}")).unwrap());
        assert!(s.contains("Sizes: 4096, 8192 and 16384x128x2048."), "{s}");
        assert!(s.contains("](charts/simt-vs-cublas.svg)"), "{s}");
        assert!(root.join("out/charts/simt-vs-cublas.svg").is_file());
        // 48000 / (132 x 128 x 2 x 1.98 GHz) = 71.7% of the peak; FMA share 512/1280.
        assert!(s.contains("| 4096 | CUDA | simt | 48000 | 0.96 | 71.7% | 128 | 25% | 40.0% | BM=128 BN=128; published + ASYNC_COPY=1 (tuned at 4096x4096x4096) |"), "{s}");
        assert!(
            s.contains(
                "| 4096 | CUDA | cuBLAS | 50000 | 1.00 | 74.7% | - | - | - | cuBLAS SGEMM |"
            ),
            "{s}"
        );
        assert!(
            s.contains("| 4096 | OpenCL | xgemm | WRONG | - | - |"),
            "{s}"
        );
        // Findings: each toolchain at the headline sizes, the furthest size, ncu.
        assert!(s.contains("**CUDA simt** at its tuned configuration: 0.96x cuBLAS at 4096 and 0.90x cuBLAS at 8192"), "{s}");
        assert!(s.contains("**The SIMT family is furthest from cuBLAS at 16384x128x2048**: 0.45x at best (CUDA)"), "{s}");
        // ncu: the longest launch of each kind, every launch listed, n/a for what is missing.
        assert!(s.contains("| `ncu-cuda.csv` | CUDA | simt_gemm | 1 | 3.862 ms | 128 | 24.5% | 85.0% | 62.0% | 75.0% | 1024 / 0 | 1.755 | long_scoreboard 0.45, barrier 0.30, mio_throttle 0.20 |"), "{s}");
        assert!(s.contains("| `sub/ncu-opencl-jit.csv` | OpenCL PTX via CUDA JIT | simt_gemm | 1 | 4.800 ms | n/a | n/a | 70.0% | n/a | n/a | n/a / n/a | n/a | n/a |"), "{s}");
        assert!(s.contains("| `ncu-cuda.csv` | cuBLAS | sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_t... | 0 | 2.750 ms |"), "{s}");
        assert!(s.contains("simt_gemm 1 (ID 1: 3.862 ms); cuBLAS 1 (ID 0: 2.750 ms) `sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32`"), "{s}");
        assert!(s.contains("- `sub/ncu-opencl-jit.csv` (OpenCL's PTX through the CUDA JIT): 2 launches: simt_gemm 2 (IDs 0: 3.900 ms, 1: 4.800 ms)"), "{s}");
        assert!(s.contains("issue slots busy 85.0% x FFMA share 75.0% = **63.7%** of the FP32 peak at the measured clock; measured over the launch's time: 60.0%"), "{s}");
        assert!(s.contains("The FFMA share loses more"), "{s}");
        assert!(
            s.contains("SM clock 1.755 GHz, 88.6% of the reported maximum 1980 MHz."),
            "{s}"
        );
        assert!(s.contains("issue slots busy 70.0%, FFMA share n/a; their product is n/a (a metric is missing)."), "{s}");
        assert!(md.contains("In Nsight Compute, simt_gemm's issue-slot use x FFMA share of the FP32 peak: CUDA 85% x 75% = 64% (the FFMA share loses more)."), "{md}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn without_ncu_files_the_profile_is_n_a_and_without_the_family_no_section() {
        let root = std::env::temp_dir().join(format!("gemmlab-simt-none-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        results(&root.join("in"));
        let md = report(&root);
        let s = part(&md);
        assert!(s.contains("No Nsight Compute output (`ncu-*.csv`) next to these results: every metric of this part is n/a."), "{s}");
        assert!(!s.contains("Nsight Compute on simt_gemm"), "{s}");

        let _ = fs::remove_dir_all(&root);
        write_run(
            &root.join("in/compare"),
            vec![row(data::VENDOR, Toolchain::Cuda, (64, 64, 64), 1.0, 1.0)],
        );
        assert!(!report(&root).contains(SIMT));
        let _ = fs::remove_dir_all(&root);
    }
}
