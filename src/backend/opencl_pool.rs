//! OpenCL builds in helper processes.
//!
//! NVIDIA's OpenCL builds one program at a time per process, while separate
//! processes build in parallel (measured on the H200: one process 7.7-12 builds/s
//! from any number of threads, eight processes about 60/s together;
//! results/h200/tune/anchors). So the tuner can hand builds to a pool of
//! `gemmlab build-worker` processes. A worker builds the source on its own context
//! and sends back the program binary (PTX on NVIDIA) and its build report; the
//! measuring process builds that binary for its own context with the same flags
//! when it loads it. On NVIDIA that is PTX to SASS again unless the driver's
//! compute cache answers it with what the build process assembled: measured on
//! the H200 (xgemm, 4096), the load took 244 ms a configuration with the cache
//! disabled and 0.7 ms with it (results/h200/tune/anchors). Registers and spills
//! come from the measuring process's build log where it has them, else from the
//! build process's. The load runs on the measuring thread, not on the compile
//! threads: builds hold a per-process driver lock, and eight threads building
//! binaries stalled the measuring thread's own calls (setup and poisoning went
//! from under 1 ms to 30-40 ms a configuration).
//!
//! Protocol, on the worker's stdin and stdout: a request is one JSON line; the
//! reply is one JSON line followed by `binary_len` raw bytes. The worker says it
//! is ready with one line first, and exits at the end of its input, which is
//! also how it ends when the process it builds for dies. (Not by
//! `PR_SET_PDEATHSIG`: that fires when the spawning *thread* ends, and workers
//! are started by compile threads.)

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};

use serde::{Deserialize, Serialize};

use super::opencl::{BuiltProgram, OpenClBackend, OpenClCompiler};
use super::{Artefact, Backend, BuildReport, CompileOptions, Compiler, Image, Toolchain};
use crate::error::{Error, Result};

/// The hidden `gemmlab` subcommand a worker runs.
pub const WORKER_COMMAND: &str = "build-worker";

#[derive(Serialize, Deserialize)]
struct Request {
    what: String,
    source: String,
    options: CompileOptions,
}

#[derive(Serialize, Deserialize, Default)]
struct Reply {
    /// The worker's build report (its registers are replaced by the parent's build).
    report: Option<BuildReport>,
    /// A compiler error's log: the source does not build.
    compile_log: Option<String>,
    /// Anything else that went wrong in the worker.
    error: Option<String>,
    binary_len: usize,
}

#[derive(Serialize, Deserialize)]
struct Ready {
    device: String,
}

fn io(what: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(format!("build process: {what}: {e}"))
}

/// Runs a worker on the OpenCL device `id` ("opencl:P:D"), serving builds from
/// stdin until it closes. What `gemmlab build-worker` runs.
pub fn serve(id: &str) -> Result<()> {
    // A build process yields to the measuring process, as build threads do.
    crate::util::sched::lower_this_thread();
    let backend = OpenClBackend::open(id)?;
    let compiler = backend.opencl_compiler();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let ready = Ready {
        device: backend.info().name.clone(),
    };
    write_line(&mut out, &ready)?;
    out.flush().map_err(|e| io("write", e))?;
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| io("read", e))?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = serde_json::from_str(&line).map_err(|e| io("request", e))?;
        let (reply, binary) =
            match compiler.compile_binary(&request.what, &request.source, &request.options) {
                Ok((report, binary)) => (
                    Reply {
                        report: Some(report),
                        binary_len: binary.len(),
                        ..Reply::default()
                    },
                    binary,
                ),
                Err(Error::Compile { log, .. }) => (
                    Reply {
                        compile_log: Some(log),
                        ..Reply::default()
                    },
                    Vec::new(),
                ),
                Err(e) => (
                    Reply {
                        error: Some(e.to_string()),
                        ..Reply::default()
                    },
                    Vec::new(),
                ),
            };
        let sent = write_line(&mut out, &reply)
            .and_then(|_| out.write_all(&binary).map_err(|e| io("write", e)))
            .and_then(|_| out.flush().map_err(|e| io("write", e)));
        if sent.is_err() {
            // The process it built for is gone: nothing to report to.
            return Ok(());
        }
    }
    Ok(())
}

fn write_line<T: Serialize>(out: &mut impl Write, value: &T) -> Result<()> {
    let mut text = serde_json::to_string(value).map_err(|e| io("encode", e))?;
    text.push('\n');
    out.write_all(text.as_bytes()).map_err(|e| io("write", e))
}

fn read_line<T: for<'de> Deserialize<'de>>(input: &mut impl BufRead, what: &str) -> Result<T> {
    let mut line = String::new();
    let n = input.read_line(&mut line).map_err(|e| io("read", e))?;
    if n == 0 {
        return Err(io(what, "the process ended"));
    }
    serde_json::from_str(&line).map_err(|e| io(what, e))
}

