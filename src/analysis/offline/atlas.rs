//! Every kernel at its published defaults on every architecture under every
//! compiler (`gemmlab atlas`), and what changes between compiler generations,
//! architectures and front ends.

use crate::gemm::driver::Status;

use super::super::data::{self, kernel_order, Rec};
use super::super::{Data, Finding, Topic};
use super::{archs_of, cells, distinct, is_published, Cell, Compiler, Kind, ATLAS_EXPERIMENT};

/// An OpenCL compiler, its rows, and each change made to its PTX with how many rows had it.
pub type Adapted = (String, usize, Vec<(String, usize)>);

pub struct Atlas<'a> {
    /// The atlas's rows; none when the offline rows all come from sweeps.
    pub rows: usize,
    /// Rows without an architecture or a compiler.
    pub lost: usize,
    pub cells: Vec<Cell<'a>>,
    pub archs: Vec<String>,
    pub compilers: Vec<Compiler>,
    pub kernels: Vec<String>,
    /// Where OpenCL's PTX was captured: "origin (driver)".
    pub origins: Vec<String>,
    /// Per OpenCL compiler: its rows, and each change made to its PTX
    /// (".target sm_90", ".version 9.0 -> 7.8") with how many rows had it.
    pub adapted: Vec<Adapted>,
    /// Each architecture with its newest NVRTC.
    pub newest: Vec<(String, Option<Compiler>)>,
    pub findings: Vec<Finding>,
}

/// Registers of one kernel with one compiler along the architectures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Along {
    pub compiler: String,
    pub first: (String, u32),
    pub last: (String, u32),
    pub archs: usize,
    /// The lowest and highest, when one lies outside the ends.
    pub range: Option<(u32, u32)>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Spill {
    pub kernel: String,
    pub arch: String,
    pub compiler: String,
    pub registers: Option<u32>,
    pub bytes: u64,
}

/// Registers of a kernel on an architecture with two compilers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RegChange {
    pub kernel: String,
    pub arch: String,
    pub from: String,
    pub to: String,
    pub from_registers: u32,
    pub to_registers: u32,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Refusal {
    pub compiler: String,
    pub built: usize,
    pub total: usize,
    pub archs: Vec<String>,
    /// The first refused row.
    pub kernel: String,
    pub arch: String,
    pub status: String,
    pub reason: Option<String>,
}

impl<'a> Atlas<'a> {
    /// The row of `kernel` on `arch` under `comp`, the published one first.
    pub fn find(&self, kernel: &str, arch: &str, comp: &Compiler) -> Option<&Cell<'a>> {
        let mut of = (self.cells.iter())
            .filter(|c| c.m.kernel == kernel && c.arch == arch && c.compiler == *comp);
        let first = of.clone().next();
        of.find(|c| is_published(c.m)).or(first)
    }

    pub fn registers(&self, kernel: &str, arch: &str, comp: &Compiler) -> Option<u32> {
        data::registers(self.find(kernel, arch, comp)?.m)
    }

    /// The registers of `kernel` under `comp` along the architectures that have a row.
    fn along(&self, kernel: &str, comp: &Compiler) -> Vec<(String, u32)> {
        (self.archs.iter())
            .filter_map(|a| Some((a.clone(), self.registers(kernel, a, comp)?)))
            .collect()
    }

    /// The architectures a compiler has rows for.
    pub fn covered(&self, c: &Compiler) -> Vec<&str> {
        let has = |a: &&String| self.cells.iter().any(|x| x.compiler == *c && x.arch == **a);
        self.archs.iter().filter(has).map(String::as_str).collect()
    }

    /// Every (kernel, architecture) pair.
    fn points(&self) -> impl Iterator<Item = (&String, &String)> {
        (self.kernels.iter()).flat_map(|k| self.archs.iter().map(move |a| (k, a)))
    }
}

/// A finding of the atlas, with the chart `offline-<chart>`.
fn finding(kind: Kind, chart: Option<&str>) -> Finding {
    Finding::new(Topic::Offline, super::super::Kind::Offline(kind))
        .chart(chart.map(|k| format!("offline-{k}")))
}

/// `None` without offline rows at all.
pub fn analyse(data: &Data) -> Option<Atlas<'_>> {
    let offline = data.offline();
    if offline.is_empty() {
        return None;
    }
    let recs: Vec<Rec> = (offline.into_iter())
        .filter(|r| r.m.experiment == ATLAS_EXPERIMENT)
        .collect();
    let (cells, lost) = cells(&recs);
    let mut compilers = distinct(cells.iter().map(|c| c.compiler.clone()));
    compilers.sort_by(Compiler::order);
    let mut kernels = distinct(cells.iter().map(|c| c.m.kernel.clone()));
    kernels.sort_by(|a, b| kernel_order(a, b));
    let mut a = Atlas {
        rows: recs.len(),
        lost,
        archs: archs_of(cells.iter()),
        origins: origins(&cells),
        adapted: adapted(&cells, &compilers),
        newest: Vec::new(),
        cells,
        compilers,
        kernels,
        findings: Vec::new(),
    };
    a.newest = (a.archs.iter())
        .map(|arch| {
            let has = |c: &&Compiler| c.is_nvrtc() && a.covered(c).contains(&arch.as_str());
            let c = (a.compilers.iter().filter(has)).max_by(|x, y| x.version.cmp(&y.version));
            (arch.clone(), c.cloned())
        })
        .collect();
    if a.rows > 0 {
        let across = a.kernels.iter().filter_map(|k| kernel_across(&a, k));
        let totals = [generations(&a), arch_spread(&a), front_end(&a)];
        let mut f: Vec<Finding> = across.chain(totals.into_iter().flatten()).collect();
        f.push(spills(&a));
        f.extend(refusals(&a));
        a.findings = f;
    }
    Some(a)
}

