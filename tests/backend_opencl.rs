//! The OpenCL backend on a real device (PoCL here and in CI; NVIDIA OpenCL on the GPU machine).

mod common;

use gemmlab::{
    open_spec, Arg, Backend, CompileOptions, Elem, Error, Geometry, HostData, HostDataMut,
    Toolchain,
};

const AXPY: &str = r#"
__kernel void axpy(const int n, const float a, const __global float* x, __global float* y) {
    const int i = get_global_id(0) + get_global_id(1) * get_global_size(0);
    if (i < n) { y[i] = a * x[i] + y[i] + SHIFT; }
}
__kernel void index3(__global double* out) {
    const size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    out[i] = (double)i;
}
"#;

#[test]
fn compiles_launches_and_every_value_is_right() {
    let mut b = common::opencl();
    common::say(&format!("OpenCL test device: {}", b.info().label()));
    let opts = CompileOptions::new().define("SHIFT", "0.5f");
    let (prog, report) = b.compile("axpy", AXPY, &opts).unwrap();
    assert!(report.flags.iter().any(|f| f == "-DSHIFT=0.5f"));
    assert!(report.compile_ms > 0.0);
    let k = report.kernel("axpy").expect("resources of axpy");
    // Unknown stays None: PoCL reports no registers.
    if b.info().is_nvidia() {
        assert!(k.registers.is_some_and(|r| r > 0), "{k:?}");
        assert!(report.ptx.as_deref().is_some_and(|p| p.contains(".entry")));
    } else {
        assert_eq!(k.registers, None);
        assert_eq!(k.spill_stores_bytes, None);
    }

    let n = 1000usize;
    let x = common::random(n, 1);
    let y0 = common::random(n, 2);
    let bx = b.alloc(Elem::F32, n).unwrap();
    let by = b.alloc(Elem::F32, n).unwrap();
    b.upload(&bx, HostData::F32(&x)).unwrap();
    b.upload(&by, HostData::F32(&y0)).unwrap();
    // 2-D geometry covering 1024 >= n items.
    let g = Geometry::d2((32, 32), (32, 1));
    let ns = b
        .launch(
            &prog,
            "axpy",
            &g,
            &[
                Arg::I32(n as i32),
                Arg::F32(2.0),
                Arg::Buf(bx),
                Arg::Buf(by),
            ],
        )
        .unwrap();
    assert!(ns > 0, "event time must be positive");
    let mut y = vec![f32::NAN; n];
    b.download(&by, HostDataMut::F32(&mut y)).unwrap();
    for i in 0..n {
        let want = 2.0 * x[i] + y0[i] + 0.5;
        assert!(
            (y[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "y[{i}] = {} want {want}",
            y[i]
        );
    }
}

#[test]
fn three_d_geometry_and_f64_buffers() {
    let mut b = common::opencl();
    let (prog, _) = b
        .compile("index3", AXPY, &CompileOptions::new().define("SHIFT", 0))
        .unwrap();
    let g = Geometry {
        global: [8, 4, 2],
        local: [4, 2, 1],
        launch_local: 0,
        carveout: None,
    };
    let out = b.alloc(Elem::F64, 64).unwrap();
    b.fill(&out, -7.0).unwrap();
    let mut v = vec![0.0f64; 64];
    b.download(&out, HostDataMut::F64(&mut v)).unwrap();
    assert!(v.iter().all(|&x| x == -7.0), "fill");
    b.launch(&prog, "index3", &g, &[Arg::Buf(out)]).unwrap();
    b.download(&out, HostDataMut::F64(&mut v)).unwrap();
    for (i, x) in v.iter().enumerate() {
        assert_eq!(*x, i as f64);
    }
}

#[test]
fn syntax_error_carries_the_compiler_log() {
    let mut b = common::opencl();
    let bad = "__kernel void broken(__global float* y) { y[0] = undeclared_thing; }";
    match b.compile("broken", bad, &CompileOptions::new()) {
        Err(Error::Compile { log, .. }) => assert!(log.contains("undeclared_thing"), "log: {log}"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a syntax error compiled"),
    }
}

#[test]
fn bad_launches_are_errors_not_panics() {
    let mut b = common::opencl();
    let (prog, _) = b
        .compile("axpy", AXPY, &CompileOptions::new().define("SHIFT", 0))
        .unwrap();
    let x = b.alloc(Elem::F32, 4).unwrap();
    let uneven = Geometry::d2((30, 1), (16, 1));
    assert!(b
        .launch(
            &prog,
            "axpy",
            &uneven,
            &[Arg::I32(4), Arg::F32(1.0), Arg::Buf(x), Arg::Buf(x)]
        )
        .is_err());
    let e = b
        .launch(&prog, "nope", &Geometry::d2((4, 1), (4, 1)), &[])
        .unwrap_err();
    assert!(e.to_string().contains("axpy"), "{e}");
    assert!(b.upload(&x, HostData::F32(&[1.0; 3])).is_err());
}

#[test]
fn unknown_device_lists_the_devices_that_exist() {
    let e = match open_spec("no-such-gpu-9000", &Toolchain::ALL) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("matched a device that does not exist"),
    };
    assert!(e.contains("no-such-gpu-9000"), "{e}");
    assert!(e.contains("opencl:"), "should list OpenCL devices: {e}");
}

#[test]
fn a_batch_runs_every_launch_between_one_pair_of_events() {
    let mut b = common::opencl();
    let (prog, _) = b
        .compile("axpy", AXPY, &CompileOptions::new().define("SHIFT", "0.0f"))
        .unwrap();
    let n = 256usize;
    let ones = vec![1.0f32; n];
    let bx = b.alloc(Elem::F32, n).unwrap();
    let by = b.alloc(Elem::F32, n).unwrap();
    b.upload(&bx, HostData::F32(&ones)).unwrap();
    b.fill(&by, 0.0).unwrap();
    let args = [
        Arg::I32(n as i32),
        Arg::F32(1.0),
        Arg::Buf(bx),
        Arg::Buf(by),
    ];
    // y += x seven times: the batch really launched seven kernels, in order.
    let ns = b
        .launch_batch(&prog, "axpy", &Geometry::d2((n, 1), (64, 1)), &args, 7)
        .unwrap();
    assert!(ns > 0);
    let mut y = vec![0.0f32; n];
    b.download(&by, HostDataMut::F32(&mut y)).unwrap();
    assert!(y.iter().all(|&v| v == 7.0), "{:?}", &y[..4]);
}

/// Guard zones (the protection every kernel's output gets, built-in GEMMs' C
/// and users' buffers alike): an intact buffer says nothing; a write one element
/// past the end or before the start is named with its index.
#[test]
fn guard_zones_name_a_write_past_either_end() {
    use gemmlab::backend::guard::Guarded;
    const OFF_BY: &str = r#"
__kernel void off_by(const int n, const int shift, __global float* y) {
    const int i = get_global_id(0);
    if (i < n) { y[i + shift] = 1.0f; }
}
"#;
    let mut b = common::opencl();
    let (prog, _) = b.compile("off_by", OFF_BY, &CompileOptions::new()).unwrap();
    let n = 1000usize;
    for (shift, words) in [
        (0, None),
        (1, Some("`y` 1 element past its end (index 1000;")),
        (-1, Some("`y` 1 element before its start (index -1;")),
    ] {
        let g = Guarded::new(&mut b, Elem::F32, n).unwrap();
        b.launch(
            &prog,
            "off_by",
            &Geometry::d2((1024, 1), (64, 1)),
            &[Arg::I32(n as i32), Arg::I32(shift), Arg::Buf(g.view)],
        )
        .unwrap();
        let said = g.breach(&mut b, "y").unwrap();
        match words {
            None => assert_eq!(said, None),
            Some(w) => assert!(said.as_deref().is_some_and(|s| s.contains(w)), "{said:?}"),
        }
        g.release(&mut b);
    }
}
