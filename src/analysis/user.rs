//! Users' kernels (spec files): each row's share of the device's peak; per kernel
//! and size each toolchain's fastest row, the gap, the bandwidth and what tuning gained.

use crate::backend::Toolchain;
use crate::results::Measurement;

use super::data::{self, Data, Rec};
use super::{stats, Finding, Topic};

/// The chart every finding of the section points at.
pub const CHART: &str = "user-kernels";

/// A row's share of the device's peak and what it is a share of ("bandwidth", "FP32 peak").
pub type Share = Option<(f64, &'static str)>;

pub struct User<'a> {
    pub toolchains: Vec<Toolchain>,
    /// Every row, by kernel and size, with its share of the device's peak.
    pub rows: Vec<(Rec<'a>, Share)>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    UserFastest(UserFastest),
    UserGap(UserGap),
    UserBandwidth(UserBandwidth),
    UserTuning(UserTuning),
}

/// A toolchain's fastest row of a kernel at a size; `config`: its [`configuration`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserFastest {
    pub kernel: String,
    pub size: String,
    pub toolchain: Toolchain,
    pub rate: f64,
    pub unit: &'static str,
    pub config: String,
}

/// The toolchain gap, each toolchain's fastest row.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserGap {
    pub kernel: String,
    pub size: String,
    pub fast: Toolchain,
    pub slow: Toolchain,
    pub fast_rate: f64,
    pub slow_rate: f64,
    pub unit: &'static str,
    pub same: bool,
}

/// The memory bandwidth a toolchain's fastest row reaches.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserBandwidth {
    pub kernel: String,
    pub size: String,
    pub toolchain: Toolchain,
    pub gbs: f64,
    pub peak_gbs: f64,
}

/// A row's parameters and what its hints change of the kernel's defaults
/// ("TS=256 WPT=4 defaults + fast math"): a sweep's or a search's points may
/// differ in their hints alone.
pub fn configuration(m: &Measurement) -> String {
    m.hints
        .describe_with(&m.config, crate::kernel::unchanged_name(true))
}

/// Tune's best against the kernel as compare ran it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserTuning {
    pub kernel: String,
    pub size: String,
    pub toolchain: Toolchain,
    pub tuned: f64,
    pub plain: f64,
    pub unit: &'static str,
    pub tuned_config: String,
    pub plain_config: String,
    pub same: bool,
}

/// The rate a row is ranked by: GFLOP/s where the spec states FLOPs, else GB/s,
/// else runs per second; with its unit.
pub fn rate(m: &Measurement) -> Option<(f64, &'static str)> {
    let ok = m.status.is_ok().then_some(m)?;
    (ok.gflops.filter(|g| g.is_finite()).map(|g| (g, "GFLOP/s")))
        .or_else(|| ok.gbs.filter(|g| g.is_finite()).map(|b| (b, "GB/s")))
        .or_else(|| ok.time.map(|t| (1e9 / t.median_ns.max(1.0), "runs/s")))
}

/// The device's peak memory bandwidth as any run's record of it gives it.
fn bandwidth(data: &Data, m: &Measurement) -> Option<f64> {
    let mut devices = data.runs.iter().flat_map(|r| r.env.devices.iter());
    devices.find_map(|d| d.memory_bandwidth_gbs.filter(|_| d.name == m.device))
}

type Rated<'a> = (&'a Measurement, (f64, &'static str));

/// The fastest of the rows with a rate (the last of equals).
fn fastest<'a>(rows: impl Iterator<Item = &'a Measurement>) -> Option<Rated<'a>> {
    let rated = rows.filter_map(|m| Some((m, rate(m)?)));
    rated.max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
}

fn share(data: &Data, r: &Rec) -> Share {
    let (m, peak) = (r.m, data.gpu_facts(r.run, r.m).peak_gflops());
    match (m.gbs, bandwidth(data, m), data::gflops(m), peak) {
        (Some(g), Some(b), _, _) if m.status.is_ok() => Some((g / b, "bandwidth")),
        (_, _, Some(g), Some(p)) => Some((g / p, "FP32 peak")),
        _ => None,
    }
}