fn origins(cells: &[Cell]) -> Vec<String> {
    let notes = (cells.iter().filter(|c| c.compiler.opencl)).flat_map(|c| &c.m.build_notes);
    distinct(notes.filter_map(|n| n.strip_prefix("PTX from ")).map(|o| {
        // One origin per run and driver, not per kernel listing.
        let short = o.split_whitespace().next().unwrap_or(o);
        let driver = o.find('(').map_or("", |i| &o[i..]);
        format!("{short} {driver}").trim().to_string()
    }))
}

fn adapted(cells: &[Cell], comps: &[Compiler]) -> Vec<Adapted> {
    let changes = |c: &Cell| {
        distinct(c.m.build_notes.iter().map(|n| n.trim()).filter_map(|n| {
            match n.strip_prefix(".target ") {
                Some(rest) => Some(format!(".target {}", rest.split("->").next()?.trim())),
                None => n.starts_with(".version ").then(|| n.to_string()),
            }
        }))
    };
    (comps.iter().filter(|c| c.opencl))
        .map(|comp| {
            let rows: Vec<&Cell> = cells.iter().filter(|x| x.compiler == *comp).collect();
            let all: Vec<String> = rows.iter().flat_map(|c| changes(c)).collect();
            let counted = (distinct(all.iter()).into_iter())
                .map(|k| (k.clone(), all.iter().filter(|x| *x == k).count()))
                .collect();
            (comp.name.clone(), rows.len(), counted)
        })
        .collect()
}

/// The rows a compiler could not build, with the first line of its log.
fn refusals(a: &Atlas) -> Option<Finding> {
    let bad: Vec<&Cell> = (a.cells.iter())
        .filter(|c| c.m.resources.is_none())
        .filter(|c| !matches!(c.m.status, Status::Ok | Status::Unavailable(_)))
        .collect();
    let by: Vec<Refusal> = (distinct(bad.iter().map(|c| &c.compiler.name)).into_iter())
        .map(|n| {
            let v: Vec<&Cell> = bad
                .iter()
                .copied()
                .filter(|c| c.compiler.name == *n)
                .collect();
            let total = a.cells.iter().filter(|c| c.compiler.name == *n).count();
            Refusal {
                compiler: n.clone(),
                built: total - v.len(),
                total,
                archs: archs_of(v.iter().copied()),
                kernel: v[0].m.kernel.clone(),
                arch: v[0].arch.clone(),
                status: v[0].m.status.label().to_string(),
                reason: v[0].m.status.reason().map(str::to_string),
            }
        })
        .collect();
    let (refused, of) = (bad.len(), a.cells.len());
    let weight = refused as f64 / of.max(1) as f64;
    (refused > 0).then(|| finding(Kind::Refused { refused, of, by }, None).weight(weight))
}

/// Per kernel: each compiler's registers at its first and last architecture,
/// its range, and the spills.
fn kernel_across(a: &Atlas, k: &str) -> Option<Finding> {
    let compilers: Vec<Along> = (a.compilers.iter())
        .filter_map(|c| {
            let at = a.along(k, c);
            let (first, last) = (at.first()?.clone(), at.last()?.clone());
            let lo = at.iter().map(|x| x.1).min()?;
            let hi = at.iter().map(|x| x.1).max()?;
            let outside = lo < first.1.min(last.1) || hi > first.1.max(last.1);
            Some(Along {
                compiler: c.name.clone(),
                first,
                last,
                archs: at.len(),
                range: (at.len() > 2 && outside).then_some((lo, hi)),
            })
        })
        .collect();
    if compilers.is_empty() {
        return None;
    }
    let spills = (a.cells.iter())
        .filter(|c| c.m.kernel == k && data::spill_bytes(c.m).is_some_and(|b| b > 0))
        .map(spill)
        .collect();
    let kernel = k.to_string();
    let kind = Kind::KernelAcross {
        kernel,
        compilers,
        spills,
    };
    Some(finding(kind, Some(k)).detail())
}

fn spill(c: &Cell) -> Spill {
    Spill {
        kernel: c.m.kernel.clone(),
        arch: c.arch.clone(),
        compiler: c.compiler.name.clone(),
        registers: data::registers(c.m),
        bytes: data::spill_bytes(c.m).unwrap_or(0),
    }
}

/// The item with the largest key, the first of equals.
fn first_max<T>(items: Vec<T>, key: impl Fn(&T) -> f64) -> Option<T> {
    (items.into_iter().rev()).max_by(|x, y| key(x).total_cmp(&key(y)))
}

