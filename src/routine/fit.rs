//! A coarse model of what a GEMM kernel's configuration costs on one call, from
//! its tiles, the call's shape and the device's multiprocessors: the seeds of
//! each search of `gemmlab tune --suite`. A short search that starts from the
//! square-matrix defaults spends its time on 128 x 128 tiles that leave most of
//! an H200 idle on a 128 x 4096 call; cuBLAS's heuristics pick a narrower tile
//! or split K from the shape instead, and so do these seeds. The model ranks
//! configurations; measurement decides.
//!
//! Time = waves of resident blocks x the time of one block's FMAs at an
//! efficiency that grows with its tile (fewer loads per FMA) and with the warps
//! the multiprocessor holds, or the memory traffic, whichever is longer; plus
//! split-K's (or stream-K's) partial sums and the packing an indirect kernel needs when the
//! call's sizes are not multiples of its tiles, and a few microseconds per launch.

use crate::backend::occupancy;
use crate::backend::{Backend, DeviceInfo, DeviceKind};
use crate::gemm::data::round_up;
use crate::gemm::driver::Session;
use crate::gemm::problem::{Matrix, Problem};
use crate::kernel::builtin::{fixed_form, Abi, Config, KernelSpec};

/// What a launch costs beyond its work (event-timed steps of the routine).
const LAUNCH_S: f64 = 3e-6;
/// FP32 lanes per multiprocessor where the architecture does not say.
const DEFAULT_LANES: f64 = 64.0;

/// The device as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    pub multiprocessors: f64,
    /// FMAs per second of one multiprocessor.
    pub fma_per_s: f64,
    pub bytes_per_s: f64,
    limits: Option<occupancy::Limits>,
}

impl Machine {
    pub fn of(device: &DeviceInfo) -> Machine {
        let lanes = match device.compute_capability {
            Some((8, 0)) | Some((7, _)) | Some((6, 0)) => 64.0,
            Some((m, _)) if m >= 5 => 128.0,
            Some(_) => 192.0,
            None => DEFAULT_LANES,
        };
        let clock_hz = f64::from(device.clock_mhz.unwrap_or(1500).max(1)) * 1e6;
        Machine {
            multiprocessors: f64::from(device.compute_units.unwrap_or(1).max(1)),
            fma_per_s: lanes * clock_hz,
            bytes_per_s: device.memory_bandwidth_gbs.unwrap_or(500.0).max(1.0) * 1e9,
            limits: device
                .compute_capability
                .and_then(|(major, minor)| occupancy::limits(major, minor)),
        }
    }

    /// Blocks one multiprocessor holds and the warps they make, with registers
    /// estimated from the accumulators a thread owns.
    fn residency(&self, threads: usize, accumulators: usize, local_bytes: usize) -> (f64, f64) {
        let Some(l) = self.limits else {
            return (1.0, (threads as f64 / 32.0).max(1.0));
        };
        let registers = (accumulators as f64 * 1.25 + 40.0).min(255.0) as u32;
        match occupancy::occupancy(&l, threads as u32, registers, local_bytes as u32) {
            Some(o) if o.blocks_per_sm > 0 => {
                (f64::from(o.blocks_per_sm), f64::from(o.warps_per_sm))
            }
            _ => (0.0, 0.0),
        }
    }
}

/// `session`'s device as the model needs it. NVIDIA's OpenCL does not say the
/// memory bandwidth (the CUDA driver does): it comes from a session of `others`
/// on the same GPU, else from NVML (the session's monitor, or one opened for it).
/// Alone in its process, the OpenCL routine modelled the H200 at the 500 GB/s
/// fallback and re-tiled 12288x48x4096 TN into a tile that ran 252 us where the
/// model with the bandwidth chose one of 168 (results/h200/routine/near-ties/).
pub fn model_device(session: &Session, others: &[Session]) -> DeviceInfo {
    let mut info = session.backend.borrow().info().clone();
    if info.memory_bandwidth_gbs.is_some() || !info.is_nvidia() || info.kind != DeviceKind::Gpu {
        return info;
    }
    let same_gpu = |o: &Session| {
        let other = o.backend.borrow().info().clone();
        let same = info.pci_bus_id.is_some() && other.pci_bus_id == info.pci_bus_id;
        same.then_some(other.memory_bandwidth_gbs).flatten()
    };
    info.memory_bandwidth_gbs = others.iter().find_map(same_gpu).or_else(|| {
        let opened;
        let monitor = match &session.monitor {
            Some(m) => m,
            None => {
                opened = crate::measure::clocks::Monitor::open(
                    &crate::measure::clocks::Nvml::load(),
                    &info,
                )
                .ok()?;
                &opened
            }
        };
        monitor.memory_bandwidth_gbs()
    });
    info
}

