//! Criterion benches: the same GEMM kernels through each toolchain on one device.
//!
//! - One group per kernel (`gemm1` ... `gemm11`), the toolchains side by side as
//!   `<kernel>/<toolchain>/<size>`, timed by device events through the
//!   [`DeviceTime`] measurement, throughput 2*M*N*K so criterion prints GFLOP/s.
//! - `end_to_end_gemm11/<toolchain>/<size>`: upload A and B, run the kernel,
//!   download C, on the host's wall clock.
//! - `launch_overhead/<toolchain>`: an empty kernel, launch plus wait, wall clock.
//!
//! Every kernel is checked against the f64 reference (the driver's `prepare`)
//! before it is timed. Environment: GEMMLAB_BENCH_KERNELS, GEMMLAB_BENCH_SIZES,
//! GEMMLAB_BENCH_DEVICE, GEMMLAB_BENCH_BACKENDS (see benches/README-section.md).
//!
//! Unlike `gemmlab compare`, criterion measures one id after the other, so the
//! toolchains' repetitions are not interleaved.

mod device_time;
mod setup;

use std::cell::RefCell;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use gemmlab::gemm::driver::{prepare, KernelRunner, Prepared, Session};
use gemmlab::gemm::{check_against, round_up, Operands};
use gemmlab::kernel::builtin::{self as kernels, Hints};
use gemmlab::measure::Timed;
use gemmlab::{
    Arg, Backend, CompileOptions, Elem, Geometry, HostData, HostDataMut, Language, Toolchain,
};

use device_time::DeviceTime;
use setup::{fail, flops, note, size_label, Bench, Size};

/// The kernel of the end-to-end group: it reads B as it is (not transposed),
/// and the size is rounded up to a multiple of its tile, so the driver pads
/// nothing and the kernel runs straight on the uploaded A and B.
const END_TO_END_KERNEL: &str = "gemm11";

thread_local! {
    /// Opened on first use by whichever group runs first; dropped by `teardown`.
    static BENCH: RefCell<Option<Bench>> = const { RefCell::new(None) };
}

fn with_bench<R>(f: impl FnOnce(&mut Bench) -> R) -> R {
    BENCH.with(|cell| {
        let mut slot = cell.borrow_mut();
        f(slot.get_or_insert_with(Bench::from_env))
    })
}

fn on_gpu() -> bool {
    with_bench(|b| b.on_gpu)
}

/// Kernel groups: device time. On a GPU (4096^3 takes 3-30 ms on an H200) 50
/// samples over 15 s per id: about 20 s an id with preparation, 22 ids. On a
/// CPU device the minimum of 10 samples over 3 s (gemm1 at 512 takes 0.26 s
/// on two cores under PoCL).
fn device_config() -> Criterion<DeviceTime> {
    let c = Criterion::default().with_measurement(DeviceTime);
    if on_gpu() {
        c.sample_size(50)
            .warm_up_time(Duration::from_secs(3))
            .measurement_time(Duration::from_secs(15))
    } else {
        c.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .nresamples(20_000)
    }
}

/// Host-side groups: wall-clock time.
fn wall_config() -> Criterion<WallTime> {
    let c = Criterion::default();
    if on_gpu() {
        c.sample_size(30)
            .warm_up_time(Duration::from_secs(2))
            .measurement_time(Duration::from_secs(8))
    } else {
        c.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .nresamples(20_000)
    }
}

fn toolchain_of(session: &Session) -> Toolchain {
    session.backend.borrow().info().toolchain
}

/// Sums the device time of `iters` launches.
fn device_ns(runner: &mut dyn Timed, iters: u64, what: &str) -> u64 {
    let mut total = 0u64;
    for _ in 0..iters {
        match runner.run_once() {
            Ok(ns) => total = total.saturating_add(ns),
            Err(e) => fail(format!("{what}: launch failed while benchmarking: {e}")),
        }
    }
    total
}

