//! Calls no entry was tuned for. The nearest tuned shape's configuration carries
//! its tile and split to a call they may not suit: 128 x 128 tiles tuned at
//! 2048^3 leave 1536^3 with 144 blocks for 132 multiprocessors, a split-K of 6
//! tuned at M = 128 wastes three quarters of each tile at M = 32. So every
//! configuration the database holds, each also with the other splits of K its
//! kernel takes, is ranked by the cost model of `fit` at the call, calibrated
//! by what the entry measured at its own call (measured / predicted there).
//! The model is coarse, so it overrules a measurement only where it has cause:
//! where it predicts the nearest entry's tiles and split to suit the call clearly
//! worse than they suited the call they were tuned at, and another configuration
//! clearly faster.

use crate::backend::DeviceInfo;
use crate::gemm::problem::{Layout, Problem};
use crate::kernel::builtin::{Config, Hints, KernelSpec};
use crate::results::bests::RoutineEntry;

use super::fit::{predicted_s, Machine};
use super::shape::{call_label, distance, ShapeClass};
use super::suite::transposes;

/// The model's pick replaces the nearest entry only when predicted this much faster.
pub const MARGIN: f64 = 0.15;
/// The model looks past the nearest entry only where it predicts that entry's
/// configuration this much slower per FLOP at the call than at its own.
pub const DEGRADED: f64 = 1.5;
/// The fewest iterations of its K loop a block's share of K may have in the
/// model's pick (`short_shares`).
pub const MIN_SHARE_ITERATIONS: f64 = 24.0;
/// The same with split-K's shares summed by a kernel of their own (`REDUCE`).
pub const MIN_REDUCED_SHARE_ITERATIONS: f64 = 8.0;

/// A database entry as this build runs it.
pub struct Candidate<'a> {
    pub entry: &'a RoutineEntry,
    pub spec: &'static KernelSpec,
    pub config: Config,
}

/// A configuration the model ranks, from the entry at `index`.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub index: usize,
    pub config: Config,
    /// The calibrated prediction for the call, seconds.
    pub seconds: f64,
}

/// The call an entry was tuned and measured at (its layout and transposes, tight).
pub fn tuned_call(e: &RoutineEntry) -> Option<Problem> {
    let mut words = e.call.split_whitespace();
    let layout = Layout::parse(words.next()?).ok()?;
    let (trans_a, trans_b) = transposes(words.next()?).ok()?;
    let p = Problem {
        layout,
        trans_a,
        trans_b,
        precision: e.precision,
        ..Problem::plain(e.m, e.n, e.k)
    };
    Some(p.tight())
}

/// The ways a kernel may share a tile's K, each with its "off" value.
const K_SHARING: [(&str, i64); 3] = [("SPLITK", 1), ("STREAMK", 0), ("TAILK", 1)];

/// `config` and the same tiles with each split of K its kernel takes: SPLITK's
/// values, STREAMK's and TAILK's (under the configuration's WAVE), each with
/// the other ways off; those valid on `device`.
fn variants(spec: &KernelSpec, config: &Config, hints: &Hints, device: &DeviceInfo) -> Vec<Config> {
    let has = |name: &str| spec.params.iter().find(|p| p.name == name);
    let with = |name: &str, v: i64| {
        let mut c = config.clone();
        for (other, off) in K_SHARING {
            if other != name && has(other).is_some() {
                c.0.insert(other.to_string(), off);
            }
        }
        c.0.insert(name.to_string(), v);
        // WAVE means something with TAILK only; otherwise it keeps its default.
        if let Some(wave) = has("WAVE").filter(|_| c.get("TAILK") <= 1) {
            c.0.insert("WAVE".into(), wave.default);
        }
        c
    };
    let mut out = vec![config.clone()];
    for (name, _) in K_SHARING {
        if let Some(p) = has(name) {
            out.extend(p.allowed.iter().map(|&v| with(name, v)));
        }
    }
    // Split-K's shares summed both ways where the kernel can: by the last work-group
    // of a tile, and by a kernel of their own (REDUCE), which pays where a tile has
    // many shares (49x512x4608: cuBLAS splits K and reduces in a second kernel).
    if has("REDUCE").is_some() {
        // Off: as the configuration had it (absent is off), so that it stays equal.
        let reduced = |c: &Config, on: bool| {
            let mut c = c.clone();
            if on && c.get("SPLITK") > 1 {
                c.0.insert("REDUCE".into(), 1);
            } else if c.0.contains_key("REDUCE") {
                c.0.insert("REDUCE".into(), 0);
            }
            c
        };
        out = (out.iter())
            .flat_map(|c| {
                [
                    reduced(c, c.get("REDUCE") == 1),
                    reduced(c, c.get("REDUCE") != 1),
                ]
            })
            .collect();
    }
    let mut seen: Vec<Config> = Vec::new();
    out.retain(|c| {
        let fresh = !seen.contains(c)
            && spec.validate(c).is_ok()
            && spec.unavailable_at(c, device, hints).is_none();
        if fresh {
            seen.push(c.clone());
        }
        fresh
    });
    out
}

