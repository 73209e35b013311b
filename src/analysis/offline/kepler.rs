//! The tutorial's Kepler claims, answered from the rows compiled offline for
//! sm_35 with NVRTC 11.8 (the last NVRTC that targets it): kernel 6's
//! registers, `VOLATILE_IDX`, register caps, kernel 11's tiles.

use std::collections::BTreeSet;

use crate::occupancy::{self, registers_for_blocks};
use crate::results::Measurement;

use super::super::data::{self, is_published, kernel_order, limits_of, threads_of, tile_of};
use super::super::stats::distinct;
use super::super::{Data, Finding, Topic};
use super::{caps_of, cells, occupancy_of, rel, Cell, Kind, Occ, Resources, ATLAS_EXPERIMENT};

/// The Kepler GPU of the tutorial (Tesla K40).
pub const KEPLER_ARCH: &str = "sm_35";
/// The tutorial's lower bound on kernel 6's registers per thread.
pub const TUTORIAL_LOWER_BOUND: u32 = 73;
/// The tutorial's cap just under the two-work-group limit.
pub const CAP_127: u32 = 127;

pub type VolatileRows<'a> = Option<Vec<(&'a Measurement, Option<i64>, Option<Occ>)>>;
type CapRows<'a> = Vec<(Option<u32>, &'a Measurement, Option<Occ>)>;
type TileRows<'a> = Option<Vec<(&'a Measurement, Option<Occ>)>>;

/// The answers and their tables: kernel 6's hints points with their register
/// change against the baseline (`None` without the baseline and the
/// `VOLATILE_IDX=1` point), its register sweep uncapped first, kernel 11's
/// tiles (`None` without both 8x4 and 4x4), every compiler's answers.
pub struct Kepler<'a> {
    /// The rows for sm_35 with NVRTC 11.8: in all, from the atlas, the
    /// register, hints and tiling sweeps.
    pub rows: [usize; 5],
    pub kernel6: Option<Finding>,
    pub hints_swept: bool,
    pub volatile_rows: VolatileRows<'a>,
    pub volatile: Option<Finding>,
    pub caps: CapRows<'a>,
    pub caps_finding: Option<Finding>,
    pub tiling_swept: bool,
    pub tiles: TileRows<'a>,
    pub tiles_finding: Option<Finding>,
    pub compilers: Option<Finding>,
}

impl Kepler<'_> {
    pub fn findings(&self) -> Vec<Finding> {
        let all = [&self.kernel6, &self.volatile, &self.caps_finding];
        let all = (all.into_iter()).chain([&self.tiles_finding, &self.compilers]);
        all.flatten().cloned().collect()
    }
}

/// Kernel 6's registers against the tutorial's lower bound and the SM's limits.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Kernel6 {
    pub registers: u32,
    pub lower_bound: u32,
    /// The experiment of the row.
    pub source: String,
    pub config: String,
    pub threads: Option<u32>,
    pub shared: Option<u64>,
    pub spills: Option<u64>,
    /// Other published rows: (registers, experiment).
    pub others: Vec<(u32, String)>,
    pub fit: Option<Fit>,
}

/// Two and three work-groups per SM against kernel 6's registers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fit {
    pub threads: u32,
    pub registers_per_sm: u32,
    pub register_unit: u32,
    pub shared_per_sm: u32,
    pub two: Option<u32>,
    pub occupancy: Option<Occ>,
    pub three: Option<u32>,
    pub third_shared_fits: bool,
}

/// `VOLATILE_IDX=1` on kernel 6, and (kernel, before, after) on the others.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Volatile {
    pub before: u32,
    pub after: u32,
    pub spills: Option<u64>,
    pub occupancy: (Option<Occ>, Option<Occ>),
    pub others: Vec<(String, u32, u32)>,
}

/// Kernel 6's register sweep: where spills start (cap, bytes, registers),
/// the lowest cap, and what `cap` (127) gives.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Caps {
    pub cap: u32,
    pub first_spill: Option<(u32, u64, Option<u32>)>,
    pub lowest_cap: Option<u32>,
    pub at: Option<CapAt>,
}

