//! OpenCL builds in helper processes (`gemmlab build-worker`): the program the
//! measuring process gets from a worker's binary runs and gives the same answers
//! as one built here; compile errors keep their log; a worker that cannot start
//! is an error, not a hang. PoCL here and in CI; NVIDIA OpenCL on the GPU machine.

mod common;

use std::path::Path;
use std::sync::Arc;

use gemmlab::{
    Arg, Backend, CompileOptions, Compiler, Elem, Error, Geometry, HostData, HostDataMut,
};

const SCALE: &str = r#"
__kernel void scale(const int n, __global const float* x, __global float* y) {
    const int i = get_global_id(0);
    if (i < n) { y[i] = FACTOR * x[i]; }
}
"#;

fn pooled(b: &impl Backend, n: usize) -> Arc<dyn Compiler> {
    b.compiler()
        .in_processes(n, &common::gemmlab_bin(), true)
        .expect("build processes start")
        .expect("OpenCL can build in processes when asked")
}

#[test]
fn a_program_built_in_a_worker_runs_here() {
    let mut b = common::opencl();
    let pool = pooled(&b, 2);
    assert!(pool.parallel_builds());
    let opts = CompileOptions::new().define("FACTOR", "3.0f");
    let artefact = pool.compile("scale", SCALE, &opts).unwrap();
    let here = b.compiler().compile("scale", SCALE, &opts).unwrap();
    // Same flags, same kernels, same resources as a build in this process.
    assert_eq!(artefact.report.flags, here.report.flags);
    let names = |r: &gemmlab::BuildReport| -> Vec<String> {
        r.kernels.iter().map(|k| k.name.clone()).collect()
    };
    assert_eq!(names(&artefact.report), names(&here.report));
    assert_eq!(
        artefact.report.kernel("scale").map(|k| k.registers),
        here.report.kernel("scale").map(|k| k.registers)
    );
    let (program, _) = b.load("scale", artefact).unwrap();
    let n = 777usize;
    let x = common::random(n, 7);
    let bx = b.alloc(Elem::F32, n).unwrap();
    let by = b.alloc(Elem::F32, n).unwrap();
    b.upload(&bx, HostData::F32(&x)).unwrap();
    b.fill(&by, f64::NAN).unwrap();
    b.launch(
        &program,
        "scale",
        &Geometry::d2((1024, 1), (64, 1)),
        &[Arg::I32(n as i32), Arg::Buf(bx), Arg::Buf(by)],
    )
    .unwrap();
    let mut y = vec![f32::NAN; n];
    b.download(&by, HostDataMut::F32(&mut y)).unwrap();
    for i in 0..n {
        assert_eq!(y[i], 3.0 * x[i], "y[{i}]");
    }
}

#[test]
fn builds_from_several_threads_share_the_workers() {
    let b = common::opencl();
    let pool = pooled(&b, 2);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..5)
            .map(|i| {
                let pool = Arc::clone(&pool);
                s.spawn(move || {
                    let opts = CompileOptions::new().define("FACTOR", format!("{i}.0f"));
                    pool.compile("scale", SCALE, &opts).map(|a| a.report.flags)
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let flags = h.join().unwrap().unwrap();
            assert!(flags.contains(&format!("-DFACTOR={i}.0f")), "{flags:?}");
        }
    });
}

#[test]
fn a_compile_error_keeps_the_compilers_log() {
    let b = common::opencl();
    let pool = pooled(&b, 1);
    let bad = "__kernel void broken(__global float* y) { y[0] = undeclared_name; }";
    match pool.compile("broken", bad, &CompileOptions::new()) {
        Err(Error::Compile { log, .. }) => {
            assert!(log.contains("undeclared_name"), "{log}");
        }
        other => panic!(
            "expected a compile error, got {:?}",
            other.map(|a| a.report)
        ),
    }
    // The worker survives a compile error and builds the next program.
    let opts = CompileOptions::new().define("FACTOR", "1.0f");
    assert!(pool.compile("scale", SCALE, &opts).is_ok());
}

#[test]
fn a_worker_that_cannot_start_is_an_error() {
    let b = common::opencl();
    let err = b
        .compiler()
        .in_processes(2, Path::new("/bin/true"), true)
        .err()
        .expect("a binary that is not gemmlab cannot serve builds");
    assert!(err.to_string().contains("build process"), "{err}");
}

#[test]
fn only_where_builds_serialize_unless_forced() {
    let b = common::opencl();
    let auto = b
        .compiler()
        .in_processes(2, &common::gemmlab_bin(), false)
        .unwrap();
    // NVIDIA's OpenCL asks for build processes by itself where the driver's compute
    // cache can hand their work over; PoCL only when forced.
    let cache = std::env::var("CUDA_CACHE_DISABLE").map_or(true, |v| v.trim() != "1");
    assert_eq!(auto.is_some(), b.info().is_nvidia() && cache);
    assert!(b
        .compiler()
        .in_processes(0, &common::gemmlab_bin(), true)
        .unwrap()
        .is_none());
}
