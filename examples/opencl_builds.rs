//! How fast an OpenCL platform builds a kernel, and what slows it: issue 26 asks
//! why a tuner's OpenCL configuration costs half a second when its kernel takes
//! a few milliseconds. This builds one kernel (at its defaults, each build made
//! distinct by a define so no cache answers it) in every combination of:
//!   - build threads: 1, 4 and 16 at once (does the compiler build in parallel?);
//!   - `-cl-nv-verbose` on and off (does asking for ptxas's report cost?);
//!   - the device idle or busy with a measuring thread's kind of work (launch,
//!     wait, repeat) on another queue of the same context (do builds and that
//!     thread stall each other?).
//!
//! It prints builds per second, the mean build time, and for the busy runs how
//! much longer the measuring thread's launch-and-wait took than with no builds.
//! Then the same builds from 1, 2, 4 and 8 processes at once (each its own
//! context, one thread each): is the serialization per process or system-wide?
//! Last, what a pool of build processes leaves to the measuring process: another
//! process builds from source and hands over the binaries (PTX on NVIDIA); this
//! one builds each binary for its own context, as `gemmlab tune` does with
//! `--build-processes` (and says whether that build's log still has ptxas's lines).
//!
//! usage: cargo run --release --example opencl_builds -- [DEVICE_SUBSTRING] [KERNEL] [BUILDS]
//! (defaults: the first GPU whose name or vendor has "NVIDIA", xgemm, 32)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;

use gemmlab::kernel::builtin::Hints;
use gemmlab::Toolchain;