fn pair(k: &str, arch: &str, from: (&Compiler, u32), to: (&Compiler, u32)) -> RegChange {
    RegChange {
        kernel: k.to_string(),
        arch: arch.to_string(),
        from: from.0.name.clone(),
        to: to.0.name.clone(),
        from_registers: from.1,
        to_registers: to.1,
    }
}

/// A finding over register pairs: its kind from the largest relative change
/// among the pairs that differ (weighted by it), charted at its kernel.
fn pairs_finding(
    a: &Atlas,
    pairs: &[RegChange],
    kind: impl FnOnce(Option<RegChange>) -> Kind,
) -> Option<Finding> {
    if pairs.is_empty() {
        return None;
    }
    let ch = |p: &RegChange| {
        (f64::from(p.to_registers) / f64::from(p.from_registers.max(1)) - 1.0).abs()
    };
    let differ = pairs.iter().filter(|p| p.from_registers != p.to_registers);
    let best = first_max(differ.collect(), |p| ch(p));
    let k = best.map_or(a.kernels.first(), |b| Some(&b.kernel));
    let f = finding(kind(best.cloned()), k.map(String::as_str));
    Some(f.weight(best.map_or(0.0, ch)))
}

/// The largest change of registers between two consecutive NVRTC generations
/// on the same architecture.
fn generations(a: &Atlas) -> Option<Finding> {
    let nvrtc: Vec<&Compiler> = a.compilers.iter().filter(|c| c.is_nvrtc()).collect();
    if nvrtc.len() < 2 {
        return None;
    }
    let mut pairs = Vec::new();
    for (k, arch) in a.points() {
        let at: Vec<(&Compiler, u32)> = (nvrtc.iter())
            .filter_map(|c| Some((*c, a.registers(k, arch, c)?)))
            .collect();
        pairs.extend(at.windows(2).map(|w| pair(k, arch, w[0], w[1])));
    }
    let differ = (pairs.iter()).filter(|p| p.from_registers != p.to_registers);
    let (n, differ) = (pairs.len(), differ.count());
    pairs_finding(a, &pairs, |largest| Kind::Generations {
        pairs: n,
        differ,
        largest,
    })
}

/// The largest spread of registers across architectures with one compiler.
fn arch_spread(a: &Atlas) -> Option<Finding> {
    let spreads = (a.kernels.iter()).flat_map(|k| a.compilers.iter().map(move |c| (k, c)));
    let spreads: Vec<_> = spreads
        .filter_map(|(k, c)| {
            let at = a.along(k, c);
            let low = at.iter().min_by_key(|x| x.1)?.clone();
            let high = at.iter().max_by_key(|x| x.1)?.clone();
            let spread = f64::from(high.1) / f64::from(low.1.max(1)) - 1.0;
            (high.1 > low.1).then_some((k, c, low, high, spread))
        })
        .collect();
    let (k, c, low, high, spread) = first_max(spreads, |x| x.4)?;
    let kernel = k.clone();
    let compiler = c.name.clone();
    let kind = Kind::ArchSpread {
        kernel,
        compiler,
        low,
        high,
        spread,
    };
    Some(finding(kind, Some(k)).weight(spread))
}

/// OpenCL's front end against NVRTC of the same CUDA release on the same architecture.
fn front_end(a: &Atlas) -> Option<Finding> {
    let mut pairs = Vec::new();
    for o in a.compilers.iter().filter(|c| c.opencl) {
        let same =
            |c: &&Compiler| c.is_nvrtc() && c.release().is_some() && c.release() == o.release();
        let Some(n) = a.compilers.iter().find(same) else {
            continue;
        };
        for (k, arch) in a.points() {
            if let (Some(rn), Some(ro)) = (a.registers(k, arch, n), a.registers(k, arch, o)) {
                pairs.push(pair(k, arch, (n, rn), (o, ro)));
            }
        }
    }
    let count = |f: fn(&u32, &u32) -> bool| {
        (pairs.iter())
            .filter(|p| f(&p.to_registers, &p.from_registers))
            .count()
    };
    let (fewer, more, same) = (count(u32::lt), count(u32::gt), count(u32::eq));
    pairs_finding(a, &pairs, |largest| Kind::FrontEnd {
        fewer,
        more,
        same,
        largest,
    })
}

fn spills(a: &Atlas) -> Finding {
    let with_report = (a.cells.iter())
        .filter(|c| data::spill_bytes(c.m).is_some())
        .count();
    let spilling: Vec<Spill> = (a.cells.iter())
        .filter(|c| data::spill_bytes(c.m).is_some_and(|b| b > 0))
        .map(spill)
        .collect();
    let worst = (0..spilling.len()).max_by_key(|&i| spilling[i].bytes);
    let weight = spilling.len() as f64 / with_report.max(1) as f64;
    let (archs, compilers) = (a.archs.len(), a.compilers.len());
    let kind = Kind::Spills {
        archs,
        compilers,
        with_report,
        spilling,
        worst,
    };
    finding(kind, Some("overview")).weight(weight)
}
