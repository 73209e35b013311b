//! `gemmlab gemm`: the complete GEMM routine on one BLAS call per size, the
//! way a library user calls it (the kernel chosen by the crossover, pre- and
//! post-processing included), checked against the f64 reference and timed
//! next to the vendor BLAS with the same arguments.

use std::path::PathBuf;

use clap::Args;

use gemmlab::bests::Database;
use gemmlab::gemm::check::check_widened;
use gemmlab::gemm::driver::{read_c, vendor_call, Session};
use gemmlab::gemm::problem::Matrix;
use gemmlab::gemm::{parse_size, Operands, Reference};
use gemmlab::measure::Stats;
use gemmlab::routine::{upload_operand, Gemm};
use gemmlab::{Backend, Error, Result};

use super::compare::{seed_or_random, DeviceArgs, ProblemArgs};

#[derive(Args, Debug)]
pub struct GemmArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Sizes: N or MxNxK (0 allowed, as in BLAS), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub sizes: Vec<String>,
    /// Timed calls per size (after a checked call and a warm-up call).
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Use the kernels' published defaults instead of the tuned database.
    #[arg(long)]
    pub published: bool,
    /// Force one kernel: direct or indirect (default: by the measured crossover).
    #[arg(long, value_parser = ["direct", "indirect"])]
    pub path: Option<String>,
    /// The database of bests (tuned configurations and crossover).
    #[arg(long, default_value = gemmlab::bests::DEFAULT_DIR)]
    pub db: PathBuf,
}

/// "N", "MxNxK", with zeros allowed (a BLAS call may be empty).
fn parse_dims(s: &str) -> Result<(usize, usize, usize)> {
    let bad = || Error::invalid(format!("size '{s}': expected N or MxNxK"));
    let v: Vec<usize> = s
        .trim()
        .split(['x', 'X'])
        .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    match v[..] {
        [0] => Ok((0, 0, 0)),
        [m, n, k] if m == 0 || n == 0 || k == 0 => Ok((m, n, k)),
        [_] | [_, _, _] => parse_size(s),
        _ => Err(bad()),
    }
}

pub fn run(args: GemmArgs) -> Result<()> {
    let sizes: Vec<(usize, usize, usize)> = args
        .sizes
        .iter()
        .map(|s| parse_dims(s))
        .collect::<Result<_>>()?;
    let template = args.problem.template_for(&sizes)?;
    let mut sessions = args.device.sessions()?;
    let seed = seed_or_random(args.seed);
    println!("seed {seed}");
    for session in &mut sessions {
        let info = session.backend.borrow().info().clone();
        let mut gemm = if args.published {
            Gemm::published()?
        } else {
            Gemm::tuned(&Database::load(&args.db, &info.name)?, info.toolchain)?
        };
        gemm.force = match args.path.as_deref() {
            Some("direct") => Some(gemmlab::routine::Path::Direct),
            Some("indirect") => Some(gemmlab::routine::Path::Indirect),
            _ => None,
        };
        let source = gemm
            .tuning(template.precision)
            .map(|t| t.source.clone())
            .unwrap_or_default();
        println!("{} via {} ({source})", info.name, info.toolchain);
        for &(m, n, k) in &sizes {
            let p = template.at(m, n, k)?;
            let ops = Operands::for_problem(p, seed);
            let reference = Reference::cpu(&ops);
            let line = one(session, &mut gemm, &ops, &reference, args.reps)?;
            println!("  {}: {line}", p.describe());
        }
        gemm.release(session);
    }
    Ok(())
}

/// Checks, then times the routine and (where there is one) the vendor BLAS.
fn one(
    session: &mut Session,
    gemm: &mut Gemm,
    ops: &Operands,
    reference: &Reference,
    reps: usize,
) -> Result<String> {
    let p = ops.problem;
    let a = upload_operand(session, ops, Matrix::A, f32::NAN)?;
    let b = upload_operand(session, ops, Matrix::B, f32::NAN)?;
    let c = upload_operand(session, ops, Matrix::C, gemmlab::gemm::data::C_GAP)?;
    let result = (|| -> Result<String> {
        let first = gemm.run(session, &p, a, b, c)?;
        let (logical, gap) = read_c(session, c, &p)?;
        let mut report = check_widened(p.m, &logical, reference, p.precision);
        if let Some(at) = gap {
            report.passed = false;
            report.method = Some(format!(
                "element {at} of C's buffer, outside the matrix, changed"
            ));
        }
        if !report.passed {
            return Err(Error::Check {
                what: format!("the GEMM routine on {}", p.describe()),
                detail: report.summary(),
            });
        }
        let path = first.path.map_or("quick return", |x| x.as_str());
        let mut times = Vec::new();
        for _ in 0..reps.max(1) {
            times.push(gemm.run(session, &p, a, b, c)?.total_ns() as f64);
        }
        let stats = Stats::from_sample_ns(&times);
        let mut line = format!("{path}, check ok ({:.1e})", report.rel_frobenius);
        if let Some(st) = stats.filter(|_| first.path.is_some()) {
            let g = p.flops() / st.median_ns;
            line += &format!(
                ", routine {:.1} us median ({:.1} GFLOP/s; pre {:.1} + kernel {:.1} + post {:.1} us on the checked call)",
                st.median_ns / 1e3,
                g,
                first.pre_ns as f64 / 1e3,
                first.kernel_ns as f64 / 1e3,
                first.post_ns as f64 / 1e3
            );
            let call = vendor_call(&p, a, b, c);
            let vendor = {
                let mut be = session.backend.borrow_mut();
                let mut v = Vec::new();
                if be.vendor_gemm(&call, 1)?.is_some() {
                    for _ in 0..reps.max(1) {
                        if let Some(t) = be.vendor_gemm(&call, 1)? {
                            v.push(t as f64);
                        }
                    }
                }
                // Named after its first call: the library is loaded on demand.
                let blas = be.vendor_blas().unwrap_or_else(|| "vendor BLAS".into());
                Stats::from_sample_ns(&v).map(|s| (s, blas))
            };
            if let Some((vs, blas)) = vendor {
                line += &format!(
                    "; {blas} {:.1} us ({:.2} x its speed)",
                    vs.median_ns / 1e3,
                    vs.median_ns / st.median_ns
                );
            }
        }
        Ok(line)
    })();
    let mut be = session.backend.borrow_mut();
    for x in [a, b, c] {
        be.free(x);
    }
    result
}