const SPIN: &str = "__kernel void spin(__global float* x, int n) {
    float a = x[get_global_id(0)];
    for (int i = 0; i < n; ++i) a = a * 1.0000001f + 0.5f;
    x[get_global_id(0)] = a;
}";

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Loading the platforms rewrites OCL_ICD_FILENAMES in this process (seen with PoCL and
    // NVIDIA both listed: PoCL's alone), so child processes get the value it had at start.
    let icd = std::env::var_os("OCL_ICD_FILENAMES");
    let child = |cmd: &mut std::process::Command| {
        if let Some(v) = &icd {
            cmd.env("OCL_ICD_FILENAMES", v);
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = args.first().map_or("NVIDIA", String::as_str).to_string();
    let kernel_id = args.get(1).map_or("xgemm", String::as_str);
    let builds: usize = args.get(2).map_or(Ok(32), |s| s.parse())?;
    let device = find_device(&want)?;
    let spec = gemmlab::kernel::builtin::select(Some(kernel_id))?
        .into_iter()
        .next()
        .ok_or("no such kernel")?;
    let source = spec.source(Toolchain::OpenCl);
    let options = spec.compile_options(&spec.defaults(), &Hints::default(), Toolchain::OpenCl);
    let mut base: Vec<String> = options
        .defines
        .iter()
        .map(|(k, v)| format!("-D{k}={v}"))
        .collect();
    base.push("-DGEMMLAB_NVIDIA_PTX=1".into());
    if let Ok(n) = std::env::var("GEMMLAB_BUILDS_CHILD") {
        // One of the processes of the last table: build serially, print the seconds.
        let context = Context::from_device(&device)?;
        let mut flags = base.clone();
        if device.vendor()?.contains("NVIDIA") {
            flags.push("-cl-nv-verbose".into());
        }
        let dump = std::env::var_os("GEMMLAB_BUILDS_DUMP").map(std::path::PathBuf::from);
        let t = Instant::now();
        for i in 0..builds {
            let opts = format!("{} -DGEMMLAB_BUILD_NONCE={n}{i}", flags.join(" "));
            let mut p = Program::create_from_source(&context, &source)?;
            p.build(&[device.id()], &opts)?;
            if let Some(dir) = &dump {
                let binary = p.get_binaries()?.into_iter().next().unwrap_or_default();
                std::fs::write(dir.join(format!("{i}.bin")), binary)?;
                std::fs::write(dir.join(format!("{i}.flags")), &opts)?;
            }
        }
        println!("{}", t.elapsed().as_secs_f64());
        return Ok(());
    }
    println!(
        "device: {} ({}), driver {}",
        device.name()?,
        device.vendor()?,
        device.driver_version()?
    );
    let context = Arc::new(Context::from_device(&device)?);
    let nonce = AtomicUsize::new(0);
    println!("kernel {kernel_id} at its defaults, {builds} builds per row\n");
    println!(
        "{:>7} {:>8} {:>6} {:>9} {:>13} {:>24}",
        "threads", "verbose", "device", "builds/s", "mean build", "launch+wait (idle->busy)"
    );
    let idle_launch = measuring_thread(&context, &device, None)?;
    for busy in [false, true] {
        for verbose in [true, false] {
            for threads in [1usize, 4, 16] {
                let mut flags = base.clone();
                if verbose {
                    flags.push("-cl-nv-verbose".into());
                }
                let stop = Arc::new(AtomicBool::new(false));
                let spinner = busy.then(|| {
                    let (ctx, dev, stop) = (Arc::clone(&context), device, Arc::clone(&stop));
                    std::thread::spawn(move || measuring_thread(&ctx, &dev, Some(&stop)))
                });
                let started = Instant::now();
                let next = AtomicUsize::new(0);
                let failed = std::sync::Mutex::new(None::<String>);
                let total_ms = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..threads)
                        .map(|_| {
                            s.spawn(|| {
                                let mut ms = 0.0;
                                while next.fetch_add(1, Ordering::Relaxed) < builds {
                                    let n = nonce.fetch_add(1, Ordering::Relaxed);
                                    let opts =
                                        format!("{} -DGEMMLAB_BUILD_NONCE={n}", flags.join(" "));
                                    let t = Instant::now();
                                    let mut p = Program::create_from_source(&context, &source)
                                        .expect("clCreateProgramWithSource");
                                    if let Err(e) = p.build(&[device.id()], &opts) {
                                        if let Ok(mut f) = failed.lock() {
                                            *f = Some(e.to_string());
                                        }
                                    }
                                    ms += t.elapsed().as_secs_f64() * 1e3;
                                }
                                ms
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or(0.0))
                        .sum::<f64>()
                });
                let wall = started.elapsed().as_secs_f64();
                stop.store(true, Ordering::Relaxed);
                let launch = match spinner {
                    Some(h) => {
                        let busy_ms = h.join().map_err(|_| "measuring thread panicked")??;
                        format!("{idle_launch:.2} -> {busy_ms:.2} ms")
                    }
                    None => "-".into(),
                };
                if let Some(e) = failed.lock().ok().and_then(|f| f.clone()) {
                    println!(
                        "{threads:>7} {:>8} {:>6}  builds failed ({e}): not a rate",
                        if verbose { "on" } else { "off" },
                        if busy { "busy" } else { "idle" },
                    );
                    continue;
                }
                println!(
                    "{threads:>7} {:>8} {:>6} {:>9.2} {:>10.0} ms {launch:>24}",
                    if verbose { "on" } else { "off" },
                    if busy { "busy" } else { "idle" },
                    builds as f64 / wall,
                    total_ms / builds as f64,
                );
            }
        }
    }
    println!(
        "\n{:>9} {:>9} {:>13}",
        "processes", "builds/s", "mean build"
    );
    let me = std::env::current_exe()?;
    for procs in [1usize, 2, 4, 8] {
        let started = Instant::now();
        let children: Vec<_> = (0..procs)
            .map(|p| {
                let mut cmd = std::process::Command::new(&me);
                child(&mut cmd);
                cmd.args(&args)
                    .env("GEMMLAB_BUILDS_CHILD", format!("9{procs}{p}"))
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.and_then(|c| c.wait_with_output()))
            .collect();
        let wall = started.elapsed().as_secs_f64();
        let mut secs = Vec::new();
        for o in outputs {
            let o = o?;
            let text = String::from_utf8_lossy(&o.stdout);
            match text.trim().parse::<f64>() {
                Ok(v) if o.status.success() => secs.push(v),
                _ => {
                    return Err(format!(
                        "a build process failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    )
                    .into())
                }
            }
        }
        let total = (procs * builds) as f64;
        println!(
            "{procs:>9} {:>9.2} {:>10.0} ms",
            total / wall,
            secs.iter().sum::<f64>() / total * 1e3
        );
    }
    let mut cmd = std::process::Command::new(&me);
    child(&mut cmd);
    rebuild_from_binaries(cmd, &args, &context, &device, builds)
}

/// One process builds from source and writes the binaries; this one builds each.
fn rebuild_from_binaries(
    mut cmd: std::process::Command,
    args: &[String],
    context: &Context,
    device: &Device,
    builds: usize,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dir = std::env::temp_dir().join(format!("gemmlab-builds-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let o = cmd
        .args(args)
        .env("GEMMLAB_BUILDS_CHILD", "77")
        .env("GEMMLAB_BUILDS_DUMP", &dir)
        .output()?;
    let source_s: f64 = String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .map_err(|_| {
            format!(
                "the building process failed: {}",
                String::from_utf8_lossy(&o.stderr)
            )
        })?;
    let (mut total, mut with_ptxas) = (0.0, 0);
    for i in 0..builds {
        let binary = std::fs::read(dir.join(format!("{i}.bin")))?;
        let flags = std::fs::read_to_string(dir.join(format!("{i}.flags")))?;
        let t = Instant::now();
        // SAFETY: the device belongs to the context.
        let mut p = unsafe { Program::create_from_binary(context, &[device.id()], &[&binary])? };
        p.build(&[device.id()], &flags)?;
        total += t.elapsed().as_secs_f64();
        let log = p.get_build_log(device.id()).unwrap_or_default();
        if log.contains("registers") {
            with_ptxas += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "\nfrom source in another process: {:.0} ms per build; its binary built here: {:.1} ms per build ({with_ptxas} of {builds} logs with ptxas's register lines)",
        source_s / builds as f64 * 1e3,
        total / builds as f64 * 1e3
    );
    Ok(())
}

/// What a tuner's device thread does, on its own queue: launch a kernel of about
/// a millisecond and wait for it, over and over. Returns the mean wall time of a
/// launch-and-wait, over a fixed count when `stop` is absent, else until it is set.
fn measuring_thread(
    context: &Context,
    device: &Device,
    stop: Option<&AtomicBool>,
) -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
    let map = |e: opencl3::error_codes::ClError| -> Box<dyn std::error::Error + Send + Sync> {
        e.to_string().into()
    };
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(context, CL_QUEUE_PROFILING_ENABLE).map_err(map)?;
    let mut program = Program::create_from_source(context, SPIN).map_err(map)?;
    program.build(&[device.id()], "").map_err(map)?;
    let kernel = Kernel::create(&program, "spin").map_err(map)?;
    let len = 1 << 16;
    // SAFETY: no host pointer; the buffer lives as long as the loop.
    let buf = unsafe {
        Buffer::<f32>::create(context, CL_MEM_READ_WRITE, len, std::ptr::null_mut()).map_err(map)?
    };
    let launch = |iters: i32| -> Result<Duration, Box<dyn std::error::Error + Send + Sync>> {
        let t = Instant::now();
        // SAFETY: the kernel's two arguments are a buffer of len floats and an int.
        let event = unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&buf)
                .set_arg(&iters)
                .set_global_work_size(len)
                .enqueue_nd_range(&queue)
                .map_err(map)?
        };
        event.wait().map_err(map)?;
        Ok(t.elapsed())
    };
    // About a millisecond a launch, like a tuned kernel at 2048-4096.
    launch(100)?;
    let probe = launch(100)?.as_secs_f64().max(1e-6);
    let iters = ((100.0 * 1e-3 / probe) as i32).clamp(100, 1 << 24);
    let (mut total, mut n) = (Duration::ZERO, 0u32);
    loop {
        total += launch(iters)?;
        n += 1;
        match stop {
            Some(s) if s.load(Ordering::Relaxed) => break,
            None if n >= 200 => break,
            _ => {}
        }
    }
    Ok(total.as_secs_f64() * 1e3 / f64::from(n.max(1)))
}

fn find_device(want: &str) -> Result<Device, Box<dyn std::error::Error + Send + Sync>> {
    let want = want.to_lowercase();
    for p in get_platforms()? {
        for id in p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
            let d = Device::new(id);
            let label = format!("{} {}", d.name()?, d.vendor()?).to_lowercase();
            if label.contains(&want) {
                return Ok(d);
            }
        }
    }
    Err(format!("no OpenCL device whose name or vendor contains '{want}'").into())
}
