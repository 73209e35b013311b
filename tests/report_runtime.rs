//! The report's "Where the CUDA-OpenCL gap comes from" on made-up `sweep jit` rows
//! with known answers: a gap the runtime makes, one the PTX makes, none, and a
//! cell NVIDIA's OpenCL runtime could not load. Needs no GPU.

mod common;

use std::fs;
use std::path::Path;

use gemmlab::backend::{KernelResources, Toolchain};
use gemmlab::gemm::driver::Status;
use gemmlab::measure::clocks::{ClockReading, ClockWindow};
use gemmlab::measure::{Plan, Stats};
use gemmlab::report::{generate, Options};
use gemmlab::results::{failed_row, Environment, Measurement, ResultWriter};
use gemmlab::results::{NVRTC_PTX, OPENCL_PTX};

use Toolchain::{Cuda, OpenCl};

/// A `sweep jit` row of `kernel` at 4096 that ran at `gflops`.
fn row(kernel: &str, runtime: Toolchain, ptx: Option<&str>, gflops: f64) -> Measurement {
    let mut m = failed_row(
        "jit",
        "Made-up GPU",
        "0",
        runtime,
        kernel,
        Status::Ok,
        (4096, 4096, 4096),
    );
    let ns = 2.0 * 4096f64.powi(3) / gflops;
    m.variant = ptx.map(str::to_string);
    m.gflops = Some(gflops);
    m.time = Some(Stats {
        reps: 10,
        median_ns: ns,
        min_ns: ns,
        max_ns: ns,
        q1_ns: ns,
        q3_ns: ns,
        batch: 1,
    });
    m.resources = Some(KernelResources {
        registers: Some(96),
        ..Default::default()
    });
    m
}

/// The six lanes of one kernel: natives, then [NVRTC's, OpenCL's] PTX through
/// [the CUDA JIT, the OpenCL runtime].
fn lanes(kernel: &str, native: [f64; 2], cells: [[f64; 2]; 2]) -> Vec<Measurement> {
    let mut rows = vec![
        row(kernel, Cuda, None, native[0]),
        row(kernel, OpenCl, None, native[1]),
    ];
    for (ptx, speeds) in [(NVRTC_PTX, cells[0]), (OPENCL_PTX, cells[1])] {
        rows.push(row(kernel, Cuda, Some(ptx), speeds[0]));
        rows.push(row(kernel, OpenCl, Some(ptx), speeds[1]));
    }
    rows
}

fn report(root: &Path, rows: Vec<Measurement>) -> String {
    let dir = root.join("in/jit");
    let mut w =
        ResultWriter::create(&dir, Environment::capture(Vec::new(), 1, Plan::default())).unwrap();
    for m in rows {
        w.push(m).unwrap();
    }
    w.finish().unwrap();
    let o = generate(&Options {
        from: vec![root.join("in")],
        out: root.join("out"),
        png: false,
        font: None,
        size: None,
    })
    .unwrap();
    fs::read_to_string(o.markdown).unwrap()
}

