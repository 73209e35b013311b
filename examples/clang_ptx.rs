//! Fills `GEMMLAB_CLANG_PTX` with clang's PTX of what a `compare` at the published
//! defaults compiles on a clang toolchain (every built-in kernel, the support and
//! routine kernels in both precisions) for one architecture, so that a GPU machine
//! without clang can run the clang toolchains from it (see src/backend/clang.rs).
//!
//!   GEMMLAB_CLANG_PTX=.gpu/clang-ptx cargo run --release --example clang_ptx -- sm_90

use gemmlab::backend::clang::ClangCompiler;
use gemmlab::kernel::builtin::{self as kernels, Hints, Support};
use gemmlab::{Arch, Precision, Toolchain};

fn main() {
    let arch = std::env::args().nth(1).unwrap_or_else(|| "sm_90".into());
    if gemmlab::backend::clang::ptx_cache().is_none() {
        eprintln!("set GEMMLAB_CLANG_PTX to the folder to fill");
        std::process::exit(2);
    }
    let arch = match Arch::parse(&arch) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut failed = 0;
    for tc in [Toolchain::ClangCuda, Toolchain::ClangOpenCl] {
        let c = match ClangCompiler::for_arch(tc, &arch, None) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{tc}: {e}");
                std::process::exit(1);
            }
        };
        let mut jobs = vec![(
            "support".to_string(),
            Support::source(tc),
            Support::options(),
        )];
        for p in [Precision::F32, Precision::F64] {
            jobs.push((
                format!("routine {p:?}"),
                Support::routine_source(tc),
                Support::routine_options(p),
            ));
        }
        for k in kernels::all() {
            let options = k.compile_options(&k.defaults(), &Hints::default(), tc);
            jobs.push((k.id.to_string(), k.source(tc), options));
        }
        for (what, source, options) in jobs {
            match c.ptx(&what, &source, &options) {
                Ok(_) => println!("{tc} {what}: kept"),
                Err(e) => {
                    failed += 1;
                    eprintln!("{tc} {what}: {e}");
                }
            }
        }
    }
    std::process::exit(i32::from(failed > 0));
}
