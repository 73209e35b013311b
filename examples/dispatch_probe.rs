//! Where a runtime puts the blocks of a grid: one probe kernel, the same grid and
//! the same local memory per block, launched through each toolchain of one
//! NVIDIA GPU. Each block records the multiprocessor it ran on (`%smid`) and
//! when it started and ended (`%globaltimer`), then the probe reports per
//! toolchain and local-memory size:
//! - how many blocks a multiprocessor held at once (the launch's real
//!   occupancy, which the runtime's choice of shared-memory carveout can cut
//!   below what registers and local memory allow),
//! - whether blocks start in the order of their place in the grid, and which
//!   multiprocessors the first blocks of the grid land on.
//!
//! Written for issue 28 (NVIDIA OpenCL's DGEMM at 0.58x cuBLAS where the same
//! PTX through the CUDA driver runs at 0.89x). No NVIDIA GPU: it says so, exit 0.
//!
//! cargo run --release --features cuda --example dispatch_probe -- \
//!     [--device h200] [--backends cuda,opencl] [--grid 64x64] [--block 64x2] \
//!     [--shared 0,34816,49152] [--spin-us 40] [--out DIR]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use gemmlab::{open_spec, Arg, Backend, CompileOptions, Elem, Error, Geometry, HostDataMut};
use gemmlab::{Language, Result, Toolchain};

/// Words per block record: smid, grid place, start (lo, hi), end (lo, hi).
const WORDS: usize = 6;

const CUDA_PROBE: &str = r#"
extern "C" __global__ void probe(const unsigned int spin_ns, unsigned int* rec) {
    __shared__ volatile unsigned int pad[SHARED_WORDS];
    const unsigned int tid = threadIdx.x + threadIdx.y * blockDim.x;
    const unsigned int place = blockIdx.x + blockIdx.y * gridDim.x;
    unsigned int smid;
    unsigned long long t0, t;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (unsigned int i = tid; i < SHARED_WORDS; i += blockDim.x * blockDim.y) pad[i] = smid;
    __syncthreads();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < spin_ns);
    __syncthreads();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (tid == 0) {
        unsigned int* r = rec + 6 * place;
        r[0] = pad[(unsigned int)t0 % SHARED_WORDS];
        r[1] = place;
        r[2] = (unsigned int)t0;
        r[3] = (unsigned int)(t0 >> 32);
        r[4] = (unsigned int)t;
        r[5] = (unsigned int)(t >> 32);
    }
}
"#;

const OPENCL_PROBE: &str = r#"
#if defined(__clang__)
#define asm __asm__
#endif
__kernel void probe(const uint spin_ns, __global uint* rec) {
    __local volatile uint pad[SHARED_WORDS];
    const uint tid = get_local_id(0) + get_local_id(1) * get_local_size(0);
    const uint place = get_group_id(0) + get_group_id(1) * get_num_groups(0);
    uint smid;
    ulong t0, t;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (uint i = tid; i < SHARED_WORDS; i += get_local_size(0) * get_local_size(1)) pad[i] = smid;
    barrier(CLK_LOCAL_MEM_FENCE);
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < spin_ns);
    barrier(CLK_LOCAL_MEM_FENCE);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (tid == 0) {
        __global uint* r = rec + 6 * place;
        r[0] = pad[(uint)t0 % SHARED_WORDS];
        r[1] = place;
        r[2] = (uint)t0;
        r[3] = (uint)(t0 >> 32);
        r[4] = (uint)t;
        r[5] = (uint)(t >> 32);
    }
}
"#;

struct Options {
    device: String,
    toolchains: Vec<Toolchain>,
    grid: (usize, usize),
    block: (usize, usize),
    shared: Vec<usize>,
    spin_ns: u32,
    out: Option<PathBuf>,
}

