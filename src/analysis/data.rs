//! The result set as a report's sections read it: each experiment's rows
//! without repeats, and the lookups the sections share.

use super::stats::distinct;
use crate::backend::Toolchain;
pub use crate::results::reading::*;
pub use crate::results::set::{discover, discover_for, load, Run};
use crate::results::Measurement;

/// What a report is made from: every run under its `--from` directories.
pub type Data = crate::results::set::ResultSet;

/// A measurement and the run it came from (index into `Data::runs`).
#[derive(Debug, Clone, Copy)]
pub struct Rec<'a> {
    pub run: usize,
    pub m: &'a Measurement,
}

/// The first of each group of `same` records, in order.
fn first_of<'a>(
    recs: impl Iterator<Item = Rec<'a>>,
    same: impl Fn(&Rec, &Rec) -> bool,
) -> Vec<Rec<'a>> {
    let mut out: Vec<Rec> = Vec::new();
    for r in recs {
        if !out.iter().any(|o| same(o, &r)) {
            out.push(r);
        }
    }
    out
}

impl Data {
    /// Every measurement of an experiment made on a device, in run order,
    /// without repeats: a cell measured again (same kernel, variant, label,
    /// toolchain, size, configuration and hints) in a later run is left out.
    /// Rows compiled offline ([`is_offline`]) are never here: they have no
    /// size and no speed, and only the offline sections read them ([`Data::offline`]).
    /// Neither are calls other than the tutorial's C = A * B in f32 (f64, transposes,
    /// alpha/beta, ...): the BLAS section reads those ([`Data::blas_calls`]).
    pub fn experiment(&self, name: &str) -> Vec<Rec<'_>> {
        self.experiment_where(name, |m| m.is_plain_problem() && m.dims.is_none())
    }

    /// Every row of a user's kernel (a spec file's), any experiment, without repeats.
    pub fn user_rows(&self) -> Vec<Rec<'_>> {
        (self.experiments().iter())
            .flat_map(|name| self.experiment_where(name, |m| m.dims.is_some()))
            .collect()
    }

    /// Every measurement of any experiment but the routine's on a call other than
    /// the tutorial's (f64, transposes, alpha/beta, leading dimensions, offsets),
    /// without repeats.
    pub fn blas_calls(&self) -> Vec<Rec<'_>> {
        (self.experiments().iter())
            .filter(|name| *name != crate::routine::ROUTINE)
            .flat_map(|name| self.experiment_where(name, |m| !m.is_plain_problem()))
            .collect()
    }

    /// The GEMM routine's rows (`gemmlab gemm --out`), every call, without repeats.
    pub fn routine_calls(&self) -> Vec<Rec<'_>> {
        self.experiment_where(crate::routine::ROUTINE, |_| true)
    }

    fn experiment_where(&self, name: &str, keep: impl Fn(&Measurement) -> bool) -> Vec<Rec<'_>> {
        let recs = self
            .measured()
            .filter(|r| r.m.experiment == name && keep(r.m));
        first_of(recs, |a, b| same_cell(a.m, b.m))
    }

    /// Measurements of an experiment left out as repeats.
    pub fn repeats(&self, name: &str) -> usize {
        let all = self.measured().filter(|r| r.m.experiment == name).count();
        all - self.experiment(name).len()
    }

    /// Every row made on a device (run, or refused with a reason): all but the
    /// offline ones.
    pub fn measured(&self) -> impl Iterator<Item = Rec<'_>> {
        self.all().filter(|r| !is_offline(r.m))
    }

    /// Every row compiled offline (no device: registers, spills and occupancy,
    /// nothing run), in run order, without repeats: the same experiment,
    /// kernel, point, architecture and compiler again in a later run is left out.
    pub fn offline(&self) -> Vec<Rec<'_>> {
        // Attribution rows are offline too, but a section of their own.
        let offline = |r: &Rec| {
            is_offline(r.m) && r.m.experiment != crate::experiment::attribution::EXPERIMENT
        };
        first_of(self.all().filter(offline), |o, r| {
            o.m.experiment == r.m.experiment
                && same_cell(o.m, r.m)
                && o.m.device_id == r.m.device_id
                && arch_of(o.m) == arch_of(r.m)
                && o.m.compiler == r.m.compiler
        })
    }

    pub fn experiments(&self) -> Vec<String> {
        distinct(self.all().map(|r| r.m.experiment.clone()))
    }

    /// The toolchains of the rows made on a device (offline rows name the
    /// toolchain of their source, not a device that ran it).
    pub fn toolchains(&self) -> Vec<Toolchain> {
        Toolchain::ALL
            .into_iter()
            .filter(|t| self.measured().any(|r| r.m.toolchain == *t))
            .collect()
    }

    pub fn all(&self) -> impl Iterator<Item = Rec<'_>> {
        self.runs
            .iter()
            .enumerate()
            .flat_map(|(ri, r)| r.measurements.iter().map(move |m| Rec { run: ri, m }))
    }
}

