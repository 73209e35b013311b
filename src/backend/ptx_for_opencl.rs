//! PTX another front end wrote (NVRTC's, clang's) made loadable by NVIDIA's OpenCL
//! runtime as a program binary: the other half of issue 80's 2 x 2 (each
//! toolchain's PTX through each runtime).
//!
//! NVIDIA's OpenCL runtime learns which kernel parameters are buffers from the
//! PTX: its own compiler writes them `.param .u64 .ptr .global .align N`, and
//! `clSetKernelArg` turns a `cl_mem` into its device address only for such a
//! parameter. NVRTC and clang's CUDA mode write a plain `.param .u64` and convert
//! it with `cvta.to.global.u64` before the first access (LLVM's NVPTX marks every
//! kernel pointer parameter global). So a 64-bit parameter whose loaded value goes
//! through `cvta.to.global` is a buffer, and so is one the kernel never reads; one
//! read and never converted is a 64-bit scalar and stays plain. The pointee's
//! alignment is written as 1: an under-statement cannot make code wrong. The
//! target gets OpenCL's `texmode_independent`, as NVIDIA OpenCL's own PTX has it.

/// `ptx` rewritten for NVIDIA's OpenCL runtime, with how many parameters became
/// buffers; the error says why it cannot be.
pub fn for_opencl_runtime(ptx: &str) -> Result<Rewritten, String> {
    if ptx
        .lines()
        .any(|l| l.trim_start().starts_with(".extern .shared"))
    {
        return Err(
            "its PTX takes shared memory at launch (.extern .shared), which NVIDIA's \
                    OpenCL runtime gives a kernel only through __local arguments"
                .into(),
        );
    }
    let mut out = String::with_capacity(ptx.len() + 256);
    let mut in_params = false;
    let (mut entries, mut buffers, mut target) = (0, 0, false);
    for line in ptx.split_inclusive('\n') {
        let body = line.trim();
        if is_entry(body) {
            entries += 1;
            in_params = !body.contains(')');
        } else if in_params {
            if body.starts_with(')') {
                in_params = false;
            } else if let Some(name) = plain_u64_param(body) {
                if is_buffer(ptx, name) {
                    out.push_str(&line.replacen(".u64", ".u64 .ptr .global .align 1", 1));
                    buffers += 1;
                    continue;
                }
            }
        } else if let Some(rest) = body.strip_prefix(".target") {
            if !rest.contains("texmode_") {
                let ending = &line[line.trim_end().len()..];
                out.push_str(line.trim_end());
                out.push_str(", texmode_independent");
                out.push_str(ending);
                target = true;
                continue;
            }
            target = true;
        }
        out.push_str(line);
    }
    if entries == 0 {
        return Err("the PTX has no kernel entry (.entry) to load".into());
    }
    if !target {
        return Err("the PTX has no .target directive".into());
    }
    Ok(Rewritten {
        ptx: out,
        entries,
        buffers,
    })
}

/// PTX made loadable by NVIDIA's OpenCL runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    pub ptx: String,
    /// Kernel entries in it.
    pub entries: usize,
    /// 64-bit parameters now declared global buffers.
    pub buffers: usize,
}

fn is_entry(body: &str) -> bool {
    let body = body.strip_prefix(".visible").map_or(body, str::trim_start);
    let body = body.strip_prefix(".weak").map_or(body, str::trim_start);
    body.strip_prefix(".entry")
        .is_some_and(|r| r.starts_with([' ', '\t', '(']) || r.is_empty())
}

