//! The sweeps: register caps, gemm11 tiling, compiler hints (one grid per
//! kernel and size: the points swept by toolchain, each against a baseline),
//! and OpenCL's PTX through the CUDA JIT.

use crate::backend::Toolchain::{self, Cuda, OpenCl};
use crate::results::{Measurement as M, NVRTC_PTX, OPENCL_PTX};

use super::data::{self, gflops, is_vendor, of_size, registers as regs, size_label, tile_of, Rec};
use super::stats::{change, distinct, is_same};
use super::{Data, Finding, Topic};

pub type Size = (usize, usize, usize);

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
    /// A register sweep at its largest size, per toolchain; `top` the largest gain of a cap.
    RegisterCaps {
        kernel: String,
        switches: String,
        size: Size,
        toolchains: Vec<CapToolchain>,
        not_as_asked: Vec<NotAsAsked>,
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
    /// Switches that change speed, largest first; `size` is `None` when kernels' largest sizes differ.
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
    /// All kernels at the largest size: which native build the JIT run is like;
    /// `differ` counts kernels whose toolchains differ.
    JitRollup {
        size: Size,
        kernels: usize,
        groups: Vec<(Like, Vec<String>)>,
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

/// Which native build the JIT run of OpenCL's PTX runs like: CUDA (the gap is
/// OpenCL's back end or launch), OpenCL native (the gap is in the PTX), neither, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Like {
    Cuda,
    #[serde(rename = "opencl")]
    OpenCl,
    Neither,
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
    /// NVRTC's own PTX through the same JIT, where the run has that lane: the
    /// CUDA twin's front end with the JIT's assembler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvrtc_jit: Option<f64>,
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

/// The experiment's kernel rows (no vendor, no variant) grouped by kernel and
/// `switches`, then by size, then by the point `point` gives (ordered by its
/// rank); `is_base` picks the baseline.
fn sweep<'a, R: Ord + Copy, P: PartialEq>(
    data: &'a Data,
    exp: &str,
    switches: impl Fn(&M) -> String,
    point: impl Fn(&M) -> Option<(R, P)>,
    is_base: impl Fn(&M) -> bool,
) -> Sweep<'a, P> {
    let toolchains = data.toolchains();
    let (vendor, mut recs): (Vec<Rec>, Vec<Rec>) =
        (data.experiment(exp).into_iter()).partition(|r| is_vendor(r.m));
    recs.retain(|r| r.m.variant.is_none() && point(r.m).is_some());
    recs.sort_by(|a, b| data::kernel_order(&a.m.kernel, &b.m.kernel));
    let block = |of: &[Rec<'a>], size| {
        let rows: Vec<&M> = of
            .iter()
            .map(|r| r.m)
            .filter(|m| of_size(m, size))
            .collect();
        let mut ranked: Vec<(R, P)> = rows.iter().filter_map(|m| point(m)).collect();
        ranked.sort_by_key(|x| x.0);
        let points = distinct(ranked.into_iter().map(|x| x.1));
        // Each toolchain's first row that `f` picks.
        let find = |f: &dyn Fn(&M) -> bool| {
            let first = |&t| rows.iter().copied().find(|m| m.toolchain == t && f(m));
            toolchains.iter().map(first).collect()
        };
        let at = |p: &P| find(&|m| point(m).is_some_and(|x| x.1 == *p));
        Block {
            size,
            cells: points.iter().map(at).collect(),
            base: find(&is_base),
            points,
            vendor: data::vendor_at(&vendor, size),
            rows,
        }
    };
    let groups = distinct(recs.iter().map(|r| (r.m.kernel.clone(), switches(r.m))));
    let series = (groups.into_iter())
        .map(|(kernel, sw)| {
            let of = |r: &Rec| r.m.kernel == kernel && switches(r.m) == sw;
            let of: Vec<Rec> = recs.iter().copied().filter(of).collect();
            let blocks: Vec<Block<P>> = (data::sizes(&of).into_iter())
                .map(|z| block(&of, z))
                .collect();
            let first = blocks.first().map_or(String::new(), |b| size_label(b.size));
            Series {
                chart: format!("{exp}-{kernel}{}-{first}", chart_suffix(&sw)),
                kernel,
                switches: sw,
                blocks,
            }
        })
        .collect();
    Sweep {
        toolchains,
        series,
        findings: Vec::new(),
    }
}

