//! `gemmlab accuracy`: each SGEMM's errors against the f64 reference on the same
//! inputs, next to cuBLAS SGEMM (FP32) and cuBLAS's TF32 mode, per size, K and
//! input distribution; and the gate that says where 3xTF32 is FP32-accurate.

use std::path::{Path, PathBuf};

use clap::Args;

use gemmlab::gemm::accuracy::{errors, verdicts, Arithmetic, Row, Verdict, FP32_FACTOR};
use gemmlab::gemm::data::{parse_size, Inputs};
use gemmlab::gemm::driver::{read_c, run_once_result, Session, VendorRunner};
use gemmlab::gemm::problem::Problem;
use gemmlab::gemm::{reference_gemm, sampled_reference, Operands, Reference};
use gemmlab::kernel::builtin::{self as kernels, Hints, KernelSpec};
use gemmlab::{Backend, Error, Result};

use super::compare::DeviceArgs;

#[derive(Args, Debug)]
pub struct AccuracyArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Kernels (comma-separated ids); a kernel with the TF32_SINGLE switch runs both ways.
    #[arg(long, default_value = "tc,simt")]
    pub kernels: String,
    /// Sizes: N for N^3 or MxNxK, comma-separated (the reference is the f64 CPU GEMM of each).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "256,1024,4096,1024x1024x32768"
    )]
    pub sizes: Vec<String>,
    /// Input distributions: uniform (the checks' own), mantissa (full 24-bit significands),
    /// mixed (full significands times 2^-12..2^12).
    #[arg(long, value_delimiter = ',', default_value = "uniform,mantissa,mixed")]
    pub inputs: Vec<String>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run each kernel in its tuned configuration (the database of bests) instead of its defaults.
    #[arg(long)]
    pub tuned: bool,
    /// Kernel parameter NAME=VALUE, set in every selected kernel that has it (over its
    /// defaults or its tuned configuration); repeatable. A name no selected kernel has is refused.
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Directory of the database of bests that --tuned reads.
    #[arg(long, default_value = "results/tuned")]
    pub db: PathBuf,
    /// Output directory: accuracy.json (every row and verdict).
    #[arg(long, default_value = "gemmlab-results/accuracy")]
    pub out: PathBuf,
}

/// What one run found, as written to accuracy.json.
#[derive(serde::Serialize)]
struct Record<'a> {
    gemmlab: &'static str,
    device: String,
    rows: &'a [Row],
    verdicts: &'a [Verdict],
    fp32_factor: f64,
}

pub fn run(args: AccuracyArgs) -> Result<super::Outcome> {
    gemmlab::error::check_out_dir(&args.out, "--out")?;
    let asked = Asked::from_args(&args)?;
    let mut sessions = args.device.sessions()?;
    let device = sessions
        .first()
        .map(|s| s.backend.borrow().info().name.clone())
        .unwrap_or_default();
    let db = if args.tuned {
        Some(gemmlab::results::bests::Database::load(&args.db, &device)?)
    } else {
        None
    };
    let mut rows: Vec<Row> = Vec::new();
    for &size in &asked.sizes {
        for &inp in &asked.inputs {
            let at = measure_at(&mut sessions, &asked, db.as_ref(), size, inp, args.seed)?;
            rows.extend(at);
        }
    }
    let verdicts = verdicts(&rows);
    print_tables(&rows, &verdicts);
    let record = Record {
        gemmlab: env!("CARGO_PKG_VERSION"),
        device,
        rows: &rows,
        verdicts: &verdicts,
        fp32_factor: FP32_FACTOR,
    };
    let path = record.write(&args.out)?;
    println!(
        "wrote {} rows and {} verdicts to {}",
        rows.len(),
        verdicts.len(),
        path.display()
    );
    let failed = rows
        .iter()
        .filter(|r| r.errors.is_none() && !r.status.starts_with("n/a"))
        .count();
    Ok(super::Outcome::from_failures(failed, "failed"))
}

impl Record<'_> {
    /// Writes the record as OUT/accuracy.json and returns that path.
    fn write(&self, out: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
        let path = out.join("accuracy.json");
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::invalid(e.to_string()))?;
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        Ok(path)
    }
}

/// What the command line asks to measure, checked before any device is opened.
struct Asked {
    sizes: Vec<(usize, usize, usize)>,
    inputs: Vec<Inputs>,
    specs: Vec<&'static KernelSpec>,
    defines: Vec<(String, i64)>,
}

impl Asked {
    fn from_args(args: &AccuracyArgs) -> Result<Asked> {
        let sizes: Vec<(usize, usize, usize)> = args
            .sizes
            .iter()
            .map(|s| parse_size(s))
            .collect::<Result<_>>()?;
        let inputs: Vec<Inputs> = args
            .inputs
            .iter()
            .map(|s| Inputs::parse(s))
            .collect::<Result<_>>()?;
        let specs = kernels::select(Some(&args.kernels))?;
        let defines: Vec<(String, i64)> = args
            .defines
            .iter()
            .map(|d| kernels::parse_define(d))
            .collect::<Result<_>>()?;
        if let Some((name, _)) = defines
            .iter()
            .find(|(n, _)| !specs.iter().any(|k| k.params.iter().any(|p| p.name == n)))
        {
            return Err(Error::invalid(format!(
                "--define {name}: none of the kernels {} has a parameter {name}",
                args.kernels
            )));
        }
        Ok(Asked {
            sizes,
            inputs,
            specs,
            defines,
        })
    }
}