/// A cap of 127 against no cap; `moved`: (cap, registers) of the caps above
/// the uncapped count that change the allocation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CapAt {
    pub registers: Option<u32>,
    pub uncapped: Option<u32>,
    pub spills: Option<u64>,
    pub occupancy: Option<Occ>,
    pub uncapped_occupancy: Option<Occ>,
    pub moved: Vec<(u32, u32)>,
}

/// Kernel 11's 8x4 (`wide`) and 4x4 (`square`) tiles, and OpenCL's 8x4 from the atlas.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Tiles {
    pub wide: Resources,
    pub square: Resources,
    pub opencl: Option<(String, Resources)>,
}

/// The Kepler questions as one compiler answers them from its rows for sm_35:
/// kernel 6's registers published, with `VOLATILE_IDX=1`, under a cap of 127
/// (registers, spilled bytes), the highest cap that spills, kernel 11's 8x4 and 4x4.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Answers {
    pub compiler: String,
    pub kernel6: Option<u32>,
    pub volatile: Option<u32>,
    pub cap127: Option<(Option<u32>, Option<u64>)>,
    pub first_spill: Option<u32>,
    pub tiles: (Option<u32>, Option<u32>),
}

fn finding(kind: Kind) -> Finding {
    Finding::new(Topic::Kepler, super::super::Kind::Offline(kind))
}

fn occ(m: &Measurement) -> Option<Occ> {
    occupancy_of(m, KEPLER_ARCH)
}

/// `None` without offline rows.
pub fn analyse(data: &Data) -> Option<Kepler<'_>> {
    let offline = Some(data.offline()).filter(|o| !o.is_empty())?;
    let all = cells(&offline).0;
    let cells: Vec<Cell> = (all.iter())
        .filter(|c| c.arch == KEPLER_ARCH && c.compiler.is_kepler_nvrtc())
        .cloned()
        .collect();
    let of = |e: &str| -> Vec<&Cell> { cells.iter().filter(|c| c.m.experiment == e).collect() };
    let (hints, regs, tiling) = (of("hints"), of("registers"), of("tiling"));
    let atlas = of(ATLAS_EXPERIMENT).len();
    let (volatile_rows, volatile) = volatile(&hints);
    let (caps, caps_finding) = caps(&regs);
    let (tiles, tiles_finding) = tiles(&tiling, &all);
    Some(Kepler {
        rows: [cells.len(), atlas, regs.len(), hints.len(), tiling.len()],
        kernel6: kernel6(&cells),
        hints_swept: !hints.is_empty(),
        volatile_rows,
        volatile,
        caps,
        caps_finding,
        tiling_swept: (tiling.iter()).any(|c| c.m.kernel == "gemm11" && tile_of(c.m).is_some()),
        tiles,
        tiles_finding,
        compilers: compilers(&all),
    })
}

/// Each compiler's answers, NVRTC 11.8 first; a finding where at least two
/// compilers answer more than kernel 6's count (the atlas gives that for all).
fn compilers(all: &[Cell]) -> Option<Finding> {
    let kepler: Vec<&Cell> = all.iter().filter(|c| c.arch == KEPLER_ARCH).collect();
    let mut names = distinct(kepler.iter().map(|c| &c.compiler));
    names.sort_by_key(|c| (!c.is_kepler_nvrtc(), &c.name));
    let answers: Vec<Answers> = (names.into_iter())
        .map(|compiler| {
            let rows = (kepler.iter().filter(|c| &c.compiler == compiler)).map(|c| c.m);
            let regs = |k: &str, e: Option<&str>, f: &dyn Fn(&Measurement) -> bool| {
                let mut rows = rows.clone();
                let m = rows.find(|m| m.kernel == k && e.is_none_or(|e| m.experiment == e) && f(m));
                data::registers(m?)
            };
            let sweep = (rows.clone())
                .filter(|m| m.kernel == "gemm6" && m.experiment == "registers")
                .filter(|m| m.hints.switches.is_empty());
            let capped = (sweep.clone()).find(|m| data::register_cap(m) == Some(CAP_127));
            let tile = |t| regs("gemm11", Some("tiling"), &|m| tile_of(m) == Some(t));
            Answers {
                compiler: compiler.name.clone(),
                kernel6: regs("gemm6", None, &|m| is_published(m)),
                volatile: regs("gemm6", Some("hints"), &is_volatile),
                cap127: capped.map(|m| (data::registers(m), data::spill_bytes(m))),
                first_spill: (sweep.filter(|m| data::spill_bytes(m).is_some_and(|b| b > 0)))
                    .filter_map(data::register_cap)
                    .max(),
                tiles: (tile((8, 4)), tile((4, 4))),
            }
        })
        .filter(|a| a.kernel6.is_some())
        .collect();
    let more = |a: &&Answers| a.volatile.is_some() || a.cap127.is_some() || a.tiles.0.is_some();
    if answers.iter().filter(more).count() < 2 {
        return None;
    }
    let k6 = || answers.iter().filter_map(|a| a.kernel6);
    let weight = rel(k6().max()?, k6().min()?);
    Some(finding(Kind::Compilers { answers }).weight(weight))
}