/// One group per kernel, the toolchains side by side.
fn kernel_groups(c: &mut Criterion<DeviceTime>) {
    with_bench(|bench| {
        let kernels = bench.kernels.clone();
        let sizes = bench.sizes.clone();
        let tuned = bench.tuned.clone();
        for spec in kernels {
            let config = spec.defaults();
            let mut group = c.benchmark_group(spec.id);
            group.sampling_mode(SamplingMode::Flat);
            // Where the kernel cannot run at all (gemm8's OpenCL twin off NVIDIA): said once.
            let runs_on: Vec<bool> = bench
                .sessions
                .iter()
                .map(
                    |s| match spec.unavailable(s.backend.borrow().info(), &Hints::default()) {
                        Some(why) => {
                            note(format!("{}/{} skipped: {why}", spec.id, toolchain_of(s)));
                            false
                        }
                        None => true,
                    },
                )
                .collect();
            for &size in &sizes {
                group.throughput(Throughput::Elements(flops(size)));
                let (sessions, problem) = bench.sessions_and_problem(size);
                for (session, _) in sessions.iter_mut().zip(&runs_on).filter(|(_, &ok)| ok) {
                    let tc = toolchain_of(session);
                    // The published defaults, and the tuned configuration where the database has one.
                    let mut variants =
                        vec![(config.clone(), Hints::default(), tc.as_str().to_string())];
                    if let Some(b) = tuned.as_ref().and_then(|db| db.lookup(spec.id, tc, size)) {
                        variants.push((b.config.clone(), b.hints.clone(), format!("{tc}-tuned")));
                    }
                    for (config, hints, id) in variants {
                        let attempt = prepare(
                            session,
                            spec,
                            &config,
                            &hints,
                            &problem.ops,
                            &problem.reference,
                            false,
                        );
                        let Some(p) = attempt.prepared else {
                            note(format!(
                                "{}/{tc}/{} skipped: {}: {}",
                                spec.id,
                                size_label(size),
                                attempt.status.label(),
                                attempt.status.reason().unwrap_or("no reason given")
                            ));
                            continue;
                        };
                        let what = format!("{}/{id}/{}", spec.id, size_label(size));
                        let shared: &Session = session;
                        group.bench_with_input(
                            BenchmarkId::new(id.as_str(), size_label(size)),
                            &p,
                            |b, p| {
                                let mut runner = KernelRunner {
                                    session: shared,
                                    prepared: p,
                                };
                                b.iter_custom(|iters| device_ns(&mut runner, iters, &what))
                            },
                        );
                        p.release(shared);
                    }
                }
            }
            group.finish();
        }
    });
}

/// Upload A and B into the prepared kernel's operand buffers, launch, download C.
fn round_trip(
    session: &Session,
    p: &Prepared,
    ops: &Operands,
    c: &mut [f32],
) -> gemmlab::Result<()> {
    let mut be = session.backend.borrow_mut();
    be.upload(&p.a, HostData::F32(&ops.a))?;
    be.upload(&p.b, HostData::F32(&ops.b))?;
    let [m, n, k] = p.padded;
    be.launch(
        &p.program,
        p.entry,
        &p.geometry,
        &[
            Arg::I32(m as i32),
            Arg::I32(n as i32),
            Arg::I32(k as i32),
            Arg::Buf(p.a),
            Arg::Buf(p.b),
            Arg::Buf(p.c),
        ],
    )?;
    be.download(&p.c, HostDataMut::F32(c))
}