/// The rows of one size and input distribution: its f64 reference and |A||B| on
/// the host, then every kernel variant and vendor mode on every session.
fn measure_at(
    sessions: &mut [Session],
    asked: &Asked,
    db: Option<&gemmlab::results::bests::Database>,
    (m, n, k): (usize, usize, usize),
    inp: Inputs,
    seed: u64,
) -> Result<Vec<Row>> {
    eprintln!(
        "[{m}x{n}x{k}, {} inputs] f64 reference and |A||B| on the host",
        inp.name()
    );
    let ops = Operands::for_problem_of(Problem::plain(m, n, k), seed, inp);
    let reference = Reference::cpu(&ops);
    let Reference::Full { c: exact, .. } = &reference else {
        return Err(Error::invalid("the CPU reference is always full"));
    };
    let abs_a: Vec<f32> = ops.a.iter().map(|v| v.abs()).collect();
    let abs_b: Vec<f32> = ops.b.iter().map(|v| v.abs()).collect();
    let abs = reference_gemm(m, n, k, &abs_a, &abs_b);
    let samples = sampled_reference(m, n, k, &ops.a, &ops.b, seed);
    let point = Point {
        ops: &ops,
        unchecked: Reference::Sampled(gemmlab::gemm::Samples {
            k,
            points: Vec::new(),
            values: Vec::new(),
            abs_sums: Vec::new(),
            description: "none: errors measured against the full f64 reference".into(),
        }),
        exact,
        abs: &abs,
        samples: &samples,
        inputs: inp,
        seed,
    };
    let mut rows = Vec::new();
    for s in sessions.iter_mut() {
        for spec in &asked.specs {
            for switches in variants(spec) {
                rows.push(kernel_row(s, spec, &switches, &point, db, &asked.defines));
            }
        }
        for tf32 in [false, true] {
            if let Some(r) = vendor_row(s, tf32, &point) {
                rows.push(r);
            }
        }
    }
    Ok(rows)
}

/// The inputs, reference and scales of one point.
struct Point<'a> {
    ops: &'a Operands,
    /// A reference of no samples: the runs only scan C for non-finite values.
    unchecked: Reference,
    exact: &'a [f64],
    abs: &'a [f64],
    samples: &'a gemmlab::gemm::Samples,
    inputs: Inputs,
    seed: u64,
}

impl Point<'_> {
    fn row(&self, toolchain: &str, kernel: &str, config: String, arithmetic: Arithmetic) -> Row {
        Row {
            m: self.ops.m,
            n: self.ops.n,
            k: self.ops.k,
            inputs: self.inputs,
            seed: self.seed,
            toolchain: toolchain.into(),
            kernel: kernel.into(),
            config,
            hints: "published".into(),
            arithmetic,
            errors: None,
            status: String::new(),
        }
    }

    fn measured(&self, mut row: Row, c: Result<Vec<f64>>) -> Row {
        match c {
            Ok(c) => {
                row.errors = Some(errors(self.ops.m, &c, self.exact, self.abs, self.samples));
                row.status = "ok".into();
            }
            Err(e) => row.status = format!("failed: {e}"),
        }
        row
    }
}

/// The switch settings a kernel runs with: published, and for the tensor-core
/// kernel 3xTF32 without promotion and 1xTF32 beside it.
fn variants(spec: &KernelSpec) -> Vec<Vec<(&'static str, bool)>> {
    let mut v = vec![Vec::new()];
    if spec.has_switch("PROMOTE_ACC") {
        v.push(vec![("PROMOTE_ACC", false)]);
    }
    if spec.has_switch("TF32_SINGLE") {
        v.push(vec![("TF32_SINGLE", true)]);
    }
    v
}