fn same_cell(a: &Measurement, b: &Measurement) -> bool {
    a.kernel == b.kernel
        && a.variant == b.variant
        && a.label == b.label
        && a.toolchain == b.toolchain
        && (a.m, a.n, a.k) == (b.m, b.n, b.k)
        && a.config == b.config
        && a.hints == b.hints
        && a.problem == b.problem
        && a.dims == b.dims
}

/// gemm1, gemm2, ..., gemm10, gemm11, other names alphabetically, cuBLAS last.
pub fn kernel_order(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |k: &str| {
        let (prefix, num) = k.split_at(k.trim_end_matches(|c: char| c.is_ascii_digit()).len());
        match num.parse::<u64>() {
            _ if k == VENDOR => (2, String::new(), 0, k.to_string()),
            Ok(n) => (0, prefix.to_string(), n, k.to_string()),
            Err(_) => (1, k.to_string(), 0, k.to_string()),
        }
    };
    key(a).cmp(&key(b))
}

/// Distinct kernels in the order above.
pub fn kernels(recs: &[Rec]) -> Vec<String> {
    let mut k = distinct(recs.iter().map(|r| r.m.kernel.clone()));
    k.sort_by(|a, b| kernel_order(a, b));
    k
}

/// Distinct problem sizes, largest (by M*N*K) first.
pub fn sizes(recs: &[Rec]) -> Vec<(usize, usize, usize)> {
    let mut s = distinct(recs.iter().map(|r| (r.m.m, r.m.n, r.m.k)));
    s.sort_by_key(|&(m, n, k)| std::cmp::Reverse((m as u128) * (n as u128) * (k as u128)));
    s
}

pub fn size_label((m, n, k): (usize, usize, usize)) -> String {
    match m == n && n == k {
        true => m.to_string(),
        false => format!("{m}x{n}x{k}"),
    }
}

pub fn of_size(m: &Measurement, s: (usize, usize, usize)) -> bool {
    (m.m, m.n, m.k) == s
}

/// The pairs of toolchains a comparison takes: both of two, else each pair a
/// single difference separates ([`Toolchain::differs_once_from`]), in `tcs`'s order.
pub fn toolchain_pairs(tcs: &[Toolchain]) -> Vec<[Toolchain; 2]> {
    let pairs = tcs
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| tcs[i + 1..].iter().map(move |&b| [a, b]));
    pairs
        .filter(|[a, b]| tcs.len() == 2 || a.differs_once_from(*b))
        .collect()
}

pub fn toolchain_name(t: Toolchain) -> &'static str {
    t.label()
}

/// The native row of a kernel on a toolchain at a size.
pub fn find<'a>(
    recs: &[Rec<'a>],
    kernel: &str,
    t: Toolchain,
    size: (usize, usize, usize),
) -> Option<&'a Measurement> {
    recs.iter()
        .map(|r| r.m)
        .find(|m| m.kernel == kernel && m.toolchain == t && m.variant.is_none() && of_size(m, size))
}

pub fn vendor_at<'a>(recs: &[Rec<'a>], size: (usize, usize, usize)) -> Option<&'a Measurement> {
    recs.iter()
        .map(|r| r.m)
        .find(|m| is_vendor(m) && of_size(m, size) && m.status.is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_ordering() {
        let mut v = vec!["gemm10", "cublas", "gemm2", "gemm1", "xgemm", "gemm11"];
        v.sort_by(|a, b| kernel_order(a, b));
        assert_eq!(v, ["gemm1", "gemm2", "gemm10", "gemm11", "xgemm", "cublas"]);
    }
}