/// Kernel 6 at its published defaults: the atlas's row, else the hints sweep's
/// baseline, else the register sweep's uncapped point.
fn kernel6(cells: &[Cell]) -> Option<Finding> {
    let published = |c: &&Cell| c.m.kernel == "gemm6" && is_published(c.m);
    let with = |c: &&Cell| published(c) && data::registers(c.m).is_some();
    let of = |e: &str| cells.iter().filter(with).find(|c| c.m.experiment == e);
    let row = ([ATLAS_EXPERIMENT, "hints", "registers"].into_iter()).find_map(of);
    let row = row.or_else(|| cells.iter().find(with))?.m;
    let registers = data::registers(row)?;
    let shared = row.resources.as_ref().and_then(|r| r.shared_bytes);
    let others = (cells.iter().filter(published))
        .filter(|c| !std::ptr::eq(c.m, row))
        .filter_map(|c| Some((data::registers(c.m)?, c.m.experiment.clone())))
        .collect();
    let threads = threads_of(row);
    let fit = limits_of(KEPLER_ARCH).zip(threads).map(|(l, threads)| Fit {
        threads,
        registers_per_sm: l.registers,
        register_unit: l.register_unit,
        shared_per_sm: l.shared_bytes,
        two: registers_for_blocks(&l, threads, 2),
        occupancy: occ(row),
        three: registers_for_blocks(&l, threads, 3),
        third_shared_fits: (u32::try_from(shared.unwrap_or(0)).ok())
            .and_then(|sh| occupancy::occupancy(&l, threads, 1, sh))
            .is_some_and(|x| x.blocks_per_sm >= 3),
    });
    let kind = Kind::Kernel6(Kernel6 {
        registers,
        lower_bound: TUTORIAL_LOWER_BOUND,
        source: row.experiment.clone(),
        config: row.config.describe(),
        threads,
        shared,
        spills: data::spill_bytes(row),
        others,
        fit,
    });
    Some(finding(kind).weight(rel(registers, TUTORIAL_LOWER_BOUND)))
}

fn is_volatile(m: &Measurement) -> bool {
    let h = &m.hints;
    h.switches.get("VOLATILE_IDX") == Some(&true)
        && h.switches.len() == 1
        && !h.fast_math
        && h.max_registers.is_none()
}

fn volatile<'a>(hints: &[&Cell<'a>]) -> (VolatileRows<'a>, Option<Finding>) {
    let find = |k: &str, f: fn(&Measurement) -> bool| {
        (hints.iter().map(|c| c.m)).find(|m| m.kernel == k && f(m))
    };
    let (Some(base), Some(vol)) = (find("gemm6", is_published), find("gemm6", is_volatile)) else {
        return (None, None);
    };
    let b_regs = data::registers(base);
    let rows = (hints.iter().map(|c| c.m).filter(|m| m.kernel == "gemm6"))
        .map(|m| {
            let r = (data::registers(m).zip(b_regs)).filter(|_| !std::ptr::eq(m, base));
            (m, r.map(|(r, b)| i64::from(r) - i64::from(b)), occ(m))
        })
        .collect();
    let (Some(before), Some(after)) = (b_regs, data::registers(vol)) else {
        return (Some(rows), None);
    };
    let mut kernels = distinct((hints.iter().map(|c| &c.m.kernel)).filter(|k| *k != "gemm6"));
    kernels.sort_by(|a, b| kernel_order(a, b));
    let others = (kernels.into_iter())
        .filter_map(|k| {
            let r = |f| find(k, f).and_then(data::registers);
            Some((k.clone(), r(is_published)?, r(is_volatile)?))
        })
        .collect();
    let kind = Kind::Volatile(Volatile {
        before,
        after,
        spills: data::spill_bytes(vol),
        occupancy: (occ(base), occ(vol)),
        others,
    });
    (Some(rows), Some(finding(kind).weight(rel(after, before))))
}