/// The parameters of a warp-tiled kernel (the SIMT family): block, warp and
/// thread tiles along M and N. A kernel with all six can be re-tiled.
const TILE_PARAMS: [&str; 6] = ["BM", "BN", "WM", "WN", "TM", "TN"];
/// Lanes of a warp, each owning one TM x TN thread tile of the warp's WM x WN.
const LANES: i64 = 32;

/// How a kernel may read its operands (along K, or along M and N after the
/// routine's transpose): the form a call wants is not the form its nearest
/// entry was tuned with, and the model counts what each costs.
const FORM_PARAMS: [&str; 4] = ["ALONG_MN", "FIXED_FORM", "KMAJOR_A", "KMAJOR_B"];

/// `config` re-tiled: every block tile its kernel allows with every warp and
/// thread tile that divides it, in every operand form (`FORM_PARAMS`), each
/// with every split of K (`variants`); its pipeline and order kept. Empty for a
/// kernel without the tiles.
fn retiled(spec: &KernelSpec, config: &Config, hints: &Hints, device: &DeviceInfo) -> Vec<Config> {
    let allowed = |name: &str| {
        (spec.params.iter())
            .find(|p| p.name == name)
            .map(|p| p.allowed)
    };
    let tiles: Option<Vec<&[i64]>> = TILE_PARAMS.iter().map(|n| allowed(n)).collect();
    let Some(&[bms, bns, wms, wns, tms, tns]) = tiles.as_deref() else {
        return Vec::new();
    };
    // A side's (block, warp, thread) tiles that nest.
    let side = |bs: &[i64], ws: &[i64], ts: &[i64]| {
        let mut out = Vec::new();
        for &b in bs {
            for &w in ws.iter().filter(|&&w| b % w == 0) {
                out.extend(ts.iter().filter(|&&t| w % t == 0).map(|&t| (b, w, t)));
            }
        }
        out
    };
    let (along_m, along_n) = (side(bms, wms, tms), side(bns, wns, tns));
    let forms = FORM_PARAMS
        .iter()
        .fold(vec![config.clone()], |forms, name| {
            let Some(values) = allowed(name) else {
                return forms;
            };
            let with = |c: &Config, v: i64| {
                let mut c = c.clone();
                c.0.insert(name.to_string(), v);
                c
            };
            (forms.iter())
                .flat_map(|c| values.iter().map(move |&v| with(c, v)))
                .collect()
        });
    let mut out = Vec::new();
    for form in &forms {
        for &(bm, wm, tm) in &along_m {
            for &(bn, wn, tn) in along_n.iter().filter(|s| (wm / tm) * (s.1 / s.2) == LANES) {
                let mut c = form.clone();
                for (name, v) in TILE_PARAMS.into_iter().zip([bm, bn, wm, wn, tm, tn]) {
                    c.0.insert(name.to_string(), v);
                }
                if spec
                    .validate_with_switches(&c, hints, device.toolchain)
                    .is_ok()
                {
                    out.extend(variants(spec, &c, hints, device));
                }
            }
        }
    }
    out
}