/// Which of A and B `spec` at `config` reads K-contiguous for the call `p`: the
/// packed kernels as their `KMAJOR_A`/`KMAJOR_B` say, the in-place kernel as the call
/// stores them, unless `ALONG_MN` or `FIXED_FORM` has the routine transpose them first.
pub fn reads_along_k(spec: &KernelSpec, config: &Config, p: &Problem) -> (bool, bool) {
    if spec.abi != Abi::DirectInPlace {
        spec.k_major(config)
    } else {
        fixed_form(config).unwrap_or_else(|| p.k_contiguous())
    }
}

/// The predicted seconds of the whole call `p` (any layout) with `spec` at
/// `config`; `None` where the configuration cannot be resident at all.
pub fn predicted_s(
    spec: &KernelSpec,
    config: &Config,
    p: &Problem,
    machine: &Machine,
) -> Option<f64> {
    let p = p.column_major();
    let t = Tiling::of(spec, config, &p, machine);
    let (resident, warps) = machine.residency(
        t.threads,
        t.accumulators,
        (spec.local_bytes)(config).max(0) as usize,
    );
    if resident < 1.0 {
        return None;
    }
    let direct = matches!(spec.abi, Abi::Direct { .. });
    let in_place = spec.abi == Abi::DirectInPlace;
    // With ALONG_MN or FIXED_FORM, the in-place kernel's operands not in its form are
    // transposed first (and unaligned ones copied).
    let form = in_place.then(|| fixed_form(config)).flatten();
    let (a_k, b_k) = reads_along_k(spec, config, &p);
    // A K-contiguous operand goes into local memory one float at a time, from
    // half-used sectors: the SIMT kernel ran 10-20% slower so on the H200.
    let kind_eff = if direct { 0.7 } else { 1.0 } * 0.87f64.powi(i32::from(a_k) + i32::from(b_k));
    let compute = t.compute_s(machine, resident, warps, kind_eff);
    let (mp, np, kp) = (t.mp, t.np, t.kp);
    let traffic = (mp * kp + kp * np + 2 * mp * np) as f64 * t.elem;
    let mut seconds = compute.max(traffic / machine.bytes_per_s) + LAUNCH_S;
    let mut extras = t.shared_sums_s(config, machine);
    if let Some(form) = form {
        extras.extend(t.transposes_s(form, &p, machine));
    }
    if !direct && !in_place {
        extras.extend(t.packs_s(&p, (a_k, b_k), machine));
    }
    for x in extras {
        seconds += x;
    }
    Some(seconds)
}

/// A configuration's tiles and work-groups on a column-major call, as the model
/// counts them.
struct Tiling {
    /// The call's sizes (at least 1 each).
    m: usize,
    n: usize,
    k: usize,
    /// The block tile.
    bm: usize,
    bn: usize,
    bk: usize,
    /// The sizes rounded up to the tile.
    mp: usize,
    np: usize,
    kp: usize,
    split: usize,
    stream: usize,
    slices: usize,
    tail_k: usize,
    threads: usize,
    /// Sums a work-item holds.
    accumulators: usize,
    /// Tiles of C, and K tiles of each.
    tiles: usize,
    k_tiles: usize,
    /// Tiles of the last partial wave that TAILK work-groups share each.
    tail: usize,
    /// Work-groups of the main grid, and the K tiles of the longest.
    blocks: usize,
    block_iterations: usize,
    /// Bytes per element.
    elem: f64,
}

