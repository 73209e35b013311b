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

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::nvrtc::{cache, Arch};
use super::KernelResources;

/// A standalone ptxas of one CUDA release, from gemmlab's cache
/// (`scripts/nvrtc/fetch.sh --with-ptxas`): the assembler of the clang
/// toolchains and of the atlas's OpenCL rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ptxas {
    pub path: PathBuf,
    /// "11.8": the CUDA release it belongs to.
    pub release: String,
    /// The architectures it assembles for (those of the NVRTC of its release).
    pub archs: Vec<u32>,
}

/// What ptxas made of one PTX listing for one architecture.
#[derive(Debug, Clone)]
pub struct Assembled {
    pub cubin: Vec<u8>,
    /// Its `-v` report (stdout and stderr).
    pub log: String,
    /// The flags exactly as given.
    pub flags: Vec<String>,
    /// What was changed in the PTX to make it assemble (a lowered `.version`).
    pub notes: Vec<String>,
}

impl Ptxas {
    /// Every ptxas in the cache, oldest release first.
    pub fn cached() -> Vec<Ptxas> {
        cache::cached()
            .into_iter()
            .filter_map(|c| {
                let path = c.ptxas.clone()?;
                let nvrtc = c.open().ok()?;
                let (major, minor) = nvrtc.version();
                Some(Ptxas {
                    path,
                    release: format!("{major}.{minor}"),
                    archs: nvrtc.supported_archs()?.to_vec(),
                })
            })
            .collect()
    }

    /// The cached ptxas for `arch`: of release `wanted` ("11.8", "13") where
    /// given, else the newest that assembles for it. `Err` says what is cached.
    pub fn for_arch(arch: &Arch, wanted: Option<&str>) -> std::result::Result<Ptxas, String> {
        let all = Ptxas::cached();
        let fits = |p: &&Ptxas| {
            p.archs.contains(&arch.number)
                && wanted.is_none_or(|w| p.release == w || p.release.starts_with(&format!("{w}.")))
        };
        if let Some(p) = all.iter().rev().find(fits) {
            return Ok(p.clone());
        }
        let have: Vec<String> = all.iter().map(|p| format!("ptxas {}", p.release)).collect();
        Err(format!(
            "no cached ptxas{} assembles for {arch} (cached: {}); fetch one with scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas",
            wanted.map(|w| format!(" {w}")).unwrap_or_default(),
            if have.is_empty() { "none".to_string() } else { have.join(", ") }
        ))
    }

    pub fn label(&self) -> String {
        format!("ptxas {}", self.release)
    }

    /// Why this ptxas cannot take PTX whose `.target` is `target`, where it is
    /// an architecture-specific variant older releases do not know (sm_90a came
    /// with CUDA 12.0, sm_100a and sm_120a with 12.8).
    pub fn refuses_target(&self, target: &str) -> Option<String> {
        let since = match target {
            "sm_90a" => (12, 0),
            t if t.ends_with('a') && t.starts_with("sm_1") => (12, 8),
            _ => return None,
        };
        let mut v = self
            .release
            .split('.')
            .map(|x| x.parse::<u32>().unwrap_or(0));
        let have = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        (have < since).then(|| {
            format!(
                "{} predates {target} (its PTX needs ptxas {}.{} or newer)",
                self.label(),
                since.0,
                since.1
            )
        })
    }

    /// Assembles `ptx` for `arch` with `ptxas -v` (and `-maxrregcount` for a
    /// cap), lowering the PTX `.version` once if ptxas asks for an older one and
    /// setting `.target` to `arch`; each change is a note. `Err` is ptxas's reason.
    pub fn assemble(
        &self,
        ptx: &str,
        arch: &Arch,
        max_registers: Option<u32>,
    ) -> std::result::Result<Assembled, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!("gemmlab-ptxas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let stem = dir.join(format!(
            "{}-{}",
            arch.name(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let (input, output) = (stem.with_extension("ptx"), stem.with_extension("cubin"));
        // An architecture-specific target of this architecture (sm_90a) is kept,
        // and ptxas must be told that variant.
        let variant = format!("{}a", arch.name());
        let specific = ptx.lines().any(|l| {
            let t = l.trim_start().strip_prefix(".target ").unwrap_or("");
            t.split(',').next().map(str::trim) == Some(variant.as_str())
        });
        let gpu = if specific { variant } else { arch.name() };
        let mut flags = vec!["-v".to_string(), format!("--gpu-name={gpu}")];
        if let Some(r) = max_registers {
            flags.push(format!("--maxrregcount={r}"));
        }
        let mut isa: Option<String> = None;
        let result = loop {
            let (text, notes) = adapt(ptx, arch, isa.as_deref());
            if let Err(e) = std::fs::write(&input, &text) {
                break Err(format!("{}: {e}", input.display()));
            }
            let run = match Command::new(&self.path)
                .args(&flags)
                .arg("-o")
                .arg(&output)
                .arg(&input)
                .output()
            {
                Ok(r) => r,
                Err(e) => break Err(format!("{}: {e}", self.path.display())),
            };
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            );
            if run.status.success() {
                break std::fs::read(&output)
                    .map(|cubin| Assembled {
                        cubin,
                        log,
                        flags: flags.clone(),
                        notes,
                    })
                    .map_err(|e| format!("{}: {e}", output.display()));
            }
            match supported_isa(&log) {
                Some(v) if isa.is_none() => isa = Some(v),
                _ => {
                    let changed = if notes.is_empty() {
                        String::new()
                    } else {
                        format!(" (after {})", notes.join(", "))
                    };
                    break Err(format!("{}{changed}:\n{}", self.label(), log.trim_end()));
                }
            }
        };
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_file(&output);
        result
    }
}