fn kernel_row(
    s: &mut Session,
    spec: &'static KernelSpec,
    switches: &[(&str, bool)],
    p: &Point,
    db: Option<&gemmlab::results::bests::Database>,
    defines: &[(String, i64)],
) -> Row {
    let info = s.backend.borrow().info().clone();
    let mut hints = Hints::default();
    for (name, on) in switches {
        hints.switches.insert((*name).into(), *on);
    }
    let arithmetic = if !spec.has_switch("TF32_SINGLE") {
        Arithmetic::Fp32
    } else if hints.switch("TF32_SINGLE") == Some(true) {
        Arithmetic::Tf32x1
    } else {
        Arithmetic::Tf32x3
    };
    let size = (p.ops.m, p.ops.n, p.ops.k);
    let config = db
        .and_then(|d| d.lookup(spec.id, info.toolchain, size))
        .map_or_else(|| spec.defaults(), |b| b.config.clone());
    let mut config = config;
    for (name, v) in defines {
        if spec.params.iter().any(|p| p.name == name) {
            config.0.insert(name.clone(), *v);
        }
    }
    let config = match spec
        .validate(&config)
        .and_then(|()| spec.with_precision(&config, gemmlab::kernel::builtin::Precision::F32))
    {
        Ok(c) => c,
        Err(e) => {
            let mut r = p.row(info.toolchain.as_str(), spec.id, String::new(), arithmetic);
            r.status = format!("n/a: {e}");
            return r;
        }
    };
    let mut row = p.row(
        info.toolchain.as_str(),
        spec.id,
        config.describe_params(),
        arithmetic,
    );
    if !switches.is_empty() {
        row.hints = switches
            .iter()
            .map(|(n, on)| format!("{n}={}", u8::from(*on)))
            .collect::<Vec<_>>()
            .join(" ");
    }
    if let Some(why) = spec.unavailable_at(&config, &info, &hints) {
        return Row {
            status: format!("n/a: {why}"),
            ..row
        };
    }
    eprintln!(
        "  {} {} {} ({})",
        info.toolchain,
        spec.id,
        row.hints,
        arithmetic.label()
    );
    // Checked against no sample (non-finite values still fail): the errors are measured
    // here against the full reference, also for results FP32's check would refuse.
    let c = run_once_result(s, spec, &config, &hints, p.ops, &p.unchecked);
    p.measured(row, c)
}

/// cuBLAS SGEMM in its default (FP32) or TF32 tensor-op mode; None without a vendor BLAS.
fn vendor_row(s: &mut Session, tf32: bool, p: &Point) -> Option<Row> {
    let toolchain = s.backend.borrow().info().toolchain;
    let (kernel, arithmetic) = if tf32 {
        ("cublas-tf32", Arithmetic::Tf32x1)
    } else {
        ("cublas", Arithmetic::Fp32)
    };
    let row = p.row(toolchain.as_str(), kernel, String::new(), arithmetic);
    let prepared = VendorRunner::prepare_in(s, p.ops, &p.unchecked, false, tf32);
    let c = match prepared {
        Ok(None) => return None,
        Ok(Some((runner, _))) => {
            let c = read_c(runner.session, runner.call.c, &p.ops.problem).map(|(c, _)| c);
            runner.release();
            c
        }
        Err(e) => Err(e),
    };
    eprintln!("  {toolchain} {kernel}");
    Some(p.measured(row, c))
}

fn print_tables(rows: &[Row], verdicts: &[Verdict]) {
    let mut points: Vec<(usize, usize, usize, Inputs)> = Vec::new();
    for r in rows {
        if !points.contains(&r.point()) {
            points.push(r.point());
        }
    }
    for pt in points {
        let (m, n, k, inp) = pt;
        println!("\n{m}x{n}x{k}, inputs {} ({})", inp.name(), inp.describe());
        println!(
            "{:<8} {:<12} {:<14} {:<26} {:>11} {:>12} {:>12} {:>11} {:>10} {:>14}",
            "toolchain",
            "kernel",
            "switches",
            "arithmetic",
            "max |err|",
            "x check bnd",
            "x u|A||B|",
            "rel Frob",
            "f32 full",
            "f32 sampled"
        );
        for r in rows.iter().filter(|r| r.point() == pt) {
            match r.errors {
                Some(e) => println!(
                    "{:<8} {:<12} {:<14} {:<26} {:>11.3e} {:>12.3e} {:>12.1} {:>11.2e} {:>10} {:>14}",
                    r.toolchain,
                    r.kernel,
                    r.hints,
                    r.arithmetic.label(),
                    e.max_abs,
                    e.over_check_bound,
                    e.over_unit_roundoff,
                    e.rel_frobenius,
                    if e.f32_full_check { "passes" } else { "FAILS" },
                    format!(
                        "{} ({:.2})",
                        if e.f32_sampled_ratio <= 1.0 { "passes" } else { "FAILS" },
                        e.f32_sampled_ratio
                    )
                ),
                None => println!(
                    "{:<8} {:<12} {:<14} {:<26} {}",
                    r.toolchain,
                    r.kernel,
                    r.hints,
                    r.arithmetic.label(),
                    r.status
                ),
            }
        }
        for v in verdicts.iter().filter(|v| (v.m, v.n, v.k, v.inputs) == pt) {
            let rule = match v.arithmetic {
                Arithmetic::Tf32x3 => {
                    format!("FP32-accurate: within {FP32_FACTOR}x of cuBLAS SGEMM")
                }
                _ => format!("lower precision: told apart from FP32 (more than {FP32_FACTOR}x)"),
            };
            println!(
                "  gate {} {} {} ({}): largest error {:.2}x cuBLAS SGEMM's: {} {}",
                v.toolchain,
                v.kernel,
                v.hints,
                v.arithmetic.label(),
                v.factor,
                if v.holds { "holds," } else { "FAILS," },
                rule
            );
        }
    }
}