fn pair(flag: &str, v: &str) -> Result<(usize, usize)> {
    let bad = || Error::invalid(format!("{flag} {v}: expected two positive numbers as AxB"));
    let (a, b) = v.split_once('x').ok_or_else(bad)?;
    match (a.parse::<usize>(), b.parse::<usize>()) {
        (Ok(a), Ok(b)) if a > 0 && b > 0 => Ok((a, b)),
        _ => Err(bad()),
    }
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        device: "h200".into(),
        toolchains: vec![Toolchain::Cuda, Toolchain::OpenCl],
        grid: (64, 64),
        block: (64, 2),
        shared: vec![0, 34816, 49152],
        spin_ns: 40_000,
        out: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| Error::invalid(format!("{flag} needs a value")))?;
        match flag.as_str() {
            "--device" => o.device = v.clone(),
            "--backends" => {
                o.toolchains = v
                    .split(',')
                    .map(|t| {
                        Toolchain::parse(t).ok_or_else(|| {
                            Error::invalid(format!("--backends: unknown toolchain {t}"))
                        })
                    })
                    .collect::<Result<_>>()?
            }
            "--grid" => o.grid = pair(flag, v)?,
            "--block" => o.block = pair(flag, v)?,
            "--shared" => {
                o.shared = v
                    .split(',')
                    .map(|s| match s.parse::<usize>() {
                        Ok(b) if b <= 49152 => Ok(b),
                        _ => Err(Error::invalid(format!(
                            "--shared {s}: bytes of static local memory, 0 to 49152"
                        ))),
                    })
                    .collect::<Result<_>>()?
            }
            "--spin-us" => {
                o.spin_ns = match v.parse::<u32>() {
                    Ok(us) if (1..=4_000_000).contains(&us) => us * 1000,
                    _ => return Err(Error::invalid(format!("--spin-us {v}: 1 to 4000000"))),
                }
            }
            "--out" => o.out = Some(PathBuf::from(v)),
            _ => {
                return Err(Error::invalid(format!(
                    "unknown option {flag} (see the file's head)"
                )))
            }
        }
    }
    if o.block.0 * o.block.1 > 1024 {
        return Err(Error::invalid(format!(
            "--block {}x{}: at most 1024 work-items in a work-group",
            o.block.0, o.block.1
        )));
    }
    if o.grid.0 > 65535 || o.grid.1 > 65535 {
        return Err(Error::invalid(format!(
            "--grid {}x{}: at most 65535 blocks along each dimension",
            o.grid.0, o.grid.1
        )));
    }
    Ok(o)
}

/// One block's record.
#[derive(Clone, Copy)]
struct Block {
    sm: u32,
    place: usize,
    start: u64,
    end: u64,
}

fn blocks(raw: &[u32]) -> Vec<Block> {
    raw.chunks_exact(WORDS)
        .map(|r| Block {
            sm: r[0],
            place: r[1] as usize,
            start: u64::from(r[2]) | (u64::from(r[3]) << 32),
            end: u64::from(r[4]) | (u64::from(r[5]) << 32),
        })
        .collect()
}

/// The most blocks one multiprocessor held at once, per multiprocessor.
fn residency(blocks: &[Block]) -> BTreeMap<u32, usize> {
    let mut events: BTreeMap<u32, Vec<(u64, i32)>> = BTreeMap::new();
    for b in blocks {
        let e = events.entry(b.sm).or_default();
        e.push((b.start, 1));
        e.push((b.end, -1));
    }
    events
        .into_iter()
        .map(|(sm, mut e)| {
            // Ends before starts at the same instant: a block that ends frees its place.
            e.sort();
            let (mut now, mut most) = (0i32, 0i32);
            for (_, d) in e {
                now += d;
                most = most.max(now);
            }
            (sm, most as usize)
        })
        .collect()
}