impl Tiling {
    fn of(spec: &KernelSpec, config: &Config, p: &Problem, machine: &Machine) -> Tiling {
        let (m, n, k) = (p.m.max(1), p.n.max(1), p.k.max(1));
        let (bm, bn, bk) = spec.tile(config);
        let (bm, bn, bk) = (bm.max(1), bn.max(1), bk.max(1));
        let split = usize::try_from(config.get("SPLITK")).unwrap_or(1).max(1);
        let stream = usize::try_from(config.get("STREAMK")).unwrap_or(0);
        let (mp, np, kp) = (round_up(m, bm), round_up(n, bn), round_up(k, bk));
        let threads = spec.threads_per_group(config).max(1);
        // Slice-K's groups of warps each hold the tile's sums over their slice of K.
        let slices = usize::try_from(config.get("SLICEK")).unwrap_or(1).max(1);
        let tiles = (mp / bm) * (np / bn);
        let k_tiles = kp / bk;
        // TAILK: the tiles of the last partial wave of WAVE work-groups per compute
        // unit, each shared by TAILK work-groups.
        let tail_k = usize::try_from(config.get("TAILK")).unwrap_or(1).max(1);
        let tail = if tail_k > 1 {
            crate::gemm::stage::tail_tiles(config, tiles, machine.multiprocessors as usize)
        } else {
            0
        };
        // The longest split's share of the K tiles; stream-K's persistent grid shares
        // every tile's K tiles evenly.
        let (blocks, block_iterations) = if stream > 0 {
            let groups =
                (stream * machine.multiprocessors as usize).clamp(1, (tiles * k_tiles).max(1));
            (groups, (tiles * k_tiles).div_ceil(groups))
        } else {
            ((tiles - tail) * split, k_tiles.div_ceil(split))
        };
        Tiling {
            m,
            n,
            k,
            bm,
            bn,
            bk,
            mp,
            np,
            kp,
            split,
            stream,
            slices,
            tail_k,
            threads,
            accumulators: bm * bn * slices / threads,
            tiles,
            k_tiles,
            tail,
            blocks,
            block_iterations,
            elem: p.precision.elem().size() as f64,
        }
    }

    /// Seconds of the FMAs, at an efficiency that grows with the tiles, `kind_eff`
    /// (the kernel's kind and its operands' reads) and the `warps` of the
    /// `resident` work-groups a multiprocessor holds.
    fn compute_s(&self, machine: &Machine, resident: f64, warps: f64, kind_eff: f64) -> f64 {
        let (bm, bn, bk, slices) = (self.bm, self.bn, self.bk, self.slices);
        // Loads per FMA fall with the block tile (global) and the thread tile (local).
        let block = (bm * bn) as f64 / (bm + bn) as f64;
        let thread = self.accumulators as f64;
        let tile_eff = (block / (block + 8.0)) * (thread / (thread + 2.0 * thread.sqrt()));
        let hiding = |warps: f64| (0.4 + warps / 16.0).min(1.0);
        let per_wave = machine.multiprocessors * resident;
        let rate = |r: f64| machine.fma_per_s * tile_eff * kind_eff * hiding(warps * r / resident);
        // Full waves of `blocks` work-groups of `iterations` K tiles, then the rest.
        let waves = |blocks: usize, iterations: usize| {
            // Slice-K's sums pass through local memory once at the end: counted as
            // that many FMAs more (a write and a read per sum and slice).
            let block_fma = (bm * bn * (iterations * bk + 2 * (slices - 1))) as f64;
            let blocks = blocks as f64;
            let full = (blocks / per_wave).floor();
            let rest = blocks - full * per_wave;
            let mut t = full * resident * block_fma / rate(resident);
            if rest > 0.0 {
                let r = (rest / machine.multiprocessors).ceil();
                t += r * block_fma / rate(r);
            }
            t
        };
        let tail_iterations = self.k_tiles.div_ceil(self.tail_k);
        waves(self.blocks, self.block_iterations) + waves(self.tail * self.tail_k, tail_iterations)
    }