/// The name of `.param .u64 NAME[,]` without a `.ptr` attribute.
fn plain_u64_param(body: &str) -> Option<&str> {
    let rest = body.strip_prefix(".param")?.trim_start();
    let rest = rest.strip_prefix(".u64")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let name = rest.trim().trim_end_matches(',').trim();
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

/// Whether the kernel treats the parameter `name` as a global pointer: never read,
/// or read into a register that some `cvta.to.global` converts.
fn is_buffer(ptx: &str, name: &str) -> bool {
    let bracketed = format!("[{name}]");
    let loaded: Vec<&str> = (ptx.lines())
        .filter(|l| l.contains(&bracketed) && l.trim_start().starts_with("ld.param"))
        .filter_map(|l| {
            let operands = l.trim().split_once(char::is_whitespace)?.1;
            Some(operands.split(',').next()?.trim())
        })
        .collect();
    if loaded.is_empty() {
        return true;
    }
    ptx.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("cvta.to.global") && {
            let src = l
                .trim_end_matches(';')
                .rsplit(',')
                .next()
                .unwrap_or("")
                .trim();
            loaded.contains(&src)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The shape of NVRTC's PTX for a kernel (int n, float a, const float* x, float* y,
    // long long stride), cut down.
    const NVRTC: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n.target sm_90\n\
        .address_size 64\n\n\t// .globl\tsaxpy\n\n.visible .entry saxpy(\n\
        \t.param .u32 saxpy_param_0,\n\t.param .f32 saxpy_param_1,\n\
        \t.param .u64 saxpy_param_2,\n\t.param .u64 saxpy_param_3,\n\
        \t.param .u64 saxpy_param_4,\n\t.param .u64 saxpy_param_5\n)\n{\n\
        \tld.param.u32 \t%r1, [saxpy_param_0];\n\tld.param.u64 \t%rd1, [saxpy_param_2];\n\
        \tld.param.u64 \t%rd2, [saxpy_param_3];\n\tld.param.u64 \t%rd3, [saxpy_param_4];\n\
        \tcvta.to.global.u64 \t%rd4, %rd1;\n\tcvta.to.global.u64 \t%rd5, %rd2;\n\
        \tadd.s64 \t%rd6, %rd4, %rd3;\n\tret;\n}\n";

    #[test]
    fn converted_and_unread_pointers_become_buffers_and_a_scalar_stays() {
        let r = for_opencl_runtime(NVRTC).unwrap();
        assert_eq!((r.entries, r.buffers), (1, 3));
        let p = &r.ptx;
        assert!(
            p.contains("\t.param .u64 .ptr .global .align 1 saxpy_param_2,\n"),
            "{p}"
        );
        assert!(p.contains("\t.param .u64 .ptr .global .align 1 saxpy_param_3,\n"));
        // Read, added as a number, never converted: a 64-bit scalar.
        assert!(p.contains("\t.param .u64 saxpy_param_4,\n"));
        // Never read: a buffer the kernel does not use.
        assert!(p.contains("\t.param .u64 .ptr .global .align 1 saxpy_param_5\n)"));
        assert!(p.contains("\t.param .u32 saxpy_param_0,\n\t.param .f32 saxpy_param_1,\n"));
        assert!(p.contains("\n.target sm_90, texmode_independent\n"));
        // The body is untouched.
        assert!(p.ends_with(
            "\tcvta.to.global.u64 \t%rd5, %rd2;\n\tadd.s64 \t%rd6, %rd4, %rd3;\n\tret;\n}\n"
        ));
    }

    #[test]
    fn opencl_shaped_ptx_is_kept_as_it_is() {
        let ptx = ".version 8.0\n.target sm_90, texmode_independent\n.address_size 64\n\
                   .entry k(\n.param .u64 .ptr .global .align 4 k_param_0\n)\n{\nret;\n}\n";
        let r = for_opencl_runtime(ptx).unwrap();
        assert_eq!((r.ptx.as_str(), r.buffers), (ptx, 0));
    }

    #[test]
    fn params_on_the_entry_line_and_functions_are_told_apart() {
        // A device function's 64-bit parameter is not a kernel argument.
        let ptx = ".target sm_80\n.func (.param .b32 r) f(.param .u64 f_p)\n{\nret;\n}\n\
                   .entry k(.param .u64 k_p)\n{\nld.param.u64 %rd1, [k_p];\ncvta.to.global.u64 %rd2, %rd1;\nret;\n}\n";
        let r = for_opencl_runtime(ptx).unwrap();
        // Parameters on the entry line itself are not rewritten (NVRTC writes one
        // per line); the count says so.
        assert_eq!((r.entries, r.buffers), (1, 0));
        assert!(r.ptx.contains(".func (.param .b32 r) f(.param .u64 f_p)"));
    }

    #[test]
    fn ptx_without_an_entry_or_a_target_is_refused() {
        let e = for_opencl_runtime(".target sm_90\n.func f()\n{\nret;\n}\n").unwrap_err();
        assert!(e.contains(".entry"), "{e}");
        let e = for_opencl_runtime(".entry k(\n)\n{\nret;\n}\n").unwrap_err();
        assert!(e.contains(".target"), "{e}");
        let dynamic =
            ".target sm_90\n.extern .shared .align 16 .b8 tiles[];\n.entry k(\n)\n{\nret;\n}\n";
        let e = for_opencl_runtime(dynamic).unwrap_err();
        assert!(e.contains("__local"), "{e}");
    }
}