/// For a call no entry was tuned for, each kernel's best re-tiling by the model
/// (`retiled`) of its entry nearest to `p` (the call's layout and transposes
/// first, then the shape), and its best with split-K summed by a kernel of its own
/// (`REDUCE`: the model cannot tell well whether one work-group's fix-up or a
/// second launch costs more), and its best with two slices of K a tile (`sliced`),
/// where predicted at least `MARGIN` faster than the
/// nearest entry (`nearest`) as tuned; fastest first. The database's tiles were
/// chosen for other shapes, and a thin or short call wants its own: a search at
/// 32x50257x768 found 32 x 256 tiles, at 196x512x4608 32 x 64 ones with K split
/// 16 ways, and the model ranks those first there too.
pub fn retiled_for(
    candidates: &[Candidate],
    nearest: usize,
    p: &Problem,
    device: &DeviceInfo,
) -> Vec<Ranked> {
    let machine = Machine::of(device);
    let ks = calibrations(candidates, p, &machine);
    let n = &candidates[nearest];
    let Some(nearest_s) = predicted_s(n.spec, &n.config, p, &machine).zip(ks[nearest]) else {
        return Vec::new();
    };
    let call = call_label(p);
    let near = |i: usize| {
        let e = candidates[i].entry;
        (e.call != call, distance((e.m, e.n, e.k), (p.m, p.n, p.k)))
    };
    let mut kernels: Vec<usize> = Vec::new();
    for i in (0..candidates.len()).filter(|&i| ks[i].is_some()) {
        let same = |j: &&mut usize| candidates[**j].spec.id == candidates[i].spec.id;
        match kernels.iter_mut().find(same) {
            Some(j) if near(i) < near(*j) => *j = i,
            Some(_) => {}
            None => kernels.push(i),
        }
    }
    let fastest = |rs: Vec<Ranked>| {
        rs.into_iter()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    };
    let mut out: Vec<Ranked> = kernels
        .into_iter()
        .flat_map(|index| {
            let Some(k) = ks[index] else {
                return Vec::new();
            };
            let c = &candidates[index];
            let configs = retiled(c.spec, &c.config, &c.entry.hints, device);
            let sliced = sliced(c.spec, &configs, device, &c.entry.hints);
            let (reduced, rest): (Vec<Ranked>, Vec<Ranked>) =
                priced((index, c, k), configs, p, &machine)
                    .partition(|r| r.config.get("REDUCE") == 1);
            let (best, best_reduced) = (fastest(rest), fastest(reduced));
            let best_sliced = fastest(priced((index, c, k), sliced, p, &machine).collect());
            best.into_iter()
                .chain(best_reduced)
                .chain(best_sliced)
                .collect()
        })
        .filter(|r| r.seconds <= (1.0 - MARGIN) * nearest_s.0 * nearest_s.1)
        .collect();
    out.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    out
}

/// Slices of K the routine times a re-tiling with: two groups of warps a tile.
/// On the H200, four ran `simt` alone slower than two at every call timed, and
/// on held-out calls they won a call's first-run timing only to lose its steady
/// state.
const SLICES: i64 = 2;

/// `configs` with `SLICES` groups of warps sharing each tile (more warps on a tile
/// of C where a call has few), those valid on `device`; none for a kernel without
/// slice-K. Timed beside the re-tilings, not in their place: the model counts the
/// slices' warps, not what they cost in work-groups a unit.
fn sliced(
    spec: &KernelSpec,
    configs: &[Config],
    device: &DeviceInfo,
    hints: &Hints,
) -> Vec<Config> {
    if !spec.params.iter().any(|p| p.name == "SLICEK") {
        return Vec::new();
    }
    (configs.iter())
        .filter(|c| c.get("SLICEK") <= 1)
        .map(|c| {
            let mut c = c.clone();
            c.0.insert("SLICEK".into(), SLICES);
            c
        })
        .filter(|c| spec.validate(c).is_ok() && spec.unavailable_at(c, device, hints).is_none())
        .collect()
}

/// The entry's measured time over the model's prediction at its own call.
fn calibration(c: &Candidate, machine: &Machine) -> Option<f64> {
    let at = tuned_call(c.entry)?;
    let predicted = predicted_s(c.spec, &c.config, &at, machine)?;
    let measured = c.entry.routine_ns * 1e-9;
    let k = measured / predicted;
    (k.is_finite() && k > 0.0).then_some(k)
}