/// The findings of one kernel at one size.
fn group_findings(data: &Data, ts: &[Toolchain], group: &[Rec]) -> Vec<Finding> {
    let (kernel, size) = (&group[0].m.kernel, group[0].m.size_label());
    let finding = |kind, w| {
        let f = Finding::new(Topic::UserKernels, super::Kind::User(kind));
        f.weight(w).chart(Some(CHART.into()))
    };
    let rows = |t: Toolchain, exp: Option<&'static str>| {
        let of = move |m: &&Measurement| m.toolchain == t && exp.is_none_or(|e| m.experiment == e);
        group.iter().map(|r| r.m).filter(of)
    };
    let best: Vec<Rated> = ts.iter().filter_map(|t| fastest(rows(*t, None))).collect();
    let mut out: Vec<Finding> = (best.iter())
        .map(|&(m, (rate, unit))| {
            let k = UserFastest {
                kernel: kernel.clone(),
                size: size.clone(),
                toolchain: m.toolchain,
                rate,
                unit,
                config: configuration(m),
            };
            finding(Kind::UserFastest(k), 0.0)
        })
        .collect();
    // Each pair of toolchains data::toolchain_pairs takes: the faster first, the first of equals.
    let of = |t: Toolchain| best.iter().copied().find(|b| b.0.toolchain == t);
    let tcs: Vec<Toolchain> = best.iter().map(|b| b.0.toolchain).collect();
    for [a, b] in data::toolchain_pairs(&tcs) {
        let (Some(a), Some(b)) = (of(a), of(b)) else {
            continue;
        };
        let ((fast, (fast_rate, unit)), (slow, (slow_rate, _))) =
            if b.1 .0 > a.1 .0 { (b, a) } else { (a, b) };
        let k = UserGap {
            kernel: kernel.clone(),
            size: size.clone(),
            fast: fast.toolchain,
            slow: slow.toolchain,
            fast_rate,
            slow_rate,
            unit,
            same: stats::is_same(fast_rate / slow_rate - 1.0),
        };
        if slow_rate > 0.0 {
            out.push(finding(Kind::UserGap(k), fast_rate / slow_rate - 1.0));
        }
    }
    out.extend(best.iter().filter_map(|&(m, _)| {
        let k = UserBandwidth {
            kernel: kernel.clone(),
            size: size.clone(),
            toolchain: m.toolchain,
            gbs: m.gbs?,
            peak_gbs: bandwidth(data, m)?,
        };
        let w = 0.1 * k.gbs / k.peak_gbs;
        Some(finding(Kind::UserBandwidth(k), w))
    }));
    out.extend(ts.iter().filter_map(|&toolchain| {
        let (tu, (tuned, unit)) = fastest(rows(toolchain, Some("tune")))?;
        let (pl, (plain, _)) =
            rows(toolchain, Some("compare")).find_map(|m| Some((m, rate(m)?)))?;
        let k = UserTuning {
            kernel: kernel.clone(),
            size: size.clone(),
            toolchain,
            tuned,
            plain,
            unit,
            tuned_config: configuration(tu),
            plain_config: configuration(pl),
            same: stats::is_same(tuned / plain - 1.0),
        };
        (plain > 0.0).then(|| finding(Kind::UserTuning(k), tuned / plain - 1.0))
    }));
    out
}

pub fn analyse(data: &Data) -> User<'_> {
    let toolchains = data.toolchains();
    let all = data.user_rows();
    let (mut rows, mut findings) = (Vec::new(), Vec::new());
    let kernels = stats::distinct(all.iter().map(|r| &r.m.kernel));
    let mut groups = stats::distinct(all.iter().map(|r| (&r.m.kernel, r.m.size_label())));
    // By kernel, then size, each in the order first measured.
    groups.sort_by_key(|g| kernels.iter().position(|k| *k == g.0));
    for (kernel, size) in groups {
        let group: Vec<Rec> = (all.iter())
            .filter(|r| r.m.kernel == *kernel && r.m.size_label() == size)
            .copied()
            .collect();
        rows.extend(group.iter().map(|r| (*r, share(data, r))));
        findings.extend(group_findings(data, &toolchains, &group));
    }
    User {
        toolchains,
        rows,
        findings,
    }
}
