//! The lecture's question, from data: which variant wins on which device, toolchain,
//! precision and size, by how much, and why (registers, occupancy, loads per FMA).

use std::cmp::Ordering;

use crate::backend::Toolchain;
use crate::gemm::problem::Precision;
use crate::kernel::builtin::Family;
use crate::results::Measurement;

use super::data::{self, is_vendor};
use super::{stats, Data, Finding, Topic};

/// One group of rows: a device, a toolchain, a precision and a size.
pub struct Group<'a> {
    pub device: String,
    pub toolchain: Toolchain,
    pub precision: Precision,
    pub size: String,
    /// Each variant's fastest row, fastest first.
    pub ranked: Vec<&'a Measurement>,
    /// cuBLAS's best GFLOP/s on the device at the precision and size.
    pub vendor: Option<f64>,
}

pub struct Lecture<'a> {
    pub toolchains: Vec<Toolchain>,
    /// The lecture's kernels, in the catalogue's order.
    pub variants: Vec<&'static str>,
    /// By device, precision, size and toolchain.
    pub groups: Vec<Group<'a>>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// The fastest variant of a group, its speed over the next's, and why.
    Winner {
        device: String,
        toolchain: Toolchain,
        precision: Precision,
        size: String,
        winner: String,
        gflops: f64,
        next: String,
        over_next: f64,
        registers: Option<u32>,
        occupancy: Option<f64>,
        loads_per_fma: Option<f64>,
    },
}

fn is_lecture(m: &Measurement) -> bool {
    crate::kernel::builtin::find(&m.kernel).is_ok_and(|k| k.family == Family::Lecture)
}

/// Static loads (global and shared) per FMA in the kernel's PTX, where there is PTX.
pub fn loads_per_fma(m: &Measurement) -> Option<f64> {
    let mix = m.ptx_mix.as_ref()?;
    (mix.fma > 0).then(|| f64::from(mix.ld_global_total() + mix.ld_shared) / f64::from(mix.fma))
}

fn by_speed(a: &&Measurement, b: &&Measurement) -> Ordering {
    (data::gflops(a).partial_cmp(&data::gflops(b))).unwrap_or(Ordering::Equal)
}

pub fn analyse(data: &Data) -> Option<Lecture<'_>> {
    let all: Vec<&Measurement> = (data.measured().map(|r| r.m))
        .filter(|m| m.variant.is_none() && (is_lecture(m) || is_vendor(m)))
        .collect();
    if !all.iter().any(|m| is_lecture(m)) {
        return None;
    }
    let variants: Vec<&'static str> = (crate::kernel::builtin::all().iter())
        .filter(|k| k.family == Family::Lecture)
        .map(|k| k.id)
        .collect();
    let lecture = all.iter().filter(|m| is_lecture(m) && m.status.is_ok());
    let mut keys = stats::distinct(
        lecture.map(|m| (m.device.clone(), m.toolchain, m.precision(), m.size_label())),
    );
    keys.sort_by_key(|k| (k.0.clone(), k.2.define(), k.3.clone(), k.1));
    let groups: Vec<Group> = (keys.into_iter())
        .map(|(device, toolchain, precision, size)| {
            let at = |m: &&Measurement| {
                let here = m.device == device && m.precision() == precision;
                m.status.is_ok() && here && m.size_label() == size
            };
            let at: Vec<&Measurement> = all.iter().copied().filter(at).collect();
            let best = |id: &&str| {
                let of = |m: &&&Measurement| m.kernel == *id && m.toolchain == toolchain;
                at.iter().filter(of).copied().max_by(by_speed)
            };
            let mut ranked: Vec<&Measurement> = variants.iter().filter_map(best).collect();
            ranked.sort_by(|a, b| by_speed(b, a));
            let vendor = at.iter().filter(|v| is_vendor(v));
            Group {
                device,
                toolchain,
                precision,
                size,
                ranked,
                vendor: vendor.filter_map(|v| data::gflops(v)).reduce(f64::max),
            }
        })
        .collect();
    Some(Lecture {
        toolchains: data.toolchains(),
        findings: groups.iter().filter_map(winner).collect(),
        variants,
        groups,
    })
}

fn winner(g: &Group) -> Option<Finding> {
    let (w, second) = (g.ranked.first()?, g.ranked.get(1)?);
    let gflops = data::gflops(w).unwrap_or(0.0);
    let over_next = gflops / data::gflops(second).unwrap_or(0.0).max(1e-9);
    let k = Kind::Winner {
        device: g.device.clone(),
        toolchain: g.toolchain,
        precision: g.precision,
        size: g.size.clone(),
        winner: w.kernel.clone(),
        gflops,
        next: second.kernel.clone(),
        over_next,
        registers: data::registers(w),
        occupancy: w.occupancy,
        loads_per_fma: loads_per_fma(w),
    };
    let f = Finding::new(Topic::Toolchains, super::Kind::Lecture(k)).weight(over_next - 1.0);
    Some(f.chart(Some("lecture".into())).detail())
}