/// Each candidate's calibration for `p`: its own counts in full at its own shape
/// and is drawn toward the median of its kernel's entries with each doubling of
/// distance; otherwise the entry whose model error happens to flatter it most
/// would win every call far from it. (The model counts every kernel's arithmetic
/// as FP32 FMAs, so tensor-core and f64 kernels calibrate to other levels.)
fn calibrations(candidates: &[Candidate], p: &Problem, machine: &Machine) -> Vec<Option<f64>> {
    let own: Vec<Option<f64>> = candidates.iter().map(|c| calibration(c, machine)).collect();
    let median = |kernel: &str| {
        let mut logs: Vec<f64> = candidates
            .iter()
            .zip(&own)
            .filter(|(c, _)| c.spec.id == kernel)
            .filter_map(|(_, k)| k.map(f64::ln))
            .collect();
        logs.sort_by(f64::total_cmp);
        logs.get(logs.len() / 2).copied()
    };
    let mut medians: Vec<(&str, Option<f64>)> = Vec::new();
    for c in candidates {
        if !medians.iter().any(|(id, _)| *id == c.spec.id) {
            medians.push((c.spec.id, median(c.spec.id)));
        }
    }
    let median_of = |id: &str| medians.iter().find(|(k, _)| *k == id).and_then(|m| m.1);
    candidates
        .iter()
        .zip(&own)
        .map(|(c, k)| {
            let (e, k) = (c.entry, k.as_ref()?.ln());
            let w = 0.5f64.powf(distance((e.m, e.n, e.k), (p.m, p.n, p.k)));
            let kernel = median_of(c.spec.id).unwrap_or(k);
            Some((w * k + (1.0 - w) * kernel).exp())
        })
        .collect()
}

/// Every candidate's configuration and its splits of K, ranked for `p` by the
/// calibrated model, fastest first; entries the model cannot calibrate and
/// configurations whose shares of K are short (`short_shares`) are left out.
pub fn rank(
    candidates: &[Candidate],
    p: &Problem,
    device: &DeviceInfo,
    machine: &Machine,
) -> Vec<Ranked> {
    rank_calibrated(
        candidates,
        &calibrations(candidates, p, machine),
        p,
        device,
        machine,
    )
}

/// `rank` with each candidate's calibration for `p` given.
fn rank_calibrated(
    candidates: &[Candidate],
    ks: &[Option<f64>],
    p: &Problem,
    device: &DeviceInfo,
    machine: &Machine,
) -> Vec<Ranked> {
    let mut out: Vec<Ranked> = candidates
        .iter()
        .zip(ks)
        .enumerate()
        .filter_map(|(index, (c, k))| Some((index, c, (*k)?)))
        .flat_map(|(index, c, k)| {
            let configs = variants(c.spec, &c.config, &c.entry.hints, device);
            priced((index, c, k), configs, p, machine)
        })
        .collect();
    out.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    out
}

/// `configs` of the candidate at `index` (calibrated by `k`) with their predicted
/// seconds at `p`; those whose shares of K are short (`short_shares`) left out.
fn priced<'a>(
    (index, c, k): (usize, &'a Candidate, f64),
    configs: Vec<Config>,
    p: &'a Problem,
    machine: &'a Machine,
) -> impl Iterator<Item = Ranked> + 'a {
    configs
        .into_iter()
        .filter(move |config| !short_shares(c.spec, config, p, machine))
        .filter_map(move |config| {
            let seconds = predicted_s(c.spec, &config, p, machine)? * k;
            Some(Ranked {
                index,
                config,
                seconds,
            })
        })
}

/// Whether `config` shares K among blocks so finely at `p` that each block's
/// share is under `MIN_SHARE_ITERATIONS` iterations of its K loop. Each share
/// then pays a pipeline fill, a partial-sum write and a fix-up that the model
/// does not count: on the H200 such picks (640^3 with stream-K, 7.6 iterations
/// a work-group; 1500x1500x200, 13.6) ran slower than the entry they replaced.
fn short_shares(spec: &KernelSpec, config: &Config, p: &Problem, machine: &Machine) -> bool {
    let (bm, bn, bk) = spec.tile(config);
    let tiles = p.m.div_ceil(bm.max(1)) * p.n.div_ceil(bn.max(1));
    let k_tiles = p.k.div_ceil(bk.max(1));
    let (split, stream) = (config.get("SPLITK").max(1), config.get("STREAMK").max(0));
    let tail_k = config.get("TAILK").max(1);
    let iterations = if tail_k > 1 {
        k_tiles as f64 / tail_k as f64
    } else if stream > 0 {
        let groups = (stream as f64 * machine.multiprocessors).min((tiles * k_tiles) as f64);
        (tiles * k_tiles) as f64 / groups.max(1.0)
    } else if split > 1 {
        k_tiles as f64 / split as f64
    } else {
        return false;
    };
    // Summed by a kernel of their own, shares pay their pipeline fill and a slice
    // written, no fix-up: cuBLAS splits 49x512x4608 into shares of 20 iterations.
    let least = if config.get("REDUCE") == 1 {
        MIN_REDUCED_SHARE_ITERATIONS
    } else {
        MIN_SHARE_ITERATIONS
    };
    iterations < least
}

