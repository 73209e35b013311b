//! Users' kernels (spec files): per kernel and size each toolchain's rows
//! (compare, and tune's final round), the share of the device's memory
//! bandwidth or FP32 peak; findings on each toolchain's fastest row, the
//! toolchain gap best against best, the bandwidth share and what tuning gained.

use crate::backend::Toolchain;
use crate::results::Measurement;

use super::data::{self, Data, Rec};
use super::{stats, Finding, Topic};

/// The chart every finding of the section points at.
pub const CHART: &str = "user-kernels";

/// What a row's speed is a share of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Share {
    Bandwidth(f64),
    Fp32Peak(f64),
    None,
}

/// One kernel's chart panel: the fastest row per size and toolchain.
pub struct UserKernel {
    pub kernel: String,
    pub unit: &'static str,
    pub sizes: Vec<String>,
    /// `[size][toolchain]`, in `User::toolchains` order.
    pub values: Vec<Vec<Option<f64>>>,
}

pub struct User<'a> {
    pub toolchains: Vec<Toolchain>,
    /// Every row, by kernel and size, with its share of the device's peak.
    pub rows: Vec<(Rec<'a>, Share)>,
    pub kernels: Vec<UserKernel>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A toolchain's fastest row of a kernel at a size.
    UserFastest {
        kernel: String,
        size: String,
        toolchain: Toolchain,
        rate: f64,
        unit: &'static str,
        /// The row's parameters; None without any.
        config: Option<String>,
    },
    /// The toolchain gap, each toolchain's fastest row.
    UserGap {
        kernel: String,
        size: String,
        fast: Toolchain,
        slow: Toolchain,
        fast_rate: f64,
        slow_rate: f64,
        unit: &'static str,
        same: bool,
    },
    /// The memory bandwidth a toolchain's fastest row reaches.
    UserBandwidth {
        kernel: String,
        size: String,
        toolchain: Toolchain,
        gbs: f64,
        peak_gbs: f64,
    },
    /// Tune's best against the kernel as compare ran it.
    UserTuning {
        kernel: String,
        size: String,
        toolchain: Toolchain,
        tuned: f64,
        plain: f64,
        unit: &'static str,
        tuned_config: String,
        plain_config: String,
        same: bool,
    },
}

/// The rate a row is ranked by: GFLOP/s where the spec states FLOPs, else GB/s,
/// else runs per second; with its unit.
pub fn rate(m: &Measurement) -> Option<(f64, &'static str)> {
    if !m.status.is_ok() {
        return None;
    }
    if let Some(g) = m.gflops.filter(|g| g.is_finite()) {
        return Some((g, "GFLOP/s"));
    }
    if let Some(b) = m.gbs.filter(|g| g.is_finite()) {
        return Some((b, "GB/s"));
    }
    m.time.map(|t| (1e9 / t.median_ns.max(1.0), "runs/s"))
}

/// The device's peak memory bandwidth as any run's record of it gives it.
fn bandwidth(data: &Data, m: &Measurement) -> Option<f64> {
    let devices = data.runs.iter().flat_map(|r| r.env.devices.iter());
    devices
        .filter(|d| d.name == m.device)
        .find_map(|d| d.memory_bandwidth_gbs)
}

