//! The sweeps: register caps, gemm11 tiling, compiler hints, and OpenCL's PTX
//! through the CUDA JIT. The first three are one grid per kernel and size: the
//! points swept (a cap, a tile, a switch) by toolchain, each against a baseline.

use crate::backend::Toolchain::{self, Cuda, OpenCl};
use crate::results::Measurement;

use super::data::{self, is_vendor, of_size, size_label, tile_of, Rec};
use super::stats::{change, is_same};
use super::{Data, Finding, Topic};

pub type Size = (usize, usize, usize);
type M = Measurement;

/// One series at one size: `cells[point][toolchain]`, and each toolchain's baseline.
pub struct Block<'a, P> {
    pub size: Size,
    pub points: Vec<P>,
    pub cells: Vec<Vec<Option<&'a M>>>,
    pub base: Vec<Option<&'a M>>,
    pub rows: Vec<&'a M>,
    pub vendor: Option<&'a M>,
}

/// A kernel (with one set of switches), largest size first; `chart` is the stem of the first's chart.
pub struct Series<'a, P> {
    pub kernel: String,
    pub switches: String,
    pub blocks: Vec<Block<'a, P>>,
    pub chart: String,
}

pub struct Sweep<'a, P> {
    pub toolchains: Vec<Toolchain>,
    pub series: Vec<Series<'a, P>>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A register sweep at its largest size, per toolchain.
    RegisterCaps {
        kernel: String,
        switches: String,
        size: Size,
        toolchains: Vec<CapToolchain>,
        not_as_asked: Vec<NotAsAsked>,
        /// The largest gain of a cap over no cap on any toolchain.
        top: Option<CapGain>,
    },
    /// The tutorial's K40 claim: 8x4 runs well in OpenCL, slowly in CUDA; 4x4 rescues CUDA.
    TileClaim {
        kernel: String,
        size: Size,
        device: Option<String>,
        /// (8x4, 4x4) on CUDA and on OpenCL.
        cuda: [Tile; 2],
        opencl: [Tile; 2],
        cuda_slower: bool,
        opencl_fine: bool,
        fastest: Vec<(Toolchain, (i64, i64), f64)>,
    },
    /// Switches that change speed by more than `SAME_SPEED`, largest first;
    /// `size` is `None` when each kernel's largest size differs.
    HintEffects {
        size: Option<Size>,
        effects: Vec<Effect>,
    },
    /// Switches without an effect (with where), and those without one anywhere.
    HintsIdle {
        size: Option<Size>,
        points: Vec<(String, Vec<(String, Toolchain)>)>,
        idle: Vec<String>,
    },
    JitKernel(Triple),
    /// All kernels at the largest size: which native build the JIT run is like.
    JitRollup {
        size: Size,
        kernels: usize,
        groups: Vec<(Like, Vec<String>)>,
        /// Kernels whose toolchains differ by more than `SAME_SPEED`.
        differ: usize,
        lean: Like,
        leaning: usize,
        example: Option<Triple>,
    },
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CapToolchain {
    pub toolchain: Toolchain,
    pub spills: Option<Spills>,
    pub speed: Option<CapSpeed>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "spills", rename_all = "snake_case")]