/// How much slower per FLOP the model predicts `c` at `p` than at the call it was
/// tuned at: 1 where its tiles and split suit `p` as well as they suited that call.
fn degradation(c: &Candidate, p: &Problem, machine: &Machine) -> Option<f64> {
    let at = tuned_call(c.entry)?;
    let there = predicted_s(c.spec, &c.config, &at, machine)?;
    let here = predicted_s(c.spec, &c.config, p, machine)?;
    let work = |p: &Problem| p.m as f64 * p.n as f64 * p.k as f64;
    Some((here / work(p)) / (there / work(&at)))
}

/// The model's pick for `p`, where the nearest entry (`nearest`, an index into
/// `candidates`) is predicted to suit `p` worse than its own call by `DEGRADED`
/// or more, and the pick is predicted at least `MARGIN` faster than it; `None`
/// keeps the nearest entry, whose measurement the model does not overrule.
pub fn better_than_nearest(
    candidates: &[Candidate],
    nearest: usize,
    p: &Problem,
    device: &DeviceInfo,
) -> Option<Ranked> {
    let machine = Machine::of(device);
    if degradation(&candidates[nearest], p, &machine)? < DEGRADED {
        return None;
    }
    let c = &candidates[nearest];
    let ks = calibrations(candidates, p, &machine);
    let nearest_s = predicted_s(c.spec, &c.config, p, &machine)? * ks[nearest]?;
    let best = rank_calibrated(candidates, &ks, p, device, &machine)
        .first()?
        .clone();
    (best.seconds <= (1.0 - MARGIN) * nearest_s).then_some(best)
}

/// `Selection::Measure` times another family's best-ranked configuration where
/// the model predicts it at most this many times the best prediction: the model
/// is coarse across families, but not by more.
pub const FAMILY_REACH: f64 = 2.0;

