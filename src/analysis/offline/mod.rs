//! Rows compiled offline (`--arch`, `gemmlab atlas`): registers, spills, stack,
//! shared memory and the occupancy they give, never a speed. Read by the
//! Kepler answers ([`kepler`]), the atlas ([`atlas`]) and the offline [`sweeps`].

pub mod atlas;
pub mod kepler;

use crate::backend::Toolchain;
use crate::kernels;
use crate::occupancy::{self, Limits, Occupancy};
use crate::results::Measurement;

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

/// The compiler of an offline row, as a chart series; ordered NVRTC first, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Compiler {
    pub opencl: bool,
    /// [11, 8]; empty when the label names none.
    pub version: Vec<u32>,
    /// "NVRTC 11.8", "OpenCL PTX + ptxas 11.8".
    pub name: String,
}

impl Compiler {
    /// From the row's `compiler` ("NVRTC 11.8", "NVIDIA OpenCL PTX + ptxas 11.8"),
    /// else from its note ("... with NVRTC 11.8; ...", "... by ptxas 11.8; ...").
    pub fn of(m: &Measurement) -> Option<Compiler> {
        let given = (m.compiler.as_deref().map(str::trim)).filter(|c| !c.is_empty());
        let label = given.map(str::to_string).or_else(|| label_from_notes(m))?;
        let opencl = m.toolchain == Toolchain::OpenCl;
        let version = label.split_whitespace().rev().find_map(parse_version);
        let name = match (opencl, m.toolchain.is_clang(), label.find("ptxas")) {
            // "clang OpenCL + ptxas 11.8": the two clang toolchains share a compiler label.
            (_, true, Some(i)) => format!("{} + {}", m.toolchain.label(), &label[i..]),
            (_, true, None) => format!("{}: {label}", m.toolchain.label()),
            (false, _, _) => label,
            (true, _, Some(i)) => format!("OpenCL PTX + {}", &label[i..]),
            (true, _, None) => format!("OpenCL: {label}"),
        };
        let version = version.unwrap_or_default();
        Some(Compiler {
            name,
            opencl,
            version,
        })
    }

    /// The CUDA release (major.minor) it belongs to.
    pub fn release(&self) -> Option<(u32, u32)> {
        let minor = self.version.get(1).copied().unwrap_or(0);
        self.version.first().map(|&major| (major, minor))
    }

    /// An NVRTC (not NVIDIA OpenCL's PTX, not clang).
    pub fn is_nvrtc(&self) -> bool {
        !self.opencl && self.name.starts_with("NVRTC")
    }

    pub fn is_kepler_nvrtc(&self) -> bool {
        self.is_nvrtc() && self.version.starts_with(&[11, 8])
    }
}

fn parse_version(w: &str) -> Option<Vec<u32>> {
    let w = w.trim_matches(|c: char| !c.is_ascii_digit());
    w.split('.').map(|p| p.parse().ok()).collect()
}

fn label_from_notes(m: &Measurement) -> Option<String> {
    let notes = m.build_notes.iter().map(String::as_str);
    let pats = [("with NVRTC ", "NVRTC"), ("by ptxas ", "ptxas")];
    m.status.reason().into_iter().chain(notes).find_map(|t| {
        pats.into_iter().find_map(|(pat, name)| {
            let rest = &t[t.find(pat)? + pat.len()..];
            let v = rest.split([';', ' ', ',']).next()?;
            parse_version(v).map(|_| format!("{name} {v}"))
        })
    })
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

/// Its kernel at the published defaults: the registry's default configuration
/// (or none recorded) and no switch, flag or cap.
pub fn is_published(m: &Measurement) -> bool {
    let default = || kernels::find(&m.kernel).ok()?.config(&[]).ok();
    (m.config.0.is_empty() || default().is_none_or(|d| d == m.config)) && m.hints.is_published()
}

/// (major, minor) of "sm_35", "sm_120", "sm_90a".
pub fn compute_capability(arch: &str) -> Option<(u32, u32)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u32 = digits.parse().ok()?;
    Some((n / 10, n % 10))
}

pub fn limits_of(arch: &str) -> Option<Limits> {
    let (a, b) = compute_capability(arch)?;
    occupancy::limits(a, b)
}

pub fn threads_of(m: &Measurement) -> Option<u32> {
    let spec = kernels::find(&m.kernel).ok()?;
    let config = match m.config.0.is_empty() {
        true => spec.config(&[]).ok()?,
        false => m.config.clone(),
    };
    u32::try_from(spec.threads_per_group(&config)).ok()
}

pub fn occupancy_of(m: &Measurement, arch: &str) -> Option<Occ> {
    let r = m.resources.as_ref()?;
    let shared = u32::try_from(r.shared_bytes.unwrap_or(0)).ok()?;
    occupancy::occupancy(&limits_of(arch)?, threads_of(m)?, r.registers?, shared).map(Occ)
}

/// The most registers per thread with which `blocks` blocks of `threads` threads
/// fit on an SM as far as registers go (shared memory left aside).
pub fn registers_for_blocks(l: &Limits, threads: u32, blocks: u32) -> Option<u32> {
    (1..=l.max_registers_per_thread).rev().find(|&r| {
        occupancy::occupancy(l, threads, r, 0).is_some_and(|o| o.blocks_per_sm >= blocks)
    })
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