fn fastest<'a>(rows: &[Rec<'a>], t: Toolchain) -> Option<Rec<'a>> {
    let speed = |r: &Rec| rate(r.m).map(|v| v.0);
    let of = rows
        .iter()
        .filter(|r| r.m.toolchain == t && rate(r.m).is_some());
    of.max_by(|a, b| {
        speed(a)
            .partial_cmp(&speed(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    })
    .copied()
}

/// The findings of one kernel at one size, from its rows.
fn group_findings(
    data: &Data,
    toolchains: &[Toolchain],
    kernel: &str,
    size: &str,
    group: &[Rec],
    best: &[(Toolchain, Rec)],
) -> Vec<Finding> {
    let (kernel, size) = (kernel.to_string(), size.to_string());
    let finding = |kind, w| {
        Finding::new(Topic::UserKernels, super::Kind::User(kind))
            .weight(w)
            .chart(Some(CHART.into()))
    };
    let mut out = Vec::new();
    for (t, r) in best {
        if let Some((rate, unit)) = rate(r.m) {
            let config = (!r.m.config.0.is_empty()).then(|| r.m.config.describe());
            let (kernel, size, toolchain) = (kernel.clone(), size.clone(), *t);
            out.push(finding(
                Kind::UserFastest {
                    kernel,
                    size,
                    toolchain,
                    rate,
                    unit,
                    config,
                },
                0.0,
            ));
        }
    }
    if let [(ta, a), (tb, b)] = best {
        let (va, unit) = rate(a.m).unwrap_or((0.0, ""));
        let (vb, _) = rate(b.m).unwrap_or((0.0, ""));
        if va > 0.0 && vb > 0.0 {
            let (fast, slow, fast_rate, slow_rate) = if va >= vb {
                (*ta, *tb, va, vb)
            } else {
                (*tb, *ta, vb, va)
            };
            let ratio = fast_rate / slow_rate;
            let same = stats::is_same(ratio - 1.0);
            let (kernel, size) = (kernel.clone(), size.clone());
            let kind = Kind::UserGap {
                kernel,
                size,
                fast,
                slow,
                fast_rate,
                slow_rate,
                unit,
                same,
            };
            out.push(finding(kind, ratio - 1.0));
        }
    }
    for (t, r) in best {
        if let (Some(gbs), Some(peak_gbs)) = (r.m.gbs, bandwidth(data, r.m)) {
            let (kernel, size, toolchain) = (kernel.clone(), size.clone(), *t);
            let kind = Kind::UserBandwidth {
                kernel,
                size,
                toolchain,
                gbs,
                peak_gbs,
            };
            out.push(finding(kind, 0.1 * gbs / peak_gbs));
        }
    }
    for &toolchain in toolchains {
        let tuned: Vec<Rec> = group
            .iter()
            .filter(|r| r.m.experiment == "tune")
            .copied()
            .collect();
        let plain = group.iter().find(|r| {
            r.m.experiment == "compare" && r.m.toolchain == toolchain && rate(r.m).is_some()
        });
        if let (Some(tu), Some(pl)) = (fastest(&tuned, toolchain), plain) {
            let (tuned, unit) = rate(tu.m).unwrap_or((0.0, ""));
            let (plain, _) = rate(pl.m).unwrap_or((0.0, ""));
            if plain > 0.0 {
                let change = tuned / plain - 1.0;
                let (tuned_config, plain_config) = (tu.m.config.describe(), pl.m.config.describe());
                let (kernel, size, same) = (kernel.clone(), size.clone(), stats::is_same(change));
                let kind = Kind::UserTuning {
                    kernel,
                    size,
                    toolchain,
                    tuned,
                    plain,
                    unit,
                    tuned_config,
                    plain_config,
                    same,
                };
                out.push(finding(kind, change.abs()));
            }
        }
    }
    out
}

pub fn analyse(data: &Data) -> User<'_> {
    let toolchains = data.toolchains();
    let all = data.user_rows();
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in &all {
        let g = (r.m.kernel.clone(), r.m.size_label());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let mut a = User {
        toolchains,
        rows: Vec::new(),
        kernels: Vec::new(),
        findings: Vec::new(),
    };
    for (kernel, _) in &groups {
        if a.kernels.iter().any(|k| &k.kernel == kernel) {
            continue;
        }
        let sizes: Vec<String> = groups
            .iter()
            .filter(|(k, _)| k == kernel)
            .map(|(_, s)| s.clone())
            .collect();
        let mut k = UserKernel {
            kernel: kernel.clone(),
            unit: "",
            sizes: sizes.clone(),
            values: Vec::new(),
        };
        for size in &sizes {
            let group: Vec<Rec> = all
                .iter()
                .filter(|r| &r.m.kernel == kernel && &r.m.size_label() == size)
                .copied()
                .collect();
            for r in &group {
                let m = r.m;
                let share = match (
                    m.gbs,
                    bandwidth(data, m),
                    data::gflops(m),
                    super::simt::peak_of(data, r.run, m),
                ) {
                    (Some(g), Some(b), _, _) if m.status.is_ok() => Share::Bandwidth(g / b),
                    (_, _, Some(g), Some(p)) => Share::Fp32Peak(g / p),
                    _ => Share::None,
                };
                a.rows.push((*r, share));
            }
            let best: Vec<(Toolchain, Rec)> = a
                .toolchains
                .iter()
                .filter_map(|t| fastest(&group, *t).map(|r| (*t, r)))
                .collect();
            let mut values = vec![None; a.toolchains.len()];
            for (ti, t) in a.toolchains.iter().enumerate() {
                if let Some((v, u)) = best
                    .iter()
                    .find(|(bt, _)| bt == t)
                    .and_then(|(_, r)| rate(r.m))
                {
                    values[ti] = Some(v);
                    k.unit = u;
                }
            }
            k.values.push(values);
            a.findings.extend(group_findings(
                data,
                &a.toolchains,
                kernel,
                size,
                &group,
                &best,
            ));
        }
        a.kernels.push(k);
    }
    a
}
