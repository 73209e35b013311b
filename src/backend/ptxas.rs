//! Parser for ptxas's verbose resource lines. The same lines appear in the
//! NVIDIA OpenCL build log (`-cl-nv-verbose`) and in the NVRTC program log
//! (`--ptxas-options=-v`), so one parser serves both toolchains.
//!
//! ```text
//! ptxas info    : Compiling entry function 'k' for 'sm_90a'
//! ptxas info    : Function properties for k
//! ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 30 registers, used 1 barriers, 8196 bytes smem
//! ```

use super::KernelResources;

/// Resource lines of every entry function in a log, in order of appearance.
pub fn parse_ptxas_log(log: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    // Index of the entry the next properties / "Used" line belongs to.
    let mut current: Option<usize> = None;
    for raw in log.lines() {
        let line = raw.trim();
        // nvcc/NVRTC print the properties line bare and indented; NVIDIA OpenCL
        // prefixes it with "ptxas .". Every other line of interest starts with "ptxas".
        // The CUDA driver's JIT log writes "info    :" where ptxas writes "ptxas info    :".
        if !line.starts_with("ptxas")
            && !line.starts_with("info")
            && !line.contains("bytes stack frame")
        {
            continue;
        }
        let body = match line.find(':') {
            Some(i) if line[..i].trim_start_matches("ptxas").trim() == "info" => {
                line[i + 1..].trim()
            }
            _ => line
                .trim_start_matches("ptxas")
                .trim_start_matches(['.', ' '])
                .trim(),
        };
        if let Some(rest) = body.strip_prefix("Compiling entry function") {
            let name = quoted(rest).unwrap_or_default();
            current = Some(entry(&mut out, &name));
        } else if let Some(rest) = body.strip_prefix("Function properties for") {
            let name = rest.trim().to_string();
            current = Some(entry(&mut out, &name));
        } else if body.contains("bytes stack frame") {
            if let Some(i) = current {
                let k = &mut out[i];
                k.stack_frame_bytes = number_before(body, "bytes stack frame");
                k.spill_stores_bytes = number_before(body, "bytes spill stores");
                k.spill_loads_bytes = number_before(body, "bytes spill loads");
            }
        } else if body.starts_with("Used") {
            if let Some(i) = current {
                let k = &mut out[i];
                k.registers = number_before(body, "registers").map(|v| v as u32);
                k.barriers = number_before(body, "barriers").map(|v| v as u32);
                // smem is "N bytes smem"; older ptxas writes "N+M bytes smem".
                k.shared_bytes = sum_before(body, "bytes smem").or(Some(0));
                if body.contains("bytes lmem") {
                    k.private_bytes = number_before(body, "bytes lmem");
                }
                if k.barriers.is_none() {
                    k.barriers = Some(0);
                }
            }
        }
    }
    out
}

fn entry(out: &mut Vec<KernelResources>, name: &str) -> usize {
    if let Some(i) = out.iter().position(|k| k.name == name) {
        return i;
    }
    out.push(KernelResources {
        name: name.to_string(),
        ..Default::default()
    });
    out.len() - 1
}

fn quoted(s: &str) -> Option<String> {
    let start = s.find('\'')? + 1;
    let end = s[start..].find('\'')? + start;
    Some(s[start..end].to_string())
}

/// The integer directly before `unit` in `s`: "30 registers" -> 30.
fn number_before(s: &str, unit: &str) -> Option<u64> {
    let pos = s.find(unit)?;
    let head = s[..pos].trim_end();
    let token = head.rsplit([' ', ',']).next()?;
    token.parse().ok()
}

/// Like `number_before` but accepts "a+b".
fn sum_before(s: &str, unit: &str) -> Option<u64> {
    let pos = s.find(unit)?;
    let head = s[..pos].trim_end();
    let token = head.rsplit([' ', ',']).next()?;
    token
        .split('+')
        .map(|t| t.parse::<u64>().ok())
        .sum::<Option<u64>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC_LOG: &str = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
ptxas info    : Function properties for k\n\
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 30 registers, used 1 barriers, 8196 bytes smem\n\
ptxas info    : Compile time = 10.455 ms\n";

    #[test]
    fn parses_the_documented_example() {
        let k = parse_ptxas_log(DOC_LOG);
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].name, "k");
        assert_eq!(k[0].registers, Some(30));
        assert_eq!(k[0].barriers, Some(1));
        assert_eq!(k[0].shared_bytes, Some(8196));
        assert_eq!(k[0].stack_frame_bytes, Some(0));
        assert_eq!(k[0].spill_stores_bytes, Some(0));
        assert_eq!(k[0].spill_loads_bytes, Some(0));
    }

    #[test]
    fn parses_spills_and_several_kernels() {
        let log = "ptxas info    : Compiling entry function 'a' for 'sm_90'\n\
ptxas info    : Function properties for a\n\
    40 bytes stack frame, 36 bytes spill stores, 44 bytes spill loads\n\
ptxas info    : Used 32 registers, 376 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'b' for 'sm_90'\n\
ptxas info    : Function properties for b\n\
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 8 registers, used 0 barriers, 1024+0 bytes smem, 380 bytes cmem[0]\n";
        let k = parse_ptxas_log(log);
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].name, "a");
        assert_eq!(k[0].registers, Some(32));
        assert_eq!(k[0].shared_bytes, Some(0));
        assert_eq!(k[0].stack_frame_bytes, Some(40));
        assert_eq!(k[0].spill_stores_bytes, Some(36));
        assert_eq!(k[0].spill_loads_bytes, Some(44));
        assert_eq!(k[1].shared_bytes, Some(1024));
        assert_eq!(k[1].registers, Some(8));
    }

    #[test]
    fn parses_the_jit_log_prefix() {
        let log = "info    : 0 bytes gmem\ninfo    : Function properties for myGEMM6\n    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\ninfo    : Used 64 registers, used 1 barriers, 17412 bytes smem\n";
        let k = parse_ptxas_log(log);
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].name, "myGEMM6");
        assert_eq!(k[0].registers, Some(64));
        assert_eq!(k[0].spill_stores_bytes, Some(4));
    }

    #[test]
    fn empty_log_gives_nothing_not_zero() {
        assert!(parse_ptxas_log("build succeeded\n").is_empty());
    }
}
