//! Every kernel at its published defaults on every architecture under every
//! compiler (`gemmlab atlas`), and what changes between compiler generations,
//! architectures and front ends.

use std::cmp::Ordering::{self, Equal, Greater, Less};

use crate::gemm::driver::Status;

use super::super::data::{self, is_published, kernel_order, Rec};
use super::super::stats::distinct;
use super::super::{Data, Finding, Topic};
use super::{archs_of, cells, Cell, Compiler, Kind, ATLAS_EXPERIMENT};

pub struct Atlas<'a> {
    /// The atlas's rows; none when the offline rows all come from sweeps.
    pub rows: usize,
    /// Rows without an architecture or a compiler.
    pub lost: usize,
    pub cells: Vec<Cell<'a>>,
    pub archs: Vec<String>,
    pub compilers: Vec<Compiler>,
    pub kernels: Vec<String>,
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

/// A compiler's refused rows; `kernel`, `arch`, `status` and `reason` of the first.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Refusal {
    pub compiler: String,
    pub built: usize,
    pub total: usize,
    pub archs: Vec<String>,
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
    let offline = Some(data.offline()).filter(|o| !o.is_empty())?;
    let recs: Vec<Rec> = (offline.into_iter())
        .filter(|r| r.m.experiment == ATLAS_EXPERIMENT)
        .collect();
    let (cells, lost) = cells(&recs);
    let mut compilers = distinct(cells.iter().map(|c| c.compiler.clone()));
    compilers.sort();
    let mut kernels = distinct(cells.iter().map(|c| c.m.kernel.clone()));
    kernels.sort_by(|a, b| kernel_order(a, b));
    let mut a = Atlas {
        rows: recs.len(),
        lost,
        archs: archs_of(cells.iter()),
        cells,
        compilers,
        kernels,
        findings: Vec::new(),
    };
    if a.rows > 0 {
        let across = a.kernels.iter().filter_map(|k| kernel_across(&a, k));
        let rest = [generations(&a), arch_spread(&a), front_end(&a)];
        let rest = rest.into_iter().chain([Some(spills(&a)), refusals(&a)]);
        a.findings = across.chain(rest.flatten()).collect();
    }
    Some(a)
}