fn caps<'a>(regs: &[&Cell<'a>]) -> (CapRows<'a>, Option<Finding>) {
    let sweep: Vec<&Measurement> = (regs.iter().map(|c| c.m))
        .filter(|m| m.kernel == "gemm6" && m.hints.switches.is_empty() && !m.hints.fast_math)
        .collect();
    if sweep.is_empty() {
        return (Vec::new(), None);
    }
    let at = |cap: Option<u32>| sweep.iter().copied().find(|m| data::register_cap(m) == cap);
    let rows: CapRows = (caps_of(sweep.iter().copied()).into_iter())
        .filter_map(|cap| at(cap).map(|m| (cap, m, occ(m))))
        .collect();
    let uncapped = at(None).and_then(data::registers);
    let capped = || rows.iter().filter_map(|&(cap, m, _)| Some((cap?, m)));
    let first_spill = capped().find_map(|(cap, m)| {
        let bytes = data::spill_bytes(m).filter(|b| *b > 0)?;
        Some((cap, bytes, data::registers(m)))
    });
    let moved = capped()
        .filter_map(|(cap, m)| {
            let (r, u) = (data::registers(m)?, uncapped?);
            (cap > u && r != u).then_some((cap, r))
        })
        .collect();
    let at127 = at(Some(CAP_127)).map(|m| CapAt {
        registers: data::registers(m),
        uncapped,
        spills: data::spill_bytes(m),
        occupancy: occ(m),
        uncapped_occupancy: at(None).and_then(occ),
        moved,
    });
    let spills = at127.as_ref().and_then(|a| a.spills).is_some_and(|b| b > 0);
    let headline = at127.is_some();
    let kind = Kind::Caps(Caps {
        cap: CAP_127,
        first_spill,
        lowest_cap: rows.iter().rev().find_map(|r| r.0),
        at: at127,
    });
    let f = finding(kind).weight(if spills { 1.0 } else { 0.0 });
    (rows, Some(if headline { f } else { f.detail() }))
}

fn tiles<'a>(tiling: &[&Cell<'a>], all: &[Cell<'a>]) -> (TileRows<'a>, Option<Finding>) {
    let sweep: Vec<&Measurement> = (tiling.iter().map(|c| c.m))
        .filter(|m| m.kernel == "gemm11" && tile_of(m).is_some())
        .collect();
    let at = |t: (i64, i64)| sweep.iter().copied().find(|m| tile_of(m) == Some(t));
    let (Some(t84), Some(t44)) = (at((8, 4)), at((4, 4))) else {
        return (None, None);
    };
    let shapes: BTreeSet<(i64, i64)> = sweep.iter().filter_map(|m| tile_of(m)).collect();
    let rows = shapes.into_iter().filter_map(at).map(|m| (m, occ(m)));
    // OpenCL's 8x4 (the published tile) through the same release's ptxas, from the atlas.
    let opencl = all.iter().find(|c| {
        (c.m.kernel == "gemm11" && c.arch == KEPLER_ARCH && c.compiler.opencl)
            && c.compiler.version.starts_with(&[11, 8])
            && is_published(c.m)
            && c.m.resources.is_some()
    });
    let (r84, r44) = (data::registers(t84), data::registers(t44));
    let weight = (r84.zip(r44)).map_or(0.0, |(a, b)| rel(a, b));
    let kind = Kind::Tiles(Tiles {
        wide: Resources::of(t84, KEPLER_ARCH),
        square: Resources::of(t44, KEPLER_ARCH),
        opencl: opencl.map(|o| (o.compiler.name.clone(), Resources::of(o.m, KEPLER_ARCH))),
    });
    (Some(rows.collect()), Some(finding(kind).weight(weight)))
}