pub enum Spills {
    None {
        lowest: Option<u32>,
    },
    AtHighest {
        cap: Option<u32>,
        bytes: u64,
    },
    From {
        clean_to: Option<u32>,
        cap: Option<u32>,
        bytes: u64,
        most: Option<(Option<u32>, u64)>,
    },
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "speed", rename_all = "snake_case")]
pub enum CapSpeed {
    Faster {
        cap: u32,
        gflops: f64,
        uncapped: f64,
    },
    NoGain {
        uncapped: f64,
    },
    NoBase {
        cap: Option<u32>,
        gflops: f64,
    },
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct NotAsAsked {
    pub toolchain: Toolchain,
    pub cap: u32,
    pub used: u32,
    pub uncapped: Option<u32>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CapGain {
    pub toolchain: Toolchain,
    pub cap: u32,
    pub gflops: f64,
    pub uncapped: f64,
    pub registers: Option<u32>,
    pub uncapped_registers: Option<u32>,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Tile {
    pub gflops: f64,
    pub registers: Option<u32>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Effect {
    pub kernel: String,
    pub toolchain: Toolchain,
    pub point: String,
    pub base_gflops: f64,
    pub gflops: f64,
    pub base_registers: Option<u32>,
    pub registers: Option<u32>,
}

/// Which native build the JIT run of OpenCL's PTX runs like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Like {
    /// Like CUDA, unlike OpenCL native: the gap is OpenCL's back end or launch.
    Cuda,
    /// Like OpenCL native, unlike CUDA: the gap is in the PTX.
    #[serde(rename = "opencl")]
    OpenCl,
    /// Unlike OpenCL native and not explained by CUDA either.
    Neither,
    /// All three alike.
    Both,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Triple {
    pub kernel: String,
    pub size: Size,
    pub jit: f64,
    pub opencl: f64,
    pub cuda: f64,
    /// Registers of the JIT, OpenCL and CUDA builds.
    pub registers: [Option<u32>; 3],
    pub like: Like,
}

impl Triple {
    /// How far apart the native builds are.
    pub fn gap(&self) -> f64 {
        (self.opencl / self.cuda - 1.0).abs()
    }
}

fn finding(topic: Topic, k: Kind) -> Finding {
    Finding::new(topic, super::Kind::Sweeps(k))
}

/// The experiment's kernel rows (no vendor, no variant) and its vendor rows.
fn kernel_rows<'a>(data: &'a Data, exp: &str) -> (Vec<Rec<'a>>, Vec<Rec<'a>>) {
    let (vendor, rows): (Vec<Rec>, Vec<Rec>) = data
        .experiment(exp)
        .into_iter()
        .partition(|r| is_vendor(r.m));
    (
        rows.into_iter().filter(|r| r.m.variant.is_none()).collect(),
        vendor,
    )
}

/// The rows grouped by kernel and `switches`, then by size, then by the point
/// `point` gives (points ordered by their rank); `is_base` picks the baseline.
fn sweep<'a, R: Ord, P: PartialEq>(
    data: &'a Data,
    exp: &str,
    switches: impl Fn(&M) -> String,
    point: impl Fn(&M) -> Option<(R, P)>,
    is_base: impl Fn(&M) -> bool,
) -> Sweep<'a, P> {
    let (tcs, (recs, vendor)) = (data.toolchains(), kernel_rows(data, exp));
    let recs: Vec<Rec> = recs.into_iter().filter(|r| point(r.m).is_some()).collect();
    let mut groups: Vec<(String, String)> = Vec::new();
    for k in data::kernels(&recs) {
        for r in recs.iter().filter(|r| r.m.kernel == k) {
            let g = (k.clone(), switches(r.m));
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    let series = groups
        .into_iter()
        .map(|(kernel, sw)| {
            let of: Vec<Rec> = recs
                .iter()
                .copied()
                .filter(|r| r.m.kernel == kernel && switches(r.m) == sw)
                .collect();
            let blocks: Vec<Block<P>> = data::sizes(&of)
                .into_iter()
                .map(|size| {
                    let rows: Vec<&M> = of
                        .iter()
                        .map(|r| r.m)
                        .filter(|m| of_size(m, size))
                        .collect();
                    let mut ranked: Vec<(R, P)> = rows.iter().filter_map(|m| point(m)).collect();
                    ranked.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut points: Vec<P> = Vec::new();
                    for (_, p) in ranked {
                        if !points.contains(&p) {
                            points.push(p);
                        }
                    }
                    let find = |t: Toolchain, f: &dyn Fn(&M) -> bool| {
                        rows.iter().copied().find(|m| m.toolchain == t && f(m))
                    };
                    let cells = points
                        .iter()
                        .map(|p| {
                            tcs.iter()
                                .map(|&t| find(t, &|m| point(m).is_some_and(|x| x.1 == *p)))
                                .collect()
                        })
                        .collect();
                    let base = tcs.iter().map(|&t| find(t, &is_base)).collect();
                    Block {
                        size,
                        points,
                        cells,
                        base,
                        rows,
                        vendor: data::vendor_at(&vendor, size),
                    }
                })
                .collect();
            let chart = format!(
                "{exp}-{kernel}{}-{}",
                chart_suffix(&sw),
                blocks.first().map_or(String::new(), |b| size_label(b.size))
            );
            Series {
                kernel,
                switches: sw,
                blocks,
                chart,
            }
        })
        .collect();
    Sweep {
        toolchains: tcs,
        series,
        findings: Vec::new(),
    }
}

/// "" for the published kernel, else the switch set as a file-name suffix.
fn chart_suffix(switches: &str) -> String {
    let Some(rest) = switches.strip_prefix("published + ") else {
        return String::new();
    };
    let mut out = String::from("-");
    for c in rest.chars().filter(|&c| c != '=') {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Each set of switches is a series of its own: with launch bounds, for one,
/// the compilers may override a cap. Findings at each series' largest size.
pub fn registers(data: &Data) -> Sweep<'_, Option<u32>> {
    let cap = |m: &M| data::register_cap(m).map_or((u32::MAX, None), |c| (c, Some(c)));
    let mut a = sweep(
        data,
        "registers",
        |m| m.hints.describe(false),
        |m| Some(cap(m)),
        |m| cap(m).1.is_none(),
    );
    for s in &a.series {
        if let Some(f) = s
            .blocks
            .first()
            .and_then(|b| cap_finding(s, b, &a.toolchains))
        {
            a.findings.push(f.chart(Some(s.chart.clone())));
        }
    }
    a
}

fn spills(walk: &[(Option<u32>, u64)]) -> Option<Spills> {
    let (first, last) = (walk.first()?, walk.last()?);
    Some(match walk.iter().position(|(_, b)| *b > 0) {
        None => Spills::None { lowest: last.0 },
        Some(0) => Spills::AtHighest {
            cap: first.0,
            bytes: first.1,
        },
        Some(i) => {
            let (cap, bytes) = walk[i];
            let most = walk[i..]
                .iter()
                .filter(|(_, b)| *b > 0)
                .max_by_key(|(_, b)| *b);
            Spills::From {
                clean_to: walk[i - 1].0,
                cap,
                bytes,
                most: most.filter(|m| m.0 != cap).copied(),
            }
        }
    })
}

fn cap_finding(
    s: &Series<Option<u32>>,
    b: &Block<Option<u32>>,
    tcs: &[Toolchain],
) -> Option<Finding> {
    let (mut per, mut not_as_asked, mut top) = (Vec::new(), Vec::new(), None::<CapGain>);
    for (ti, &toolchain) in tcs.iter().enumerate() {
        let rows: Vec<(Option<u32>, &M)> = b
            .points
            .iter()
            .zip(&b.cells)
            .filter_map(|(c, r)| Some((*c, r[ti]?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        // Spills, walking down from the highest cap.
        let walk: Vec<(Option<u32>, u64)> = rows
            .iter()
            .rev()
            .filter_map(|(c, m)| Some((*c, data::spill_bytes(m)?)))
            .collect();
        let best = rows
            .iter()
            .filter_map(|(c, m)| Some((*c, data::gflops(m)?, data::registers(m))))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let full = b.base[ti].and_then(data::registers);
        let speed = match (best, b.base[ti].and_then(data::gflops)) {
            (Some((Some(cap), gflops, registers)), Some(uncapped))
                if gflops > uncapped && !is_same(gflops / uncapped - 1.0) =>
            {
                let gain = CapGain {
                    toolchain,
                    cap,
                    gflops,
                    uncapped,
                    registers,
                    uncapped_registers: full,
                };
                if top
                    .as_ref()
                    .is_none_or(|t| gflops / uncapped > t.gflops / t.uncapped)
                {
                    top = Some(gain);
                }
                Some(CapSpeed::Faster {
                    cap,
                    gflops,
                    uncapped,
                })
            }
            (Some(_), Some(uncapped)) => Some(CapSpeed::NoGain { uncapped }),
            (Some((cap, gflops, _)), None) => Some(CapSpeed::NoBase { cap, gflops }),
            _ => None,
        };
        // Asked against used: above the cap, or below it although it needs more uncapped.
        for (c, m) in &rows {
            if let (Some(cap), Some(used)) = (*c, data::registers(m)) {
                if used > cap || (used < cap && full.is_some_and(|f| f > cap)) {
                    not_as_asked.push(NotAsAsked {
                        toolchain,
                        cap,
                        used,
                        uncapped: full,
                    });
                }
            }
        }
        per.push(CapToolchain {
            toolchain,
            spills: spills(&walk),
            speed,
        });
    }
    if per.iter().all(|p| p.spills.is_none() && p.speed.is_none()) && not_as_asked.is_empty() {
        return None;
    }
    let weight = top.as_ref().map_or(0.0, |t| t.gflops / t.uncapped - 1.0);
    let (kernel, switches, size) = (s.kernel.clone(), s.switches.clone(), b.size);
    Some(
        finding(
            Topic::RegisterCaps,
            Kind::RegisterCaps {
                kernel,
                switches,
                size,
                toolchains: per,
                not_as_asked,
                top,
            },
        )
        .weight(weight),
    )
}

pub fn tiling<'a>(data: &'a Data, device: Option<&str>) -> Sweep<'a, (i64, i64)> {
    let mut a = sweep(
        data,
        "tiling",
        |_| String::new(),
        |m| tile_of(m).map(|t| (t, t)),
        |_| false,
    );
    if a.toolchains.contains(&Cuda) && a.toolchains.contains(&OpenCl) {
        for s in &a.series {
            if let Some((size, f)) = s
                .blocks
                .iter()
                .find_map(|b| tile_claim(&s.kernel, b, device))
            {
                let first = s.blocks.first().map(|b| b.size);
                a.findings
                    .push(f.chart((first == Some(size)).then(|| s.chart.clone())));
            }
        }
    }
    a
}

fn tile_claim(
    kernel: &str,
    b: &Block<(i64, i64)>,
    device: Option<&str>,
) -> Option<(Size, Finding)> {
    let of = |t: Toolchain| b.rows.iter().copied().filter(move |m| m.toolchain == t);
    let get = |t, tile| {
        of(t).find(|m| tile_of(m) == Some(tile)).and_then(|m| {
            Some(Tile {
                gflops: data::gflops(m)?,
                registers: data::registers(m),
            })
        })
    };
    let cuda = [get(Cuda, (8, 4))?, get(Cuda, (4, 4))?];
    let opencl = [get(OpenCl, (8, 4))?, get(OpenCl, (4, 4))?];
    let c = |[a, b]: [Tile; 2]| a.gflops / b.gflops - 1.0;
    let fastest = [Cuda, OpenCl].into_iter().filter_map(|t| {
        let best = of(t)
            .filter_map(|m| Some((tile_of(m)?, data::gflops(m)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        best.map(|(tile, g)| (t, tile, g))
    });
    let kind = Kind::TileClaim {
        kernel: kernel.to_string(),
        size: b.size,
        device: device.map(str::to_string),
        cuda_slower: c(cuda) < 0.0 && !is_same(c(cuda)),
        opencl_fine: c(opencl) >= 0.0 || is_same(c(opencl)),
        cuda,
        opencl,
        fastest: fastest.collect(),
    };
    Some((
        b.size,
        finding(Topic::Tiling, kind).weight(c(opencl).abs().max(c(cuda).abs())),
    ))
}

/// A point's name: its label, else its switches.
pub fn point_name(m: &M) -> String {
    m.label.clone().unwrap_or_else(|| m.hints.describe(true))
}

/// The published kernel: labelled "baseline", or unlabelled with no switch moved.
pub fn is_baseline(m: &M) -> bool {
    m.label.as_deref().map_or(m.hints.is_published(), |l| {
        l.eq_ignore_ascii_case("baseline")
    })
}

/// Each switch against the baseline on its toolchain, at each kernel's largest size.
pub fn hints(data: &Data) -> Sweep<'_, String> {
    let mut a = sweep(
        data,
        "hints",
        |_| String::new(),
        |m| Some((!is_baseline(m), point_name(m))),
        is_baseline,
    );
    let (mut effects, mut small, mut sizes) = (
        Vec::new(),
        Vec::<(String, (String, Toolchain))>::new(),
        Vec::new(),
    );
    for (s, b) in a.series.iter().filter_map(|s| Some((s, s.blocks.first()?))) {
        for (p, row) in b.points.iter().zip(&b.cells) {
            for ((&toolchain, m), base) in a.toolchains.iter().zip(row).zip(&b.base) {
                let (Some(m), Some(base)) = (m, base) else {
                    continue;
                };
                let (Some(g), Some(bg)) = (data::gflops(m), data::gflops(base)) else {
                    continue;
                };
                if is_baseline(m) {
                    continue;
                }
                if is_same(g / bg - 1.0) {
                    small.push((p.clone(), (s.kernel.clone(), toolchain)));
                } else {
                    let (kernel, point) = (s.kernel.clone(), p.clone());
                    let (base_registers, registers) = (data::registers(base), data::registers(m));
                    effects.push(Effect {
                        kernel,
                        toolchain,
                        point,
                        base_gflops: bg,
                        gflops: g,
                        base_registers,
                        registers,
                    });
                }
                if !sizes.contains(&b.size) {
                    sizes.push(b.size);
                }
            }
        }
    }
    let size = (sizes.len() == 1).then(|| sizes[0]);
    let c = |e: &Effect| e.gflops / e.base_gflops - 1.0;
    effects.sort_by(|a, b| c(b).abs().total_cmp(&c(a).abs()));
    if let Some(w) = effects.first().map(c) {
        a.findings.push(
            finding(
                Topic::Hints,
                Kind::HintEffects {
                    size,
                    effects: effects.clone(),
                },
            )
            .weight(w),
        );
    }
    if !small.is_empty() {
        let mut points: Vec<(String, Vec<(String, Toolchain)>)> = Vec::new();
        for (p, w) in small {
            match points.iter_mut().find(|(x, _)| *x == p) {
                Some((_, v)) => v.push(w),
                None => points.push((p, vec![w])),
            }
        }
        let idle: Vec<String> = points
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| !effects.iter().any(|e| e.point == *p))
            .collect();
        let f = finding(
            Topic::Hints,
            Kind::HintsIdle {
                size,
                points,
                idle: idle.clone(),
            },
        );
        a.findings
            .push(if idle.is_empty() { f.detail() } else { f });
    }
    a
}

/// A JIT row and the native rows beside it, each with the run it came from ("jit" or "compare").
pub struct JitRow<'a> {
    pub jit: &'a M,
    pub opencl: Option<(&'a M, &'static str)>,
    pub cuda: Option<(&'a M, &'static str)>,
}

pub struct Jit<'a> {
    /// JIT rows left out: their build did not go through the CUDA driver JIT.
    pub left_out: usize,
    pub rows: Vec<JitRow<'a>>,
    pub findings: Vec<Finding>,
}

impl Like {
    fn of(jit: f64, opencl: f64, cuda: f64) -> Like {
        let near = |a: f64, b: f64| is_same(a / b - 1.0);
        match (near(jit, opencl), near(jit, cuda), near(opencl, cuda)) {
            (true, _, false) => Like::OpenCl,
            (_, true, false) => Like::Cuda,
            (false, ..) => Like::Neither,
            _ => Like::Both,
        }
    }
}

/// A JIT row is one whose build went through cuModuleLoadDataEx. Before the
/// fix of the PTX lane, the lane compiled the CUDA source instead: such rows
/// are not OpenCL's PTX and are left out, counted.
pub fn jit(data: &Data) -> Jit<'_> {
    let all = data.experiment("jit");
    let compare: Vec<Rec> = data
        .experiment("compare")
        .into_iter()
        .filter(|r| r.m.variant.is_none())
        .collect();
    let lane = all
        .iter()
        .map(|r| r.m)
        .filter(|m| m.variant.is_some() && !is_vendor(m));
    let (jits, not): (Vec<&M>, Vec<&M>) = lane.partition(|m| {
        m.build_notes
            .iter()
            .any(|n| n.contains("cuModuleLoadDataEx"))
    });
    // Native rows: the jit run's own first, then the compare run's.
    let native = |m: &M, t: Toolchain| {
        let own = all.iter().map(|r| r.m).find(|x| {
            x.kernel == m.kernel
                && x.toolchain == t
                && x.variant.is_none()
                && of_size(x, (m.m, m.n, m.k))
                && x.config == m.config
        });
        own.map(|x| (x, "jit"))
            .or_else(|| data::find(&compare, &m.kernel, t, (m.m, m.n, m.k)).map(|x| (x, "compare")))
    };
    let rows: Vec<JitRow> = jits
        .into_iter()
        .map(|jit| JitRow {
            jit,
            opencl: native(jit, OpenCl),
            cuda: native(jit, Cuda),
        })
        .collect();
    let mut triples = Vec::new();
    for r in &rows {
        let speed = |x: Option<(&M, &str)>| x.and_then(|x| data::gflops(x.0));
        let (Some(jit), Some(opencl), Some(cuda)) =
            (data::gflops(r.jit), speed(r.opencl), speed(r.cuda))
        else {
            continue;
        };
        let regs = |x: Option<(&M, &str)>| x.and_then(|x| data::registers(x.0));
        let registers = [data::registers(r.jit), regs(r.opencl), regs(r.cuda)];
        let (kernel, size, like) = (
            r.jit.kernel.clone(),
            (r.jit.m, r.jit.n, r.jit.k),
            Like::of(jit, opencl, cuda),
        );
        triples.push(Triple {
            kernel,
            size,
            jit,
            opencl,
            cuda,
            registers,
            like,
        });
    }
    // The roll-up first: the per-kernel findings are its details.
    let mut findings: Vec<Finding> = jit_rollup(&triples).into_iter().collect();
    findings.extend(triples.into_iter().map(|t| {
        let w = change(Some(t.jit), Some(t.opencl)).unwrap_or(0.0);
        finding(Topic::Jit, Kind::JitKernel(t)).weight(w).detail()
    }));
    Jit {
        left_out: not.len(),
        rows,
        findings,
    }
}

/// The kernels that explain the most: those where the toolchains differ, by
/// the larger group; the example is the widest gap.
fn jit_rollup(triples: &[Triple]) -> Option<Finding> {
    let size = triples
        .iter()
        .map(|t| t.size)
        .max_by_key(|&(m, n, k)| (m as u128) * (n as u128) * (k as u128))?;
    let at: Vec<&Triple> = triples.iter().filter(|t| t.size == size).collect();
    let of = |like| {
        at.iter()
            .copied()
            .filter(|t| t.like == like)
            .collect::<Vec<_>>()
    };
    let groups: Vec<(Like, Vec<String>)> = [Like::Cuda, Like::OpenCl, Like::Neither, Like::Both]
        .into_iter()
        .map(|l| {
            (
                l,
                of(l).iter().map(|t| t.kernel.clone()).collect::<Vec<_>>(),
            )
        })
        .filter(|(_, ks)| !ks.is_empty())
        .collect();
    let differ: Vec<&Triple> = at.iter().copied().filter(|t| !is_same(t.gap())).collect();
    let (cuda_like, ocl_like) = (of(Like::Cuda).len(), of(Like::OpenCl).len());
    let lean = [Like::Cuda, Like::OpenCl, Like::Neither]
        .into_iter()
        .find(|&l| !of(l).is_empty() && (l != Like::Cuda || cuda_like >= ocl_like))
        .unwrap_or(Like::Both);
    let example = of(lean)
        .into_iter()
        .max_by(|a, b| a.gap().total_cmp(&b.gap()))
        .cloned();
    let weight = differ.iter().map(|t| t.gap()).fold(0.0, f64::max);
    let kind = Kind::JitRollup {
        size,
        kernels: at.len(),
        groups,
        differ: differ.len(),
        lean,
        leaning: of(lean).len(),
        example,
    };
    Some(finding(Topic::Jit, kind).weight(weight))
}