    /// Seconds of the partial sums of shared tiles (split-K's, TAILK's, stream-K's),
    /// a term each, in that order.
    fn shared_sums_s(&self, config: &Config, machine: &Machine) -> Vec<f64> {
        let (split, tail, tail_k, elem) = (self.split, self.tail, self.tail_k, self.elem);
        let (mp, np, tiles) = (self.mp, self.np, self.tiles);
        let mut terms = Vec::new();
        // The last block of a shared tile reads the other shares' partial sums alone, at
        // about its multiprocessor's share of the bandwidth: with few tiles and many
        // shares each, that serial sum outlasts the traffic of all of them.
        let tile_bytes = (self.bm * self.bn) as f64 * elem;
        let lone = machine.bytes_per_s / machine.multiprocessors;
        if split > 1 && config.get("REDUCE") == 1 {
            // Each split writes its slice; a kernel of its own reads them all and writes C,
            // spread over the device.
            let all = ((2 * split + 1) * mp * np) as f64 * elem / machine.bytes_per_s;
            terms.push(all + LAUNCH_S);
        } else if split > 1 {
            let all = (2 * split * mp * np) as f64 * elem / machine.bytes_per_s;
            terms.push(all.max((split - 1) as f64 * tile_bytes / lone));
        }
        if tail > 0 {
            let all = (2 * tail_k * tail * self.bm * self.bn) as f64 * elem / machine.bytes_per_s;
            terms.push(all.max((tail_k - 1) as f64 * tile_bytes / lone));
        }
        if self.stream > 0 {
            // At most two shared tiles per work-group, written and read back.
            let blocks = self.blocks as f64;
            let shared = (2.0 * blocks).min(tiles as f64);
            let all = 2.0 * shared * tile_bytes / machine.bytes_per_s;
            let shares = (blocks / tiles as f64).ceil();
            terms.push(all.max((shares - 1.0).max(0.0) * tile_bytes / lone));
        }
        terms
    }

    /// Seconds of the in-place kernel's transposes: of each operand `p` does not
    /// store in `form` (K-contiguous A, B), or stores unaligned.
    fn transposes_s(&self, form: (bool, bool), p: &Problem, machine: &Machine) -> Vec<f64> {
        let (a_want, b_want) = form;
        let (a_stored, b_stored) = p.k_contiguous();
        let unaligned = |x: Matrix| {
            let s = p.storage(x);
            s.offset % 4 != 0 || s.ld % 4 != 0
        };
        let a_t = a_stored != a_want || unaligned(Matrix::A);
        let b_t = b_stored != b_want || unaligned(Matrix::B);
        [(a_t, self.m * self.k), (b_t, self.n * self.k)]
            .into_iter()
            .filter(|&(packed, _)| packed)
            .map(|(_, len)| self.copy_s(len, machine))
            .collect()
    }

    /// Seconds of the indirect kernel's packs: the plan's reads and writes of each
    /// operand not in the kernel's form (`along_k`: A, B read K-contiguous).
    fn packs_s(&self, p: &Problem, along_k: (bool, bool), machine: &Machine) -> Vec<f64> {
        let (a_k, b_k) = along_k;
        let (m, n, k, mp, np, kp) = (self.m, self.n, self.k, self.mp, self.np, self.kp);
        let (sa, sb, sc) = (
            p.storage(Matrix::A),
            p.storage(Matrix::B),
            p.storage(Matrix::C),
        );
        // As `gemm::stage::plan` decides it.
        let a_ready = sa.transposed == a_k
            && sa.offset == 0
            && sa.ld == if a_k { kp } else { mp }
            && (m, k) == (mp, kp);
        let b_ready = sb.transposed != b_k
            && sb.offset == 0
            && sb.ld == if b_k { kp } else { np }
            && (n, k) == (np, kp);
        let c_ready = sc.offset == 0 && sc.ld == mp && (m, n) == (mp, np);
        [(a_ready, mp * kp), (b_ready, np * kp), (c_ready, mp * np)]
            .into_iter()
            .filter(|&(ready, _)| !ready)
            .map(|(_, len)| self.copy_s(len, machine))
            .collect()
    }

    /// Seconds of a copy of `len` elements (read and written) in a launch of its own.
    fn copy_s(&self, len: usize, machine: &Machine) -> f64 {
        2.0 * len as f64 * self.elem / machine.bytes_per_s + LAUNCH_S
    }
}

