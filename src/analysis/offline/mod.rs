//! Rows compiled offline (`--arch`, `gemmlab atlas`): registers, spills, stack,
//! shared memory and the occupancy they give, never a speed. Read by the
//! Kepler answers ([`kepler`]), the atlas ([`atlas`]) and the offline [`sweeps`].

pub mod atlas;
pub mod kepler;

use crate::occupancy::Occupancy;
use crate::results::Measurement;

pub use super::data::Compiler;
use super::data::{self, arch_of, arch_order, Rec};
use super::stats::distinct;
use super::Data;

pub use atlas::Atlas;
pub use kepler::Kepler;

pub const ATLAS_EXPERIMENT: &str = "atlas";

/// The atlas's findings (topic `Offline`) and the Kepler answers (topic
/// `Kepler`). Registers are per thread, bytes spill stores + loads.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// One kernel's registers along the architectures, per compiler, and its spills.
    KernelAcross {
        kernel: String,
        compilers: Vec<atlas::Along>,
        spills: Vec<atlas::Spill>,
    },
    /// Consecutive NVRTC versions on one architecture.
    Generations {
        pairs: usize,
        differ: usize,
        largest: Option<atlas::RegChange>,
    },
    /// The largest spread of a kernel's registers across architectures, one compiler.
    ArchSpread {
        kernel: String,
        compiler: String,
        low: (String, u32),
        high: (String, u32),
        spread: f64,
    },
    /// OpenCL's PTX (`to`) against NVRTC (`from`) of the same CUDA release.
    FrontEnd {
        fewer: usize,
        more: usize,
        same: usize,
        largest: Option<atlas::RegChange>,
    },
    /// The atlas rows that spill; `worst` indexes the most bytes.
    Spills {
        archs: usize,
        compilers: usize,
        with_report: usize,
        spilling: Vec<atlas::Spill>,
        worst: Option<usize>,
    },
    Refused {
        refused: usize,
        of: usize,
        by: Vec<atlas::Refusal>,
    },
    Kernel6(kepler::Kernel6),
    Volatile(kepler::Volatile),
    Caps(kepler::Caps),
    Compilers {
        answers: Vec<kepler::Answers>,
    },
    Tiles(kepler::Tiles),
}

/// One offline row with its architecture and compiler.
#[derive(Clone)]
pub struct Cell<'a> {
    pub m: &'a Measurement,
    pub arch: String,
    pub compiler: Compiler,
}

/// The rows with an architecture and a compiler, and how many lacked one.
pub fn cells<'a>(recs: &[Rec<'a>]) -> (Vec<Cell<'a>>, usize) {
    let out: Vec<Cell> = (recs.iter())
        .filter_map(|&Rec { m, .. }| {
            let (arch, compiler) = (arch_of(m)?, Compiler::of(m)?);
            Some(Cell { m, arch, compiler })
        })
        .collect();
    let lost = recs.len() - out.len();
    (out, lost)
}

/// The distinct architectures of some cells, oldest first.
pub fn archs_of<'c>(cells: impl Iterator<Item = &'c Cell<'c>>) -> Vec<String> {
    let mut a = distinct(cells.map(|c| c.arch.clone()));
    a.sort_by(|x, y| arch_order(x, y));
    a
}

/// The caps of a register sweep's rows: uncapped first, then from the highest down.
pub fn caps_of<'m>(rows: impl Iterator<Item = &'m Measurement>) -> Vec<Option<u32>> {
    let mut caps = distinct(rows.map(data::register_cap));
    caps.sort_by_key(|c| std::cmp::Reverse(c.unwrap_or(u32::MAX)));
    caps
}

/// A row's occupancy by the rules of `arch`.
pub fn occupancy_of(m: &Measurement, arch: &str) -> Option<Occ> {
    data::occupancy_on(m, arch).map(Occ)
}

/// How far `a` lies from `b`, relative to `b`: the weight of a register finding.
fn rel(a: u32, b: u32) -> f64 {
    f64::from(a.abs_diff(b)) / f64::from(b.max(1))
}

/// An occupancy in a finding: its fraction, blocks and warps per SM and limit.
#[derive(Debug, Clone, Copy)]
pub struct Occ(pub Occupancy);

impl serde::Serialize for Occ {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = &self.0;
        (o.fraction, o.blocks_per_sm, o.warps_per_sm, o.limited_by).serialize(s)
    }
}

/// What the compiler made of one row; the occupancy by the architecture's
/// rules and the recorded one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Resources {
    pub registers: Option<u32>,
    pub spills: Option<u64>,
    pub occupancy: Option<Occ>,
    pub recorded_occupancy: Option<f64>,
}

impl Resources {
    pub fn of(m: &Measurement, arch: &str) -> Resources {
        Resources {
            registers: data::registers(m),
            spills: data::spill_bytes(m),
            occupancy: occupancy_of(m, arch),
            recorded_occupancy: m.occupancy.filter(|o| o.is_finite()),
        }
    }
}

/// The offline sweeps: every point, grouped by sweep, architecture and compiler.
pub struct Sweeps<'a> {
    pub lost: usize,
    /// (experiment, architecture, compiler, its rows), sweeps in their usual order.
    pub groups: Vec<(String, String, Compiler, Vec<Cell<'a>>)>,
}

pub fn sweeps(data: &Data) -> Option<Sweeps<'_>> {
    let recs: Vec<Rec> = (data.offline().into_iter())
        .filter(|r| r.m.experiment != ATLAS_EXPERIMENT)
        .collect();
    if recs.is_empty() {
        return None;
    }
    let (cells, lost) = cells(&recs);
    let key = |c: &Cell| (c.m.experiment.clone(), c.arch.clone(), c.compiler.clone());
    let rank = |e: &str| (["registers", "tiling", "hints"].iter()).position(|x| *x == e);
    let mut keys = distinct(cells.iter().map(key));
    keys.sort_by(|a, b| {
        (rank(&a.0).unwrap_or(3), &a.0)
            .cmp(&(rank(&b.0).unwrap_or(3), &b.0))
            .then_with(|| arch_order(&a.1, &b.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    let groups = (keys.into_iter())
        .map(|k| {
            let rows = cells.iter().filter(|c| key(c) == k).cloned().collect();
            (k.0, k.1, k.2, rows)
        })
        .collect();
    Some(Sweeps { lost, groups })
}
