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
//!
//! Also NVIDIA OpenCL's (and clang's) PTX made architecture-specific: sm_90a's
//! wgmma, written behind a comment marker the front end cannot refuse, made live
//! for a `.target sm_90a` build ([`arch_specific`]).

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

/// The PTX comment marker behind which an OpenCL source writes each instruction of
/// the architecture-specific feature set (`CompileOptions::arch_specific`): NVIDIA's
/// OpenCL declares `.target sm_90` and refuses wgmma there, but passes a comment on.
pub const ARCH_SPECIFIC_MARKER: &str = "//sm_90a ";

/// PTX made architecture-specific by [`arch_specific`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchSpecific {
    pub ptx: String,
    /// The new `.target` architecture: "sm_90a".
    pub target: String,
    /// How many marked instructions were un-commented.
    pub uncommented: usize,
}

/// `ptx` with every [`ARCH_SPECIFIC_MARKER`] removed, so the instruction after it
/// is live, and its `.target sm_XX` (sm_90 or later) made `sm_XXa`, keeping the
/// rest of the directive (`, texmode_independent`). A target already `sm_XXa` is
/// kept. The error names a missing or unsuitable `.target`.
pub fn arch_specific(ptx: &str) -> Result<ArchSpecific, String> {
    let uncommented = ptx.matches(ARCH_SPECIFIC_MARKER).count();
    let live = ptx.replace(ARCH_SPECIFIC_MARKER, "");
    let mut out = String::with_capacity(live.len() + 1);
    let mut target = None;
    for line in live.split_inclusive('\n') {
        let body = line.trim_start();
        let Some(rest) = body
            .strip_prefix(".target")
            .filter(|r| r.starts_with([' ', '\t']))
        else {
            out.push_str(line);
            continue;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (old, tail) = rest.split_at(end);
        let number: Option<u32> = old
            .strip_prefix("sm_")
            .map(|n| n.strip_suffix('a').unwrap_or(n))
            .and_then(|n| n.parse().ok());
        let new = match number {
            Some(n) if n >= 90 => format!("sm_{n}a"),
            _ => {
                return Err(format!(
                    "the PTX targets {old}: the architecture-specific instructions (sm_90a: wgmma) need sm_90 or later"
                ))
            }
        };
        let head = &line[..line.len() - body.len()];
        out.push_str(&format!("{head}.target {new}{tail}"));
        target = Some(new);
    }
    let target = target.ok_or("the PTX has no .target directive to re-target")?;
    Ok(ArchSpecific {
        ptx: out,
        target,
        uncommented,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_live_and_the_target_gets_its_a() {
        let ptx = ".version 8.8\n.target sm_90, texmode_independent\n.address_size 64\n\
                   \t// begin inline asm\n\t//sm_90a wgmma.fence.sync.aligned; // %f1\n\t// end inline asm\n\
                   \t{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %r1, 0;\n\t//sm_90a wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%f2}, %rd1, %rd2, p, 1, 1; //sm_90a wgmma.commit_group.sync.aligned;\n\t}\n\
                   \t// a comment that stays\n\tret;\n";
        let out = arch_specific(ptx).unwrap();
        assert_eq!(out.target, "sm_90a");
        assert_eq!(out.uncommented, 3);
        assert!(!out.ptx.contains("//sm_90a"), "{}", out.ptx);
        assert!(out
            .ptx
            .contains("\n.target sm_90a, texmode_independent\n.address_size 64\n"));
        assert!(out.ptx.contains("\n\twgmma.fence.sync.aligned; // %f1\n"));
        assert!(out.ptx.contains(
            "\n\twgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%f2}, %rd1, %rd2, p, 1, 1; wgmma.commit_group.sync.aligned;\n"
        ));
        assert!(out.ptx.contains("\t// a comment that stays\n\tret;\n"));
        assert_eq!(
            out.ptx.len(),
            ptx.len() + 1 - 3 * ARCH_SPECIFIC_MARKER.len()
        );
    }

    #[test]
    fn any_target_from_sm_90_is_retargeted_and_older_ones_refused() {
        let out = arch_specific(".target sm_100\nret;").unwrap();
        assert_eq!(
            (out.ptx.as_str(), out.uncommented),
            (".target sm_100a\nret;", 0)
        );
        // Already architecture-specific (clang's PTX for sm_90a): kept.
        let out = arch_specific("  .target sm_90a\n").unwrap();
        assert_eq!(out.ptx, "  .target sm_90a\n");
        let e = arch_specific(".target sm_80, texmode_independent\n").unwrap_err();
        assert!(e.contains("sm_80") && e.contains("sm_90"), "{e}");
        assert!(arch_specific(".target compute_90\n").is_err());
        let e =
            arch_specific("//sm_90a wgmma.fence.sync.aligned;\n// .target sm_90\n").unwrap_err();
        assert!(e.contains("no .target"), "{e}");
        // `.targets` is not the directive.
        assert!(arch_specific(".targets sm_90\n").is_err());
    }

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