/// The `count` configurations of `configs` the model ranks fastest for `p`, at
/// most one per block tile and split (so the seeds spread over shapes rather
/// than over the details of one).
pub fn fitted(
    spec: &KernelSpec,
    configs: impl IntoIterator<Item = Config>,
    p: &Problem,
    machine: &Machine,
    count: usize,
) -> Vec<(f64, Config)> {
    let mut ranked: Vec<(f64, Config)> = configs
        .into_iter()
        .filter_map(|c| predicted_s(spec, &c, p, machine).map(|t| (t, c)))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for (t, c) in ranked {
        let key = (
            spec.tile(&c),
            [
                c.get("SPLITK"),
                c.get("STREAMK"),
                c.get("TAILK"),
                c.get("WAVE"),
                c.get("REDUCE"),
            ],
        );
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        out.push((t, c));
        if out.len() == count {
            break;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::{DeviceKind, Toolchain};

    /// The H200 as its CUDA device record describes it (the routine's tests share it).
    pub(crate) fn h200_device() -> DeviceInfo {
        DeviceInfo {
            compute_capability: Some((9, 0)),
            compute_units: Some(132),
            clock_mhz: Some(1980),
            memory_bandwidth_gbs: Some(4800.0),
            ..DeviceInfo::new(
                Toolchain::Cuda,
                "cuda:0",
                "NVIDIA H200",
                "NVIDIA",
                "CUDA driver",
                DeviceKind::Gpu,
            )
        }
    }

    fn h200() -> Machine {
        Machine::of(&h200_device())
    }

    /// Every valid SIMT configuration over tiles, warps, threads and splits (BK
    /// 16, two stages, rasterised in groups of 8).
    fn simt_configs() -> Vec<Config> {
        let mut out = Vec::new();
        for bm in [32, 48, 64, 96, 128, 256] {
            for bn in [32, 48, 64, 96, 128, 256] {
                for (wm, wn, tm, tn) in [
                    (64, 32, 8, 8),
                    (32, 64, 8, 8),
                    (32, 32, 4, 8),
                    (32, 16, 4, 4),
                    (16, 32, 4, 4),
                ] {
                    for split in [1, 2, 3, 4, 6, 8, 16] {
                        let d: Vec<(String, i64)> = [
                            ("BM", bm),
                            ("BN", bn),
                            ("WM", wm),
                            ("WN", wn),
                            ("TM", tm),
                            ("TN", tn),
                            ("SPLITK", split),
                        ]
                        .iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect();
                        if let Ok(c) = simt().config(&d) {
                            out.push(c);
                        }
                    }
                }
            }
        }
        out
    }

    fn call(m: usize, n: usize, k: usize) -> Problem {
        Problem::plain(m, n, k)
    }

    fn simt() -> &'static KernelSpec {
        crate::kernel::builtin::find("simt").unwrap()
    }

    fn best(m: usize, n: usize, k: usize) -> Config {
        fitted(simt(), simt_configs(), &call(m, n, k), &h200(), 1)
            .remove(0)
            .1
    }

    fn blocks(c: &Config, m: usize, n: usize) -> usize {
        let (bm, bn, _) = simt().tile(c);
        m.div_ceil(bm) * n.div_ceil(bn) * c.get("SPLITK") as usize
    }

    #[test]
    fn a_large_square_keeps_wide_tiles_and_no_split() {
        let c = best(8192, 8192, 8192);
        let (bm, bn, _) = simt().tile(&c);
        assert!(bm * bn >= 128 * 64, "{}", c.describe());
        assert_eq!(c.get("SPLITK"), 1, "{}", c.describe());
    }

    #[test]
    fn thin_and_long_k_calls_fill_the_multiprocessors() {
        // 128 x 4096 has 32 tiles of 128 x 128 for 132 multiprocessors.
        for (m, n, k) in [(128, 4096, 4096), (1024, 1024, 32768), (768, 768, 8192)] {
            let c = best(m, n, k);
            assert!(
                blocks(&c, m, n) >= 132,
                "{m}x{n}x{k}: {} gives {} blocks",
                c.describe(),
                blocks(&c, m, n)
            );
        }
        // Long K splits it.
        assert!(best(1024, 1024, 32768).get("SPLITK") > 1);
    }

    #[test]
    fn a_narrow_n_takes_a_narrow_tile() {
        let c = best(4097, 33, 2049);
        assert!(simt().tile(&c).1 <= 64, "{}", c.describe());
    }

    #[test]
    fn b_is_read_as_stored_only_where_its_transpose_costs_more_than_the_slower_copy() {
        // 32-row tiles in 4 splits: 128 blocks, as the model would pick for M = 32.
        let tiles = [
            ("BM", 32),
            ("BN", 128),
            ("WM", 16),
            ("WN", 64),
            ("TM", 4),
            ("TN", 8),
            ("SPLITK", 4),
        ];
        let with = |kb: i64, (m, n, k)| {
            let mut d: Vec<(String, i64)> =
                tiles.iter().map(|(p, v)| (p.to_string(), *v)).collect();
            d.push(("KMAJOR_B".into(), kb));
            let c = simt().config(&d).unwrap();
            predicted_s(simt(), &c, &call(m, n, k), &h200()).unwrap()
        };
        // 32 x 4096 x 4096: transposing B's 64 MiB takes longer than the product.
        assert!(with(1, (32, 4096, 4096)) < with(0, (32, 4096, 4096)));
        // 4096^3: the same transpose is 1% of the work, the slower copy 13% of it.
        assert!(with(1, (4096, 4096, 4096)) > with(0, (4096, 4096, 4096)));
    }

    #[test]
    fn stream_k_pays_where_few_tiles_leave_multiprocessors_idle() {
        let with = |extra: &[(&str, i64)], (m, n, k)| {
            let d: Vec<(String, i64)> = extra.iter().map(|(p, v)| (p.to_string(), *v)).collect();
            let c = simt().config(&d).unwrap();
            predicted_s(simt(), &c, &call(m, n, k), &h200()).unwrap()
        };
        // 768^2 x 8192: 36 tiles of 128 x 128 for 132 multiprocessors.
        let few = (768, 768, 8192);
        assert!(with(&[("STREAMK", 1)], few) < 0.5 * with(&[], few));
        assert!(with(&[("STREAMK", 1)], few) < with(&[("SPLITK", 4)], few));
        // 8192^3: 4096 tiles in full waves of two blocks per multiprocessor (as the
        // model counts registers); stream-K with as many resident work-groups costs
        // its fix-ups, a little; with one per multiprocessor it holds half the warps.
        let many = (8192, 8192, 8192);
        let ratio = with(&[("STREAMK", 2)], many) / with(&[], many);
        assert!((0.95..1.05).contains(&ratio), "{ratio}");
        assert!(with(&[("STREAMK", 1)], many) > with(&[("STREAMK", 2)], many));
    }

    #[test]
    fn the_last_wave_shared_along_k_pays_only_where_it_is_part_empty() {
        let tc = crate::kernel::builtin::find("tc").unwrap();
        let with = |extra: &[(&str, i64)], (m, n, k)| {
            let d: Vec<(String, i64)> = [
                ("PRECISION", 64),
                ("BM", 128),
                ("BN", 64),
                ("WM", 64),
                ("WN", 32),
                ("STAGES", 4),
            ]
            .iter()
            .chain(extra)
            .map(|(p, v)| (p.to_string(), *v))
            .collect();
            let c = tc.config(&d).unwrap();
            let mut p = call(m, n, k);
            p.precision = crate::kernel::builtin::Precision::F64;
            predicted_s(tc, &c, &p, &h200()).unwrap()
        };
        // 1024 x 1024 x 8192: 128 tiles for a wave of 264, every one shared four ways.
        let few = (1024, 1024, 8192);
        assert!(with(&[("TAILK", 4)], few) < 0.7 * with(&[], few));
        // 2816 x 1536: 528 tiles, two whole waves of 264; nothing to share.
        let whole = (2816, 1536, 4096);
        assert_eq!(with(&[("TAILK", 4)], whole), with(&[], whole));
    }

    #[test]
    fn seeds_differ_in_tile_or_split() {
        let seeds = fitted(simt(), simt_configs(), &call(1000, 1000, 1000), &h200(), 6);
        assert_eq!(seeds.len(), 6);
        for (i, a) in seeds.iter().enumerate() {
            for b in &seeds[i + 1..] {
                assert!(
                    (simt().tile(&a.1), a.1.get("SPLITK"))
                        != (simt().tile(&b.1), b.1.get("SPLITK"))
                );
            }
            assert!(a.0 > 0.0 && a.0.is_finite());
        }
        assert!(seeds.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}