#[test]
fn the_gap_is_split_into_the_ptx_and_the_runtime_with_the_verdict() {
    let tmp = common::temp_dir("report-runtime", "split");
    let mut rows = Vec::new();
    // gemm7: CUDA 12% faster; either PTX loses 12% through the OpenCL runtime.
    rows.extend(lanes(
        "gemm7",
        [11200.0, 10000.0],
        [[11200.0, 10000.0], [11200.0, 10000.0]],
    ));
    // gemm2: CUDA 10% faster; OpenCL's PTX is 10% slower on either runtime.
    rows.extend(lanes(
        "gemm2",
        [3300.0, 3000.0],
        [[3300.0, 3300.0], [3000.0, 3000.0]],
    ));
    // gemm1: no gap.
    rows.extend(lanes(
        "gemm1",
        [1000.0, 1005.0],
        [[1000.0, 1000.0], [1000.0, 1000.0]],
    ));
    // tcwg: NVRTC's PTX cannot go through the OpenCL runtime.
    let mut tcwg = lanes(
        "tcwg",
        [60000.0, 50000.0],
        [[60000.0, 0.0], [60000.0, 50000.0]],
    );
    let cell = tcwg
        .iter_mut()
        .find(|m| m.toolchain == OpenCl && m.variant.as_deref() == Some(NVRTC_PTX))
        .unwrap();
    cell.status =
        Status::Unavailable("its PTX takes shared memory at launch (.extern .shared)".into());
    cell.gflops = None;
    cell.time = None;
    rows.extend(tcwg);
    let md = report(&tmp, rows);

    let section = &md[md
        .find("\n## Where the CUDA-OpenCL gap comes from\n")
        .expect("the section")..];
    let table_row = |k: &str| {
        section
            .lines()
            .find(|l| l.starts_with(&format!("| {k} |")))
            .unwrap_or_else(|| panic!("no {k} row in\n{section}"))
    };
    let g7 = table_row("gemm7");
    assert!(
        g7.contains("+12.0%") && g7.contains("(100% of the gap)"),
        "{g7}"
    );
    let g2 = table_row("gemm2");
    assert!(
        g2.contains("+10.0% (100% of the gap)") && g2.contains("+0.0% (0% of the gap)"),
        "{g2}"
    );
    // No share under the 5% threshold.
    assert!(
        !table_row("gemm1").contains("of the gap"),
        "{}",
        table_row("gemm1")
    );
    // The cell that could not load says why, under its runtime's name.
    assert!(
        section.contains(
            "- tcwg at 4096, NVRTC PTX via OpenCL runtime: its PTX takes shared memory at launch"
        ),
        "{section}"
    );
    // tcwg's runtime part comes from OpenCL's PTX alone: 60000 / 50000.
    assert!(
        table_row("tcwg").contains("+20.0% (100% of the gap)"),
        "{}",
        table_row("tcwg")
    );

    // The verdict names who leads, and each kernel's finding its parts.
    assert!(md.contains("**Is OpenCL slower on NVIDIA?** Measured, not assumed: Yes: on Made-up GPU, 3 of 4 kernels differ by more than 5%"), "{md}");
    assert!(md.contains("the runtime (the same PTX through the other runtime) explains more than half of the gap for gemm7 at 4096 and tcwg at 4096"), "{md}");
    assert!(
        md.contains("the PTX (the other front end's PTX on the same runtime) for gemm2 at 4096"),
        "{md}"
    );
    assert!(md.contains("**gemm7 at 4096: CUDA is 12% faster than NVIDIA OpenCL.** The same PTX through the CUDA driver instead of NVIDIA's OpenCL runtime changes the speed by +12.0%"), "{md}");
    assert!(
        md.contains("**gemm1 at 4096: CUDA and NVIDIA OpenCL are within 5% of each other"),
        "{md}"
    );
    // The verdict is in the summary.
    let summary = &md[..md.find("\n## All findings\n").unwrap()];
    assert!(summary.contains("Is OpenCL slower on NVIDIA?"), "{summary}");
}

/// CUDA's lanes of `kernel` again under a carveout preference.
fn under_carveout(kernel: &str, pct: u32, cuda: f64, opencl_ptx: f64) -> Vec<Measurement> {
    let mut rows = vec![
        row(kernel, Cuda, None, cuda),
        row(kernel, Cuda, Some(OPENCL_PTX), opencl_ptx),
    ];
    for m in &mut rows {
        m.hints.carveout = Some(pct);
        m.label = Some(format!("carveout {pct}%"));
    }
    rows
}