/// Upload + kernel + download per toolchain, on the wall clock. The device
/// buffers are reused between iterations (allocation is not timed).
fn end_to_end(c: &mut Criterion<WallTime>) {
    with_bench(|bench| {
        let spec = match kernels::find(END_TO_END_KERNEL) {
            Ok(s) => s,
            Err(e) => {
                note(format!("end-to-end group skipped: {e}"));
                return;
            }
        };
        if spec.operands.b_transposed {
            note(format!(
                "end-to-end group skipped: {} reads B transposed, which needs a device-side transpose",
                spec.id
            ));
            return;
        }
        let config = spec.defaults();
        let (tm, tn, tk) = spec.tile(&config);
        let mut group = c.benchmark_group(format!("end_to_end_{}", spec.id));
        group.sampling_mode(SamplingMode::Flat);
        let mut sizes: Vec<Size> = Vec::new();
        for &(m0, n0, k0) in &bench.sizes.clone() {
            let size = (round_up(m0, tm), round_up(n0, tn), round_up(k0, tk));
            if size != (m0, n0, k0) {
                note(format!(
                    "end_to_end: {} rounded up to {}, a multiple of {}'s {tm}x{tn}x{tk} tile, so nothing is padded",
                    size_label((m0, n0, k0)),
                    size_label(size),
                    spec.id
                ));
            }
            if sizes.contains(&size) {
                continue;
            }
            sizes.push(size);
            let (m, n, _) = size;
            let (sessions, problem) = bench.sessions_and_problem(size);
            for session in sessions.iter_mut() {
                let tc = toolchain_of(session);
                let what = format!("end_to_end_{}/{tc}/{}", spec.id, size_label(size));
                let attempt = prepare(
                    session,
                    spec,
                    &config,
                    &Hints::default(),
                    &problem.ops,
                    &problem.reference,
                    false,
                );
                let Some(p) = attempt.prepared else {
                    note(format!(
                        "{what} skipped: {}: {}",
                        attempt.status.label(),
                        attempt.status.reason().unwrap_or("no reason given")
                    ));
                    continue;
                };
                let shared: &Session = session;
                if p.padded != [size.0, size.1, size.2] {
                    note(format!(
                        "{what} skipped: the driver padded the operands to {:?}",
                        p.padded
                    ));
                    p.release(shared);
                    continue;
                }
                // One checked round trip (C poisoned first) before timing.
                let mut host_c = vec![0.0f32; m * n];
                let poisoned = shared.backend.borrow_mut().fill(&p.c, f64::NAN);
                let checked =
                    poisoned.and_then(|()| round_trip(shared, &p, &problem.ops, &mut host_c));
                let report = checked.map(|()| check_against(m, &host_c, &problem.reference));
                match report {
                    Ok(r) if r.passed => {}
                    Ok(r) => {
                        note(format!("{what} skipped: wrong result: {}", r.summary()));
                        p.release(shared);
                        continue;
                    }
                    Err(e) => {
                        note(format!("{what} skipped: {e}"));
                        p.release(shared);
                        continue;
                    }
                }
                group.bench_with_input(
                    BenchmarkId::new(tc.as_str(), size_label(size)),
                    &p,
                    |b, p| {
                        b.iter(|| {
                            if let Err(e) = round_trip(shared, p, &problem.ops, &mut host_c) {
                                fail(format!("{what}: {e}"));
                            }
                        })
                    },
                );
                p.release(shared);
            }
        }
        group.finish();
    });
}

const EMPTY_OPENCL: &str = "__kernel void empty(__global float* x) { }\n";
const EMPTY_CUDA: &str = "extern \"C\" __global__ void empty(float* x) { }\n";

/// An empty kernel on one work-item: launch plus wait, per toolchain.
fn launch_overhead(c: &mut Criterion<WallTime>) {
    with_bench(|bench| {
        let mut group = c.benchmark_group("launch_overhead");
        for session in &bench.sessions {
            let mut be = session.backend.borrow_mut();
            let tc = be.info().toolchain;
            let source = match tc.language() {
                Language::OpenClC => EMPTY_OPENCL,
                Language::CudaCpp => EMPTY_CUDA,
            };
            let program = match be.compile("empty kernel", source, &CompileOptions::new()) {
                Ok((p, _)) => p,
                Err(e) => {
                    note(format!("launch_overhead/{tc} skipped: {e}"));
                    continue;
                }
            };
            let x = match be.alloc(Elem::F32, 1) {
                Ok(x) => x,
                Err(e) => {
                    note(format!("launch_overhead/{tc} skipped: {e}"));
                    be.release_program(program);
                    continue;
                }
            };
            let geometry = Geometry::d2((1, 1), (1, 1));
            let args = [Arg::Buf(x)];
            match be.launch(&program, "empty", &geometry, &args) {
                Ok(_) => {
                    group.bench_function(tc.as_str(), |b| {
                        b.iter(|| {
                            if let Err(e) = be.launch(&program, "empty", &geometry, &args) {
                                fail(format!("launch_overhead/{tc}: {e}"));
                            }
                        })
                    });
                }
                Err(e) => note(format!("launch_overhead/{tc} skipped: {e}")),
            }
            be.free(x);
            be.release_program(program);
        }
        group.finish();
    });
}

/// Releases the devices before criterion's summary (and before exit, where
/// thread-local destructors of the main thread may not run).
fn teardown() {
    BENCH.with(|cell| {
        if let Some(mut bench) = cell.borrow_mut().take() {
            for s in &mut bench.sessions {
                s.unload();
            }
        }
    });
}

criterion_group! {
    name = device_benches;
    config = device_config();
    targets = kernel_groups
}

criterion_group! {
    name = host_benches;
    config = wall_config();
    targets = end_to_end, launch_overhead
}

criterion_main!(device_benches, host_benches, teardown);