/// "" for the published kernel, else the switch set as a file-name suffix.
fn chart_suffix(switches: &str) -> String {
    let rest = switches.strip_prefix("published + ").unwrap_or("");
    let rest = rest.replace('=', "").to_ascii_lowercase();
    (rest.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(|w| format!("-{w}"))
        .collect()
}

/// Each set of switches is a series of its own: with launch bounds, for one,
/// the compilers may override a cap. Findings at each series' largest size.
pub fn registers(data: &Data) -> Sweep<'_, Option<u32>> {
    let cap = |m: &M| data::register_cap(m).map_or((u32::MAX, None), |c| (c, Some(c)));
    let (describe, point) = (|m: &M| m.hints.describe(false), |m: &M| Some(cap(m)));
    let a = sweep(data, "registers", describe, point, |m| cap(m).1.is_none());
    let findings = (a.series.iter())
        .filter_map(|s| Some(cap_finding(s, &a.toolchains)?.chart(Some(s.chart.clone()))))
        .collect();
    Sweep { findings, ..a }
}

/// Spills, walking down from the highest cap.
fn spills(walk: &[(Option<u32>, u64)]) -> Option<Spills> {
    let (first, last) = (walk.first()?, walk.last()?);
    Some(match walk.iter().position(|(_, b)| *b > 0) {
        None => Spills::None { lowest: last.0 },
        Some(0) => {
            let (cap, bytes) = *first;
            Spills::AtHighest { cap, bytes }
        }
        Some(i) => Spills::From {
            clean_to: walk[i - 1].0,
            cap: walk[i].0,
            bytes: walk[i].1,
            most: (walk[i..].iter().max_by_key(|(_, b)| *b))
                .filter(|m| m.0 != walk[i].0)
                .copied(),
        },
    })
}