#[test]
fn a_runtime_factor_that_reproduces_the_gap_is_named_the_mechanism() {
    let tmp = common::temp_dir("report-runtime", "factor");
    let mut rows = lanes(
        "gemm7",
        [11200.0, 10000.0],
        [[11200.0, 10000.0], [11200.0, 10000.0]],
    );
    // A carveout of 100% makes the CUDA driver run OpenCL's PTX at the OpenCL
    // runtime's speed; 0% changes nothing.
    rows.extend(under_carveout("gemm7", 100, 10000.0, 10000.0));
    rows.extend(under_carveout("gemm7", 0, 11200.0, 11200.0));
    // The clocks read the same under both runtimes.
    for m in &mut rows {
        let at = ClockReading {
            sm_mhz: Some(1980),
            mem_mhz: Some(3201),
            temperature_c: Some(40),
            power_w: Some(300.0),
            throttle_reasons: Some(Vec::new()),
            throttled: false,
        };
        m.clocks = ClockWindow::new(Some(at.clone()), Some(at));
    }
    let md = report(&tmp, rows);
    assert!(md.contains("The SM clock after the timed launches was the same under both runtimes (1980 and 1980 MHz, NVML): clocks are ruled out."), "{md}");
    let section = &md[md
        .find("\n### Runtime factors on the same binaries\n")
        .expect("the factor table")..];
    assert!(
        section.contains(
            "| gemm7 | 4096 | carveout 100% | 10000 (96 regs) | 100% | 10000 (96 regs) | 100% |"
        ),
        "{section}"
    );
    assert!(
        section.contains(
            "| gemm7 | 4096 | carveout 0% | 11200 (96 regs) | 0% | 11200 (96 regs) | 0% |"
        ),
        "{section}"
    );
    // The factor rows are not a second 2 x 2 row of their own.
    let main = &md[md
        .find("\n## Where the CUDA-OpenCL gap comes from\n")
        .unwrap()..];
    assert_eq!(
        main.lines()
            .filter(|l| l.starts_with("| gemm7 | 4096 | 11200"))
            .count(),
        1,
        "{main}"
    );
    assert!(md.contains("**carveout 100% on the CUDA driver reproduces 100% of the runtime's part (CUDA's own build -10.7%)**: it is the mechanism. Also tried: carveout 0%: 0% of the runtime's part"), "{md}");
    assert!(md.contains("The runtime factors tried on the CUDA driver (carveout 0% and carveout 100%) reproduce at least 80% of the gap: carveout 100% for gemm7 at 4096 (100%)."), "{md}");
}

#[test]
fn factors_that_reproduce_nothing_are_ruled_out() {
    let tmp = common::temp_dir("report-runtime", "ruled-out");
    let mut rows = lanes(
        "gemm7",
        [11200.0, 10000.0],
        [[11200.0, 10000.0], [11200.0, 10000.0]],
    );
    rows.extend(under_carveout("gemm7", 100, 11150.0, 11200.0));
    let md = report(&tmp, rows);
    assert!(md.contains("None of the runtime factors tried on the CUDA driver (carveout 100%) reproduces 80% of any gap: they are ruled out as its mechanism."), "{md}");
    assert!(md.contains("the factor that comes closest, carveout 100% on the CUDA driver, reproduces 0% of the runtime's part"), "{md}");
}

#[test]
fn a_jit_run_without_the_opencl_runtime_lanes_has_no_section() {
    let tmp = common::temp_dir("report-runtime", "old");
    // An older jit run: OpenCL's PTX through the CUDA JIT only.
    let rows = vec![
        row("gemm1", Cuda, None, 1000.0),
        row("gemm1", OpenCl, None, 900.0),
        row("gemm1", Cuda, Some(OPENCL_PTX), 950.0),
    ];
    let md = report(&tmp, rows);
    assert!(!md.contains("Where the CUDA-OpenCL gap comes from"), "{md}");
}

#[test]
fn a_users_kernel_gets_the_same_split_in_its_own_unit() {
    let tmp = common::temp_dir("report-runtime", "spec");
    let mut rows = lanes("saxpy", [1000.0, 800.0], [[1000.0, 800.0], [1000.0, 800.0]]);
    for m in &mut rows {
        m.gflops = None;
        m.resources = None;
        (m.m, m.n, m.k) = (0, 0, 0);
        m.dims = Some([("n".to_string(), 1 << 24)].into_iter().collect());
    }
    let md = report(&tmp, rows);
    let section = &md[md
        .find("\n## Where the CUDA-OpenCL gap comes from\n")
        .expect("the section")..];
    let row = section
        .lines()
        .find(|l| l.starts_with("| saxpy | n=16777216 |"))
        .unwrap_or_else(|| panic!("no saxpy row in\n{section}"));
    // Median times, not GFLOP/s: 2 * 4096^3 / 1000 GFLOP/s = 137.439 ms.
    assert!(
        row.contains("| 137.439 ms | 171.799 ms | +25.0% |"),
        "{row}"
    );
    assert!(row.contains("+25.0% (100% of the gap)"), "{row}");
}