/// The rows a compiler could not build.
fn refusals(a: &Atlas) -> Option<Finding> {
    let bad: Vec<&Cell> = (a.cells.iter())
        .filter(|c| c.m.resources.is_none())
        .filter(|c| !matches!(c.m.status, Status::Ok | Status::Unavailable(_)))
        .collect();
    let by: Vec<Refusal> = (distinct(bad.iter().map(|c| &c.compiler.name)).into_iter())
        .map(|n| {
            let v: Vec<&&Cell> = bad.iter().filter(|c| c.compiler.name == *n).collect();
            let total = a.cells.iter().filter(|c| c.compiler.name == *n).count();
            Refusal {
                compiler: n.clone(),
                built: total - v.len(),
                total,
                archs: archs_of(v.iter().map(|c| **c)),
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
            let (lo, hi) = (at.iter().map(|x| x.1).min()?, at.iter().map(|x| x.1).max()?);
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
    let spills = a.cells.iter().filter(|c| c.m.kernel == k).filter_map(spill);
    let kind = Kind::KernelAcross {
        kernel: k.to_string(),
        compilers,
        spills: spills.collect(),
    };
    Some(finding(kind, Some(k)).detail())
}

fn spill(c: &Cell) -> Option<Spill> {
    Some(Spill {
        bytes: data::spill_bytes(c.m).filter(|b| *b > 0)?,
        kernel: c.m.kernel.clone(),
        arch: c.arch.clone(),
        compiler: c.compiler.name.clone(),
        registers: data::registers(c.m),
    })
}

/// The item with the largest key, the first of equals.
fn first_max<T>(items: impl DoubleEndedIterator<Item = T>, key: impl Fn(&T) -> f64) -> Option<T> {
    items.rev().max_by(|x, y| key(x).total_cmp(&key(y)))
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

/// A finding over register pairs: its kind from how many differ and the
/// largest relative change (its weight), charted at its kernel.
fn pairs_finding(
    a: &Atlas,
    pairs: &[RegChange],
    kind: impl FnOnce(usize, Option<RegChange>) -> Kind,
) -> Option<Finding> {
    if pairs.is_empty() {
        return None;
    }
    let ch = |p: &&RegChange| {
        (f64::from(p.to_registers) / f64::from(p.from_registers.max(1)) - 1.0).abs()
    };
    let differ: Vec<&RegChange> = (pairs.iter())
        .filter(|p| p.from_registers != p.to_registers)
        .collect();
    let best = first_max(differ.iter().copied(), ch);
    let k = best.map_or(a.kernels.first(), |b| Some(&b.kernel));
    let f = finding(kind(differ.len(), best.cloned()), k.map(String::as_str));
    Some(f.weight(best.as_ref().map_or(0.0, ch)))
}

/// Consecutive NVRTC generations on the same architecture.
fn generations(a: &Atlas) -> Option<Finding> {
    let nvrtc: Vec<&Compiler> = a.compilers.iter().filter(|c| c.is_nvrtc()).collect();
    let pairs: Vec<RegChange> = (a.points())
        .flat_map(|(k, arch)| {
            let at: Vec<(&Compiler, u32)> = (nvrtc.iter())
                .filter_map(|c| Some((*c, a.registers(k, arch, c)?)))
                .collect();
            let pairs = at.windows(2).map(|w| pair(k, arch, w[0], w[1]));
            pairs.collect::<Vec<_>>()
        })
        .collect();
    pairs_finding(a, &pairs, |differ, largest| Kind::Generations {
        pairs: pairs.len(),
        differ,
        largest,
    })
}

/// The largest spread of registers across architectures with one compiler.
fn arch_spread(a: &Atlas) -> Option<Finding> {
    let spreads = (a.kernels.iter()).flat_map(|k| a.compilers.iter().map(move |c| (k, c)));
    let spreads = spreads.filter_map(|(k, c)| {
        let at = a.along(k, c);
        let low = at.iter().min_by_key(|x| x.1)?.clone();
        let high = at.iter().max_by_key(|x| x.1)?.clone();
        let spread = f64::from(high.1) / f64::from(low.1.max(1)) - 1.0;
        (high.1 > low.1).then_some((k, c, low, high, spread))
    });
    let (k, c, low, high, spread) = first_max(spreads, |x| x.4)?;
    let kind = Kind::ArchSpread {
        kernel: k.clone(),
        compiler: c.name.clone(),
        low,
        high,
        spread,
    };
    Some(finding(kind, Some(k)).weight(spread))
}

/// OpenCL's front end against NVRTC of the same CUDA release on the same architecture.
fn front_end(a: &Atlas) -> Option<Finding> {
    let same = |o: &Compiler, c: &Compiler| {
        c.is_nvrtc() && c.release().is_some() && c.release() == o.release()
    };
    let pairs: Vec<RegChange> = (a.compilers.iter().filter(|c| c.opencl))
        .filter_map(|o| Some((a.compilers.iter().find(|c| same(o, c))?, o)))
        .flat_map(|(n, o)| {
            a.points().filter_map(move |(k, arch)| {
                let (rn, ro) = (a.registers(k, arch, n)?, a.registers(k, arch, o)?);
                Some(pair(k, arch, (n, rn), (o, ro)))
            })
        })
        .collect();
    let count = |o: Ordering| {
        (pairs.iter())
            .filter(|p| p.to_registers.cmp(&p.from_registers) == o)
            .count()
    };
    let (fewer, more, same) = (count(Less), count(Greater), count(Equal));
    pairs_finding(a, &pairs, |_, largest| Kind::FrontEnd {
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
    let spilling: Vec<Spill> = a.cells.iter().filter_map(spill).collect();
    let worst = (0..spilling.len()).max_by_key(|&i| spilling[i].bytes);
    let weight = spilling.len() as f64 / with_report.max(1) as f64;
    let kind = Kind::Spills {
        archs: a.archs.len(),
        compilers: a.compilers.len(),
        with_report,
        spilling,
        worst,
    };
    finding(kind, Some("overview")).weight(weight)
}