/// What to time for `p` beside the nearest entry (`nearest`, an index into
/// `candidates`), at most `count`, in this order: the next nearest entry of the
/// call's class with another configuration, the model's best-ranked
/// configuration, the best-ranked of each other family the model gives a chance
/// (within `FAMILY_REACH` of the best prediction), then the next best-ranked;
/// each configuration once, none the nearest entry's.
pub fn to_time(
    candidates: &[Candidate],
    nearest: usize,
    p: &Problem,
    device: &DeviceInfo,
    count: usize,
) -> Vec<Ranked> {
    let key = |r: &Ranked| {
        let c = &candidates[r.index];
        (c.spec.id, r.config.clone(), c.entry.hints.clone())
    };
    let n = &candidates[nearest];
    let nearest_key = (n.spec.id, n.config.clone(), n.entry.hints.clone());
    let mut ranked: Vec<Ranked> = Vec::new();
    for r in rank(candidates, p, device, &Machine::of(device)) {
        let k = key(&r);
        if k != nearest_key && !ranked.iter().any(|x| key(x) == k) {
            ranked.push(r);
        }
    }
    let class = ShapeClass::of(p.m, p.n, p.k);
    let near = |r: &Ranked| {
        let e = candidates[r.index].entry;
        distance((e.m, e.n, e.k), (p.m, p.n, p.k))
    };
    let runner_up = (0..ranked.len())
        .filter(|&i| {
            let c = &candidates[ranked[i].index];
            c.entry.class == class && ranked[i].config == c.config
        })
        .min_by(|&x, &y| near(&ranked[x]).total_cmp(&near(&ranked[y])));
    let mut order: Vec<usize> = runner_up.into_iter().collect();
    let family = |i: usize| candidates[ranked[i].index].spec.id;
    for i in 0..ranked.len() {
        let taken = order.iter().any(|&j| family(j) == family(i));
        let reach = ranked[i].seconds <= ranked[0].seconds * FAMILY_REACH;
        let first = i == 0 && !order.contains(&0);
        if first || (family(i) != n.spec.id && !taken && reach) {
            order.push(i);
        }
    }
    let rest: Vec<usize> = (0..ranked.len()).filter(|i| !order.contains(i)).collect();
    order.extend(rest);
    order.truncate(count);
    order.into_iter().map(|i| ranked[i].clone()).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::Toolchain;
    use crate::gemm::problem::Precision;
    use crate::gemm::shape::ShapeClass;
    use crate::kernel::builtin as kernels;

    use super::super::fit::tests::h200_device as h200;

    /// A 64 x 64 SIMT tile of 32 x 32 warp tiles, 4 x 8 per thread: a narrow
    /// configuration for the tests' entries.
    pub(crate) const NARROW: [(&str, i64); 6] = [
        ("BM", 64),
        ("BN", 64),
        ("WM", 32),
        ("WN", 32),
        ("TM", 4),
        ("TN", 8),
    ];

    /// A simt entry with `defines` over its defaults, tuned at (m, n, k) col NN,
    /// whose measured time is the model's own prediction times `k_factor`.
    fn entry(shape: (usize, usize, usize), defines: &[(&str, i64)], k_factor: f64) -> RoutineEntry {
        let spec = kernels::find("simt").unwrap();
        let d: Vec<(String, i64)> = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        let config = spec.config(&d).unwrap();
        let (m, n, k) = shape;
        let machine = Machine::of(&h200());
        let predicted = predicted_s(spec, &config, &Problem::plain(m, n, k), &machine).unwrap();
        RoutineEntry {
            toolchain: Toolchain::Cuda,
            precision: Precision::F32,
            call: "col NN".into(),
            class: ShapeClass::of(m, n, k),
            m,
            n,
            k,
            emulated: false,
            kernel: "simt".into(),
            config,
            hints: Hints::default(),
            routine_ns: predicted * k_factor * 1e9,
            vendor_ns: None,
            candidates: vec![],
            compiler: None,
            gemmlab: "test".into(),
            tuned_utc: "now".into(),
        }
    }

    fn candidates(entries: &[RoutineEntry]) -> Vec<Candidate<'_>> {
        entries
            .iter()
            .map(|e| Candidate {
                entry: e,
                spec: kernels::find(&e.kernel).unwrap(),
                config: e.config.clone(),
            })
            .collect()
    }

    #[test]
    fn an_entry_is_measured_at_its_own_layout_and_transposes() {
        let mut e = entry((100, 200, 300), &[], 1.0);
        e.call = "row TN".into();
        let p = tuned_call(&e).unwrap();
        assert_eq!((p.m, p.n, p.k), (100, 200, 300));
        assert_eq!(p.layout, Layout::RowMajor);
        assert_eq!(
            (p.trans_a, p.trans_b),
            (
                crate::gemm::problem::Trans::T,
                crate::gemm::problem::Trans::N
            )
        );
        e.call = "diagonal".into();
        assert!(tuned_call(&e).is_none());
    }

    #[test]
    fn a_tile_that_leaves_the_gpu_half_idle_is_replaced() {
        // 128 x 128 tiles without split tuned at 2048^3 (256 tiles) give 1536^3 144
        // tiles for 132 multiprocessors; a 64 x 64 entry, measured as slow as the
        // model predicts, fits it better.
        let wide = [("BM", 128), ("BN", 128), ("SPLITK", 1)];
        let narrow = NARROW;
        let entries = vec![
            entry((2048, 2048, 2048), &wide, 1.0),
            entry((3000, 3000, 3000), &narrow, 1.0),
        ];
        let c = candidates(&entries);
        let p = Problem::plain(1536, 1536, 1536);
        let pick = better_than_nearest(&c, 0, &p, &h200()).expect("the model's pick");
        let (bm, bn, _) = c[pick.index].spec.tile(&pick.config);
        assert!(
            bm * bn < 128 * 128 || pick.config.get("STREAMK") > 0,
            "{}",
            pick.config.describe()
        );
        // Where the wide tile suits the call as well as its own, it stays.
        assert!(better_than_nearest(&c, 0, &Problem::plain(4096, 4096, 4096), &h200()).is_none());
    }

    #[test]
    fn a_thin_call_is_re_tiled_and_a_call_its_entry_fits_is_not() {
        // 128 x 128 tiles tuned at 4096^3 and 64 x 64 ones at 1024^3: a call 32 rows
        // tall would leave three quarters or half of either tile empty.
        let entries = vec![
            entry((4096, 4096, 4096), &[], 1.0),
            entry((1024, 1024, 1024), &NARROW, 1.0),
        ];
        let c = candidates(&entries);
        let started = std::time::Instant::now();
        let thin = Problem::plain(32, 50257, 768);
        let all = retiled_for(&c, 1, &thin, &h200());
        let r = all.first().expect("a re-tiling");
        assert!(
            started.elapsed().as_secs_f64() < 2.0,
            "{:?}",
            started.elapsed()
        );
        assert!(c[r.index].spec.validate(&r.config).is_ok());
        let (bm, _, _) = c[r.index].spec.tile(&r.config);
        assert!(bm <= 48, "{}", r.config.describe());
        // Its pipeline is the entry's.
        for name in ["STAGES", "BK", "GROUP"] {
            assert_eq!(r.config.get(name), c[r.index].config.get(name), "{name}");
        }
        // An in-place entry tuned with both operands read along M and N (B transposed
        // first) is re-tiled to read B as this call stores it: 154 MB not moved twice.
        let mut direct = entry((1024, 1024, 1024), &NARROW, 1.0);
        let spec = kernels::find("simtdirect").unwrap();
        let d: Vec<(String, i64)> = (NARROW.iter().chain(&[("ALONG_MN", 1)]))
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        direct.kernel = "simtdirect".into();
        direct.config = spec.config(&d).unwrap();
        let machine = Machine::of(&h200());
        let square = Problem::plain(1024, 1024, 1024);
        direct.routine_ns = predicted_s(spec, &direct.config, &square, &machine).unwrap() * 1e9;
        let with_direct = [entries.clone(), vec![direct]].concat();
        let c2 = candidates(&with_direct);
        let picks = retiled_for(&c2, 1, &thin, &h200());
        let in_place = picks.iter().find(|r| c2[r.index].spec.id == "simtdirect");
        let in_place = in_place.expect("the in-place family re-tiled");
        assert_eq!(
            in_place.config.get("ALONG_MN"),
            0,
            "{}",
            in_place.config.describe()
        );
        // Where the nearest entry's tiles suit the call as well as its own, it stays.
        let square = Problem::plain(4096, 4096, 4096);
        let kept = retiled_for(&c, 0, &square, &h200());
        assert!(kept.is_empty(), "{:?}", kept[0].config.describe());
    }

    #[test]
    fn each_way_of_sharing_k_is_tried_with_the_others_off() {
        let tc = kernels::find("tc").unwrap();
        let d: Vec<(String, i64)> = [("PRECISION", 64), ("TAILK", 4), ("WAVE", 1)]
            .iter()
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        let config = tc.config(&d).unwrap();
        let device = crate::routine::fit::tests::h200_device();
        let all = variants(tc, &config, &Hints::default(), &device);
        assert!(all.iter().all(|c| tc.validate(c).is_ok()));
        // Every TAILK under the entry's WAVE, every SPLITK with TAILK off and WAVE back
        // at its default.
        for t in [1, 2, 8, 32] {
            assert!(all.iter().any(|c| c.get("TAILK") == t
                && c.get("SPLITK") == 1
                && c.get("WAVE") == if t > 1 { 1 } else { 2 }));
        }
        for s in [2, 8] {
            assert!(all
                .iter()
                .any(|c| c.get("SPLITK") == s && c.get("TAILK") == 1 && c.get("WAVE") == 2));
        }
    }

    #[test]
    fn many_shares_of_k_are_summed_by_a_kernel_of_their_own() {
        // 49x512x4608: 64 x 64 tiles make 8 tiles of C. Split 32 ways, the last
        // work-group of each would read 31 partial tiles alone; a reduction kernel
        // reads them over the whole device.
        let machine = Machine::of(&h200());
        let spec = kernels::find("simt").unwrap();
        let with = |d: &[(&str, i64)]| {
            let d: Vec<(String, i64)> = d.iter().map(|(n, v)| (n.to_string(), *v)).collect();
            spec.config(&d).unwrap()
        };
        let p = Problem::plain(49, 512, 4608);
        let split = |reduce| with(&[&NARROW[..], &[("SPLITK", 32), ("REDUCE", reduce)]].concat());
        let (alone, reduced) = (
            predicted_s(spec, &split(0), &p, &machine).unwrap(),
            predicted_s(spec, &split(1), &p, &machine).unwrap(),
        );
        assert!(reduced < alone, "{reduced} against {alone}");
        // Re-tiled from an entry tuned without split-K, a pick that splits K and
        // reduces is among those to time, beside the model's best.
        let entries = vec![entry((1024, 1024, 1024), &NARROW, 1.0)];
        let c = candidates(&entries);
        let picks = retiled_for(&c, 0, &p, &h200());
        assert!(picks.len() <= 3, "{}", picks.len());
        let r = (picks.iter().find(|r| r.config.get("REDUCE") == 1)).expect("a reducing re-tiling");
        assert!(r.config.get("SPLITK") >= 4, "{}", r.config.describe());
        // Its best with two slices of K a tile is timed too, beside the others.
        let sliced = (picks.iter().filter(|r| r.config.get("SLICEK") == SLICES)).count();
        assert_eq!(
            sliced,
            1,
            "{:?}",
            picks
                .iter()
                .map(|r| r.config.describe())
                .collect::<Vec<_>>()
        );
        assert!(picks.iter().any(|r| r.config.get("SLICEK") == 1));
        // Without split-K there is nothing to reduce: never asked for.
        assert!(variants(spec, &with(&[]), &Hints::default(), &h200())
            .iter()
            .all(|c| c.get("REDUCE") == 0 || c.get("SPLITK") > 1));
    }

    #[test]
    fn shares_of_k_too_short_to_pay_are_never_picked() {
        let machine = Machine::of(&h200());
        let spec = kernels::find("simt").unwrap();
        let with = |d: &[(&str, i64)]| {
            let d: Vec<(String, i64)> = d.iter().map(|(n, v)| (n.to_string(), *v)).collect();
            spec.config(&d).unwrap()
        };
        // 640^3 in 128 x 128 tiles of BK 16: 25 tiles x 40 iterations; four stream-K
        // work-groups per multiprocessor would each take 2.
        let p = Problem::plain(640, 640, 640);
        assert!(short_shares(spec, &with(&[("STREAMK", 4)]), &p, &machine));
        assert!(short_shares(spec, &with(&[("SPLITK", 2)]), &p, &machine));
        assert!(!short_shares(spec, &with(&[]), &p, &machine));
        // A long K leaves each share plenty.
        let long = Problem::plain(256, 256, 16384);
        assert!(!short_shares(
            spec,
            &with(&[("SPLITK", 8)]),
            &long,
            &machine
        ));
        let entries = vec![entry((640, 640, 12288), &[("SPLITK", 8)], 1.0)];
        let ranked = rank(&candidates(&entries), &p, &h200(), &machine);
        assert!(ranked
            .iter()
            .all(|r| !short_shares(spec, &r.config, &p, &machine)));
        assert!(!ranked.is_empty());
    }

    #[test]
    fn a_flattering_calibration_far_away_is_drawn_to_its_kernels_median() {
        // Three entries the model predicts well and one it over-predicts fourfold
        // (measured 0.25 of its prediction) at a distant shape.
        let entries = vec![
            entry((2048, 2048, 2048), &[], 1.0),
            entry((4096, 4096, 4096), &[], 1.0),
            entry((3000, 3000, 3000), &[], 1.0),
            entry((50000, 64, 64), &NARROW, 0.25),
        ];
        let c = candidates(&entries);
        let machine = Machine::of(&h200());
        let ks = calibrations(&c, &Problem::plain(2500, 2500, 2500), &machine);
        let far = ks[3].unwrap();
        assert!(far > 0.8 && far < 1.0, "{far}");
        // At its own shape it counts in full.
        let own = calibrations(&c, &Problem::plain(50000, 64, 64), &machine)[3].unwrap();
        assert!((own - 0.25).abs() < 1e-9, "{own}");
    }
}