fn cap_finding(s: &Series<Option<u32>>, tcs: &[Toolchain]) -> Option<Finding> {
    let b = s.blocks.first()?;
    let (mut per, mut not_as_asked, mut top) = (Vec::new(), Vec::new(), None::<CapGain>);
    for (ti, &toolchain) in tcs.iter().enumerate() {
        let rows: Vec<(Option<u32>, &M)> = (b.points.iter().zip(&b.cells))
            .filter_map(|(c, r)| Some((*c, r[ti]?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let walk: Vec<(Option<u32>, u64)> = (rows.iter().rev())
            .filter_map(|(c, m)| Some((*c, data::spill_bytes(m)?)))
            .collect();
        let best = (rows.iter())
            .filter_map(|(c, m)| Some((*c, gflops(m)?, regs(m))))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let full = b.base[ti].and_then(regs);
        let speed = match (best, b.base[ti].and_then(gflops)) {
            (Some((Some(cap), gflops, registers)), Some(uncapped))
                if gflops > uncapped && !is_same(gflops / uncapped - 1.0) =>
            {
                if (top.as_ref()).is_none_or(|t| gflops / uncapped > t.gflops / t.uncapped) {
                    top = Some(CapGain {
                        toolchain,
                        cap,
                        gflops,
                        uncapped,
                        registers,
                        uncapped_registers: full,
                    });
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
        not_as_asked.extend(rows.iter().filter_map(|&(cap, m)| {
            let (cap, used) = (cap?, regs(m)?);
            let off = used > cap || (used < cap && full.is_some_and(|f| f > cap));
            off.then_some(NotAsAsked {
                toolchain,
                cap,
                used,
                uncapped: full,
            })
        }));
        let spills = spills(&walk);
        per.push(CapToolchain {
            toolchain,
            spills,
            speed,
        });
    }
    if per.iter().all(|p| p.spills.is_none() && p.speed.is_none()) && not_as_asked.is_empty() {
        return None;
    }
    let weight = top.as_ref().map_or(0.0, |t| t.gflops / t.uncapped - 1.0);
    let kind = Kind::RegisterCaps {
        kernel: s.kernel.clone(),
        switches: s.switches.clone(),
        size: b.size,
        toolchains: per,
        not_as_asked,
        top,
    };
    Some(finding(Topic::RegisterCaps, kind).weight(weight))
}

pub fn tiling<'a>(data: &'a Data, device: Option<&str>) -> Sweep<'a, (i64, i64)> {
    let point = |m: &M| tile_of(m).map(|t| (t, t));
    let a = sweep(data, "tiling", |_| String::new(), point, |_| false);
    let both = a.toolchains.contains(&Cuda) && a.toolchains.contains(&OpenCl);
    let findings = (a.series.iter().filter(|_| both))
        .filter_map(|s| {
            let mut claims = s.blocks.iter().enumerate();
            let (i, f) = claims.find_map(|(i, b)| Some((i, tile_claim(&s.kernel, b, device)?)))?;
            Some(f.chart((i == 0).then(|| s.chart.clone())))
        })
        .collect();
    Sweep { findings, ..a }
}

fn tile_claim(kernel: &str, b: &Block<(i64, i64)>, device: Option<&str>) -> Option<Finding> {
    let of = |t: Toolchain| b.rows.iter().copied().filter(move |m| m.toolchain == t);
    let get = |t, tile| {
        let m = of(t).find(|m| tile_of(m) == Some(tile))?;
        let (gflops, registers) = (gflops(m)?, regs(m));
        Some(Tile { gflops, registers })
    };
    let cuda = [get(Cuda, (8, 4))?, get(Cuda, (4, 4))?];
    let opencl = [get(OpenCl, (8, 4))?, get(OpenCl, (4, 4))?];
    let c = |[a, b]: [Tile; 2]| a.gflops / b.gflops - 1.0;
    let fastest = Toolchain::ALL.into_iter().filter_map(|t| {
        let best = of(t).filter_map(|m| Some((tile_of(m)?, gflops(m)?)));
        let (tile, g) = best.max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some((t, tile, g))
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
    Some(finding(Topic::Tiling, kind).weight(c(opencl).abs().max(c(cuda).abs())))
}

/// The published kernel: labelled "baseline", or unlabelled with no switch moved.
pub fn is_baseline(m: &M) -> bool {
    (m.label.as_deref()).map_or(m.hints.is_published(), |l| {
        l.eq_ignore_ascii_case("baseline")
    })
}

/// Each switch against the baseline on its toolchain, at each kernel's largest
/// size; a point is named by its label, else its switches.
pub fn hints(data: &Data) -> Sweep<'_, String> {
    let name = |m: &M| m.label.clone().unwrap_or_else(|| m.hints.describe(true));
    let point = |m: &M| Some((!is_baseline(m), name(m)));
    let mut a = sweep(data, "hints", |_| String::new(), point, is_baseline);
    let mut all: Vec<(Size, Effect)> = Vec::new();
    for (s, b) in a.series.iter().filter_map(|s| Some((s, s.blocks.first()?))) {
        for (p, row) in b.points.iter().zip(&b.cells) {
            let cells = a.toolchains.iter().zip(row).zip(&b.base);
            all.extend(cells.filter_map(|((&toolchain, m), base)| {
                let (m, base) = ((*m)?, (*base)?);
                let effect = Effect {
                    kernel: s.kernel.clone(),
                    toolchain,
                    point: p.clone(),
                    base_gflops: gflops(base)?,
                    gflops: gflops(m)?,
                    base_registers: regs(base),
                    registers: regs(m),
                };
                (!is_baseline(m)).then_some((b.size, effect))
            }));
        }
    }
    let sizes = distinct(all.iter().map(|x| x.0));
    let size = (sizes.len() == 1).then(|| sizes[0]);
    let c = |e: &Effect| e.gflops / e.base_gflops - 1.0;
    let (small, mut effects): (Vec<Effect>, Vec<Effect>) =
        all.into_iter().map(|x| x.1).partition(|e| is_same(c(e)));
    effects.sort_by(|a, b| c(b).abs().total_cmp(&c(a).abs()));
    let points: Vec<(String, Vec<_>)> = (distinct(small.iter().map(|e| &e.point)).into_iter())
        .map(|p| {
            let at = |e: &Effect| (e.point == *p).then(|| (e.kernel.clone(), e.toolchain));
            (p.clone(), small.iter().filter_map(at).collect())
        })
        .collect();
    let idle: Vec<String> = (points.iter().map(|(p, _)| p.clone()))
        .filter(|p| !effects.iter().any(|e| e.point == *p))
        .collect();
    if let Some(w) = effects.first().map(c) {
        a.findings
            .push(finding(Topic::Hints, Kind::HintEffects { size, effects }).weight(w));
    }
    if !points.is_empty() {
        let detail = idle.is_empty();
        let f = finding(Topic::Hints, Kind::HintsIdle { size, points, idle });
        a.findings.push(if detail { f.detail() } else { f });
    }
    a
}

/// A JIT row and the native rows beside it, each with the run it came from ("jit" or
/// "compare"), and NVRTC's PTX through the same JIT where the run has it.
pub struct JitRow<'a> {
    pub jit: &'a M,
    pub opencl: Option<(&'a M, &'static str)>,
    pub cuda: Option<(&'a M, &'static str)>,
    pub nvrtc_jit: Option<&'a M>,
}

pub struct Jit<'a> {
    /// JIT rows left out: their build did not go through the CUDA driver JIT.
    pub left_out: usize,
    pub rows: Vec<JitRow<'a>>,
    pub findings: Vec<Finding>,
}

/// A JIT row is one whose build went through cuModuleLoadDataEx. Before the
/// fix of the PTX lane, the lane compiled the CUDA source instead: such rows
/// are not OpenCL's PTX and are left out, counted.
pub fn jit(data: &Data) -> Jit<'_> {
    // A runtime factor's rows (`--carveout`) are the runtime section's.
    let all: Vec<&M> = (data.experiment("jit").iter().map(|r| r.m))
        .filter(|m| m.hints.carveout.is_none())
        .collect();
    let compare = data.experiment("compare");
    // Through the CUDA driver: OpenCL's PTX (the OpenCL runtime's rows of loaded
    // PTX are the runtime section's, `analysis::runtime`).
    let lane = (all.iter().copied()).filter(|m| {
        !is_vendor(m) && m.toolchain == Cuda && m.variant.as_deref().is_some_and(|v| v != NVRTC_PTX)
    });
    let (jits, not): (Vec<&M>, Vec<&M>) = lane.partition(|m| {
        m.build_notes
            .iter()
            .any(|n| n.contains("cuModuleLoadDataEx"))
    });
    // The jit run's row of the same kernel, size and configuration that `f` picks.
    let beside = |m: &M, f: &dyn Fn(&M) -> bool| {
        let size = (m.m, m.n, m.k);
        let same = |x: &M| x.kernel == m.kernel && of_size(x, size) && x.config == m.config;
        all.iter().copied().find(|x| same(x) && f(x))
    };
    // Native rows: the jit run's own first, then the compare run's.
    let native = |m: &M, t| {
        let own = beside(m, &|x| x.toolchain == t && x.variant.is_none());
        let size = (m.m, m.n, m.k);
        own.map(|x| (x, "jit"))
            .or_else(|| data::find(&compare, &m.kernel, t, size).map(|x| (x, "compare")))
    };
    let rows: Vec<JitRow> = (jits.into_iter())
        .filter(|m| m.variant.as_deref() == Some(OPENCL_PTX))
        .map(|jit| JitRow {
            jit,
            opencl: native(jit, OpenCl),
            cuda: native(jit, Cuda),
            nvrtc_jit: beside(jit, &|x| {
                x.toolchain == Cuda && x.variant.as_deref() == Some(NVRTC_PTX)
            }),
        })
        .collect();
    let triples: Vec<Triple> = (rows.iter())
        .filter_map(|r| {
            let ms = [r.jit, r.opencl?.0, r.cuda?.0];
            let [jit, opencl, cuda] = [gflops(ms[0])?, gflops(ms[1])?, gflops(ms[2])?];
            let near = |a: f64, b: f64| is_same(a / b - 1.0);
            let like = match (near(jit, opencl), near(jit, cuda), near(opencl, cuda)) {
                (true, _, false) => Like::OpenCl,
                (_, true, false) => Like::Cuda,
                (false, ..) => Like::Neither,
                _ => Like::Both,
            };
            Some(Triple {
                kernel: r.jit.kernel.clone(),
                size: (r.jit.m, r.jit.n, r.jit.k),
                jit,
                opencl,
                cuda,
                registers: ms.map(regs),
                like,
                nvrtc_jit: r.nvrtc_jit.and_then(gflops),
            })
        })
        .collect();
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
    let size = (triples.iter().map(|t| t.size))
        .max_by_key(|&(m, n, k)| (m as u128) * (n as u128) * (k as u128))?;
    let at: Vec<&Triple> = triples.iter().filter(|t| t.size == size).collect();
    let of = |like| at.iter().copied().filter(move |t| t.like == like);
    let groups = [Like::Cuda, Like::OpenCl, Like::Neither, Like::Both]
        .into_iter()
        .map(|l| (l, of(l).map(|t| t.kernel.clone()).collect::<Vec<_>>()))
        .filter(|(_, ks)| !ks.is_empty())
        .collect();
    let differ: Vec<&Triple> = at.iter().copied().filter(|t| !is_same(t.gap())).collect();
    let (cuda_like, ocl_like) = (of(Like::Cuda).count(), of(Like::OpenCl).count());
    let lean = [Like::Cuda, Like::OpenCl, Like::Neither]
        .into_iter()
        .find(|&l| of(l).next().is_some() && (l != Like::Cuda || cuda_like >= ocl_like))
        .unwrap_or(Like::Both);
    let kind = Kind::JitRollup {
        size,
        kernels: at.len(),
        groups,
        differ: differ.len(),
        lean,
        leaning: of(lean).count(),
        example: of(lean).max_by(|a, b| a.gap().total_cmp(&b.gap())).cloned(),
    };
    let weight = differ.iter().map(|t| t.gap()).fold(0.0, f64::max);
    Some(finding(Topic::Jit, kind).weight(weight))
}