/// `ptx` with its `.version` set to `isa` (when given) and its `.target`
/// architecture set to `arch`, and a note per change.
pub fn adapt(ptx: &str, arch: &Arch, isa: Option<&str>) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.lines() {
        let t = line.trim_start();
        if let (Some(old), Some(new)) = (t.strip_prefix(".version "), isa) {
            let old = old.trim();
            if old != new {
                notes.push(format!(".version {old} -> {new}"));
                out.push_str(&format!(".version {new}\n"));
                continue;
            }
        }
        if let Some(rest) = t.strip_prefix(".target ") {
            let (old, tail) = match rest.split_once(',') {
                Some((a, b)) => (a.trim(), format!(",{b}")),
                None => (rest.trim(), String::new()),
            };
            // An architecture-specific target of the same architecture (sm_90a:
            // wgmma, setmaxnreg) stays: the PTX uses what only that variant has.
            let new = match old.strip_suffix('a') == Some(arch.name().as_str()) {
                true => old.to_string(),
                false => arch.name(),
            };
            if old != new {
                notes.push(format!(".target {old} -> {new}"));
            }
            out.push_str(&format!(".target {new}{tail}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, notes)
}

/// The PTX ISA version ptxas says it supports when it refuses a newer one:
/// "Unsupported .version 9.0; current version is '7.8'" -> "7.8".
pub fn supported_isa(log: &str) -> Option<String> {
    let rest = log.split("current version is '").nth(1)?;
    let v = rest.split('\'').next()?;
    (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_string())
}

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

    const PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_90, texmode_independent\n.address_size 64\n\n.entry k(\n)\n{\nret;\n}\n";

    #[test]
    fn adapt_changes_version_and_target_and_says_so() {
        let arch = Arch::parse("sm_35").unwrap();
        let (text, notes) = adapt(PTX, &arch, Some("7.8"));
        assert!(text.contains("\n.version 7.8\n"), "{text}");
        assert!(
            text.contains("\n.target sm_35, texmode_independent\n"),
            "{text}"
        );
        assert!(text.contains(".entry k("));
        assert_eq!(notes, vec![".version 9.0 -> 7.8", ".target sm_90 -> sm_35"]);
        // Same version and target: nothing to note, text unchanged in substance.
        let arch90 = Arch::parse("sm_90").unwrap();
        let (same, none) = adapt(PTX, &arch90, None);
        assert!(none.is_empty());
        assert_eq!(same.trim_end(), PTX.trim_end());
        // sm_90a (wgmma) stays sm_90a for sm_90; an older ptxas says it cannot take it.
        let wg = PTX.replace(".target sm_90,", ".target sm_90a,");
        let (kept, none) = adapt(&wg, &arch90, None);
        assert!(
            none.is_empty() && kept.contains(".target sm_90a,"),
            "{kept}"
        );
        let old = |release: &str| Ptxas {
            path: "ptxas".into(),
            release: release.into(),
            archs: vec![90],
        };
        let why = old("11.8").refuses_target("sm_90a").unwrap();
        assert!(why.contains("ptxas 11.8") && why.contains("12.0"), "{why}");
        assert_eq!(old("13.5").refuses_target("sm_90a"), None);
        assert_eq!(old("11.8").refuses_target("sm_90"), None);
    }

    #[test]
    fn the_supported_isa_is_read_from_ptxas_refusal() {
        let log = "ptxas fatal   : Unsupported .version 9.0; current version is '7.8'\n";
        assert_eq!(supported_isa(log).as_deref(), Some("7.8"));
        assert_eq!(supported_isa("ptxas fatal : something else"), None);
        assert_eq!(supported_isa("current version is 'x; rm'"), None);
    }

    #[test]
    fn empty_log_gives_nothing_not_zero() {
        assert!(parse_ptxas_log("build succeeded\n").is_empty());
    }
}
