//! NVIDIA OpenCL's PTX made runnable by the CUDA driver. NVIDIA's OpenCL compiler
//! reads the launch environment from driver-defined registers, which only its
//! runtime fills (read as the kernels use them, driver 580):
//! - `%envreg0..2`: offsets added to `%ctaid` (get_group_id),
//! - `%envreg3..5`: offsets added to the global id (get_global_offset),
//! - `%envreg6..8`: the work-group counts (get_num_groups).
//!
//! Launched by the CUDA driver they hold whatever is there (the tc family's block
//! order and gemm2 faulted on the H200). The CUDA backend rewrites every PTX it
//! JIT-loads with this. gemmlab launches OpenCL kernels without
//! offsets, so for the CUDA JIT the offsets become 0 and the counts `%nctaid`:
//! the values the OpenCL runtime gives the same launch.

/// `ptx` with each read of an environment register replaced by its value under
/// a CUDA launch; the error names a use it cannot replace.
pub fn for_cuda_jit(ptx: &str) -> Result<String, String> {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        if !line.contains("%envreg") {
            out.push_str(line);
            continue;
        }
        let replaced = replace_env_mov(line).ok_or_else(|| {
            format!(
                "NVIDIA OpenCL's PTX reads its launch environment in a form gemmlab does not rewrite: {}",
                line.trim()
            )
        })?;
        out.push_str(&replaced);
    }
    Ok(out)
}

/// `mov.b32 %rN, %envregK;` as the move of its CUDA value, keeping the line's
/// indentation and ending.
fn replace_env_mov(line: &str) -> Option<String> {
    let body = line.trim_end_matches(['\n', '\r']);
    let ending = &line[body.len()..];
    let indent = &body[..body.len() - body.trim_start().len()];
    let rest = body.trim().strip_prefix("mov.")?;
    let (_, operands) = rest.split_once(char::is_whitespace)?;
    let (dest, src) = operands.trim().strip_suffix(';')?.split_once(',')?;
    let k: u32 = src.trim().strip_prefix("%envreg")?.parse().ok()?;
    let value = match k {
        0..=5 => "0".to_string(),
        6 => "%nctaid.x".into(),
        7 => "%nctaid.y".into(),
        8 => "%nctaid.z".into(),
        _ => return None,
    };
    Some(format!(
        "{indent}mov.u32 \t{}, {value};{ending}",
        dest.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_zero_and_group_counts_nctaid() {
        let ptx = "\tmov.b32 \t%r45, %envreg0;\n\tadd.s32 \t%r46, %r45, %r44;\n\
                   \tmov.b32 \t%r14, %envreg3;\n\tmov.b32 \t%r50, %envreg6;\n\tmov.b32 \t%r52, %envreg7;\n";
        let out = for_cuda_jit(ptx).unwrap();
        assert!(!out.contains("%envreg"), "{out}");
        assert!(out.contains("\tmov.u32 \t%r45, 0;\n"));
        assert!(out.contains("\tmov.u32 \t%r14, 0;\n"));
        assert!(out.contains("\tmov.u32 \t%r50, %nctaid.x;\n"));
        assert!(out.contains("\tmov.u32 \t%r52, %nctaid.y;\n"));
        assert!(out.contains("\tadd.s32 \t%r46, %r45, %r44;\n"));
    }

    #[test]
    fn other_uses_are_refused_with_the_line() {
        let e = for_cuda_jit("\tadd.s32 \t%r1, %envreg3, %r2;\n").unwrap_err();
        assert!(e.contains("add.s32"), "{e}");
        assert!(for_cuda_jit("\tmov.b32 \t%r1, %envreg9;\n").is_err());
        assert_eq!(for_cuda_jit("ret;\n").unwrap(), "ret;\n");
    }
}