/// Counts of each value, "4 blocks: 132 SMs" style.
fn histogram(values: impl Iterator<Item = usize>) -> String {
    let mut h: BTreeMap<usize, usize> = BTreeMap::new();
    for v in values {
        *h.entry(v).or_default() += 1;
    }
    h.iter()
        .map(|(v, n)| format!("{v} on {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the records say, as text.
fn summary(blocks: &[Block], spin_ns: u32) -> String {
    let mut s = String::new();
    let res = residency(blocks);
    let _ = writeln!(
        s,
        "    multiprocessors used: {}; blocks held at once (most per SM): {}",
        res.len(),
        histogram(res.values().copied())
    );
    let mut by_start: Vec<&Block> = blocks.iter().collect();
    by_start.sort_by_key(|b| (b.start, b.place));
    let t0 = by_start.first().map_or(0, |b| b.start);
    // The first wave: blocks that started before any block could have ended.
    let wave: Vec<&Block> = by_start
        .iter()
        .copied()
        .filter(|b| b.start < t0 + u64::from(spin_ns) / 2)
        .collect();
    let max_place = wave.iter().map(|b| b.place).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "    first wave: {} blocks started within {} us of the first; grid places 0..{} ({})",
        wave.len(),
        spin_ns / 2000,
        max_place,
        if max_place + 1 == wave.len() {
            "in grid order"
        } else {
            "not the first places of the grid"
        }
    );
    let spread = wave.last().map_or(0, |b| b.start - t0);
    let _ = writeln!(
        s,
        "    first wave started over {:.1} us",
        spread as f64 / 1e3
    );
    // Start order against grid order: how many later places started earlier.
    let ranks: Vec<usize> = by_start.iter().map(|b| b.place).collect();
    let descents = ranks.windows(2).filter(|w| w[1] < w[0]).count();
    let _ = writeln!(
        s,
        "    start order: {descents} of {} consecutive starts go back in the grid",
        ranks.len().saturating_sub(1)
    );
    let mut by_place: Vec<&Block> = blocks.iter().collect();
    by_place.sort_by_key(|b| b.place);
    let first: Vec<String> = by_place.iter().take(24).map(|b| b.sm.to_string()).collect();
    let _ = writeln!(s, "    SM of grid places 0..23: {}", first.join(" "));
    let same_sm = by_place.windows(2).filter(|w| w[0].sm == w[1].sm).count();
    let same_tpc = by_place
        .windows(2)
        .filter(|w| w[0].sm / 2 == w[1].sm / 2)
        .count();
    let _ = writeln!(
        s,
        "    neighbours in the grid (place p, p+1): same SM {same_sm}, same SM pair (TPC) {same_tpc} of {}",
        by_place.len().saturating_sub(1)
    );
    let span = by_start.iter().map(|b| b.end).max().unwrap_or(t0) - t0;
    let _ = writeln!(s, "    whole grid: {:.1} us", span as f64 / 1e3);
    s
}

fn run(o: &Options) -> Result<()> {
    let backends = open_spec(&o.device, &o.toolchains)?;
    let n = o.grid.0 * o.grid.1;
    let geometry = Geometry::d2(
        (o.grid.0 * o.block.0, o.grid.1 * o.block.1),
        (o.block.0, o.block.1),
    );
    if let Some(dir) = &o.out {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    for mut be in backends {
        let info = be.info().clone();
        if !info.is_nvidia() {
            println!("{}: not applicable (the probe reads %smid and %globaltimer through inline PTX: NVIDIA GPUs only)", info.label());
            continue;
        }
        let source = match info.toolchain.language() {
            Language::CudaCpp => CUDA_PROBE,
            Language::OpenClC => OPENCL_PROBE,
        };
        let rec = be.alloc(Elem::U32, n * WORDS)?;
        for &bytes in &o.shared {
            let words = (bytes / 4).max(1);
            let opts = CompileOptions::new().define("SHARED_WORDS", words);
            let (program, report) = be.compile("probe", source, &opts)?;
            let k = report.kernel("probe");
            println!(
                "{} ({}), grid {}x{} of {}x{}, {} B local memory declared ({} B by the build report, {} registers), {} us per block:",
                info.label(),
                report.compiler.as_deref().unwrap_or("?"),
                o.grid.0,
                o.grid.1,
                o.block.0,
                o.block.1,
                words * 4,
                k.and_then(|k| k.shared_bytes).map_or("?".into(), |b| b.to_string()),
                k.and_then(|k| k.registers).map_or("?".into(), |r| r.to_string()),
                o.spin_ns / 1000
            );
            let args = [Arg::U32(o.spin_ns), Arg::Buf(rec)];
            // The first launch warms the module; the second is the one read.
            be.launch(&program, "probe", &geometry, &args)?;
            be.fill(&rec, 0.0)?;
            let ns = be.launch(&program, "probe", &geometry, &args)?;
            let mut raw = vec![0u32; n * WORDS];
            be.download(&rec, HostDataMut::U32(&mut raw))?;
            be.release_program(program);
            let b = blocks(&raw);
            if let Some(bad) = b
                .iter()
                .enumerate()
                .find(|(i, b)| b.place != *i || b.sm == u32::MAX)
            {
                return Err(Error::invalid(format!(
                    "{}: block record {} is wrong (place {}, SM {}): the probe did not run as written",
                    info.label(),
                    bad.0,
                    bad.1.place,
                    bad.1.sm
                )));
            }
            println!("    launch: {:.1} us (device events)", ns as f64 / 1e3);
            print!("{}", summary(&b, o.spin_ns));
            if let Some(dir) = &o.out {
                let file = dir.join(format!(
                    "probe-{}-{}B.csv",
                    info.toolchain.as_str(),
                    words * 4
                ));
                let mut csv = String::from("place,sm,start_ns,end_ns\n");
                for x in &b {
                    let _ = writeln!(csv, "{},{},{},{}", x.place, x.sm, x.start, x.end);
                }
                std::fs::write(&file, csv).map_err(|e| Error::io(&file, e))?;
            }
        }
        be.free(rec);
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dispatch_probe: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&o) {
        eprintln!("dispatch_probe: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(sm: u32, place: usize, start: u64, end: u64) -> Block {
        Block {
            sm,
            place,
            start,
            end,
        }
    }

    #[test]
    fn residency_counts_overlaps_per_multiprocessor() {
        let r = residency(&[
            b(0, 0, 0, 10),
            b(0, 1, 5, 15),
            b(0, 2, 10, 20), // starts as block 0 ends: two at once, not three
            b(1, 3, 0, 10),
        ]);
        assert_eq!(r.get(&0), Some(&2));
        assert_eq!(r.get(&1), Some(&1));
    }

    #[test]
    fn options_refuse_bad_values() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(parse(&s(&["--grid", "64"])).is_err());
        assert!(parse(&s(&["--shared", "70000"])).is_err());
        assert!(parse(&s(&["--backends", "metal"])).is_err());
        assert!(parse(&s(&["--spin-us"])).is_err());
        assert!(parse(&s(&["--block", "64x32"])).is_err());
        assert!(parse(&s(&["--grid", "70000x1"])).is_err());
        let o = parse(&s(&["--grid", "8x4", "--shared", "0,1024"])).unwrap();
        assert_eq!((o.grid, o.shared), ((8, 4), vec![0, 1024]));
    }
}