/// One worker process.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(exe: &Path, device: &str) -> Result<Worker> {
        let mut cmd = Command::new(exe);
        super::opencl::restore_env(&mut cmd);
        let mut child = cmd
            .args([WORKER_COMMAND, "--device", device])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io(&format!("starting {}", exe.display()), e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io("starting", "no pipes"));
        };
        let mut w = Worker {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
        };
        let _: Ready = read_line(
            &mut w.stdout,
            &format!("starting {} on {device}", exe.display()),
        )?;
        Ok(w)
    }

    fn build(&mut self, request: &Request) -> Result<(Reply, Vec<u8>)> {
        let stdin = self.stdin.as_mut().ok_or_else(|| io("write", "closed"))?;
        write_line(stdin, request)?;
        stdin.flush().map_err(|e| io("write", e))?;
        let reply: Reply = read_line(&mut self.stdout, "reply")?;
        let mut binary = vec![0u8; reply.binary_len];
        self.stdout
            .read_exact(&mut binary)
            .map_err(|e| io("read", e))?;
        Ok((reply, binary))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing its input ends a worker; one stuck in a build is killed.
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// At most `size` workers, started when first needed, each serving one build at a time.
struct Pool {
    exe: PathBuf,
    device: String,
    size: usize,
    idle: Mutex<(Vec<Worker>, usize)>,
    freed: Condvar,
}

impl Pool {
    fn take(&self) -> Result<Worker> {
        let mut guard = self.idle.lock().map_err(|_| io("pool", "poisoned"))?;
        loop {
            if let Some(w) = guard.0.pop() {
                return Ok(w);
            }
            if guard.1 < self.size {
                guard.1 += 1;
                drop(guard);
                let started = Worker::spawn(&self.exe, &self.device);
                if started.is_err() {
                    self.forget();
                }
                return started;
            }
            guard = self.freed.wait(guard).map_err(|_| io("pool", "poisoned"))?;
        }
    }

    fn give(&self, w: Worker) {
        if let Ok(mut guard) = self.idle.lock() {
            guard.0.push(w);
        }
        self.freed.notify_one();
    }

    /// A worker that failed is dropped (killed); another may start in its place.
    fn forget(&self) {
        if let Ok(mut guard) = self.idle.lock() {
            guard.1 = guard.1.saturating_sub(1);
        }
        self.freed.notify_one();
    }
}

/// The OpenCL compiler with its builds done by a pool of worker processes.
pub struct PooledCompiler {
    inner: OpenClCompiler,
    pool: Pool,
}

impl PooledCompiler {
    /// Starts one worker now, so a pool that cannot work says so before a search.
    pub(crate) fn start(inner: OpenClCompiler, size: usize, exe: &Path) -> Result<PooledCompiler> {
        let pool = Pool {
            exe: exe.to_path_buf(),
            device: inner.device_id().to_string(),
            size: size.max(1),
            idle: Mutex::new((Vec::new(), 0)),
            freed: Condvar::new(),
        };
        let first = pool.take()?;
        pool.give(first);
        Ok(PooledCompiler { inner, pool })
    }

    pub fn processes(&self) -> usize {
        self.pool.size
    }
}

impl Compiler for PooledCompiler {
    fn toolchain(&self) -> Toolchain {
        Toolchain::OpenCl
    }

    fn target(&self) -> &str {
        self.inner.target()
    }

    fn parallel_builds(&self) -> bool {
        true
    }

    fn compile(&self, what: &str, source: &str, options: &CompileOptions) -> Result<Artefact> {
        // Refused here, as the in-process compiler refuses it, not as a worker's error.
        self.inner.check_arch_specific(what, options)?;
        let request = Request {
            what: what.to_string(),
            source: source.to_string(),
            options: options.clone(),
        };
        let mut worker = self.pool.take()?;
        let (reply, binary) = match worker.build(&request) {
            Ok(r) => {
                self.pool.give(worker);
                r
            }
            Err(e) => {
                // A worker that died mid-build (its compiler crashed) is this build's error.
                let status = worker.child.try_wait().ok().flatten();
                drop(worker);
                self.pool.forget();
                return Err(Error::Compile {
                    toolchain: "OpenCL (build process)".into(),
                    what: what.to_string(),
                    log: match status {
                        Some(s) => format!("the build process ended ({s}) during the build: {e}"),
                        None => e.to_string(),
                    },
                });
            }
        };
        if let Some(log) = reply.compile_log {
            return Err(self.inner.compile_error(what, log, options));
        }
        if let Some(e) = reply.error {
            return Err(io("build", e));
        }
        let report = reply
            .report
            .ok_or_else(|| io("reply", "neither a report nor an error"))?;
        Ok(Artefact {
            report,
            image: Image::OpenCl(BuiltProgram::Binary(binary)),
        })
    }
}

/// Builds `source` in `n` worker processes where that is what this compiler
/// needs (`forced`: wherever it can), else `None`.
pub(crate) fn pooled(
    inner: &OpenClCompiler,
    n: usize,
    exe: &Path,
    forced: bool,
) -> Result<Option<Arc<dyn Compiler>>> {
    if n == 0 || !(forced || inner.builds_pay_in_processes()) {
        return Ok(None);
    }
    let c = PooledCompiler::start(inner.clone(), n, exe)?;
    Ok(Some(Arc::new(c)))
}
