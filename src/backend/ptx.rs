//! PTX analysis: an instruction-mix count and a readable diff of two listings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Static instruction counts of a PTX listing (instructions as written, not executed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxMix {
    /// fma / mad on floats (fma.rn.f32, mad.f32, ...).
    pub fma: u32,
    /// Other float arithmetic (add, mul, sub on .f32/.f64).
    pub float_other: u32,
    /// Global loads by access width in bits (32, 64, 128).
    pub ld_global: BTreeMap<u32, u32>,
    pub st_global: u32,
    pub ld_shared: u32,
    pub st_shared: u32,
    /// Thread-private local memory (spills, indexed arrays).
    pub ld_local: u32,
    pub st_local: u32,
    /// bar.sync / barrier.sync.
    pub barriers: u32,
    /// shfl.sync.
    pub shuffles: u32,
    pub moves: u32,
    pub conversions: u32,
    /// setp.* compares and bra branches.
    pub compares: u32,
    pub branches: u32,
    /// Integer arithmetic (add/mul/mad/shl/... on integer types).
    pub integer: u32,
    /// Tensor-core matrix products (mma.sync, wmma.mma).
    #[serde(default)]
    pub mma: u32,
    /// Asynchronous global -> shared copies (cp.async.*, commits and waits included).
    #[serde(default)]
    pub cp_async: u32,
    /// ldmatrix (warp-wide shared-memory fragment loads).
    #[serde(default)]
    pub ldmatrix: u32,
    pub total: u32,
}

impl PtxMix {
    pub fn ld_global_total(&self) -> u32 {
        self.ld_global.values().sum()
    }
}

fn bits_of(ty: &str) -> Option<u32> {
    let t = ty.trim_start_matches(['b', 'f', 'u', 's']);
    t.parse().ok()
}

/// Access width of a load: vector count times element bits (ld.global.v4.f32 -> 128).
fn access_bits(parts: &[&str]) -> u32 {
    let mut lanes = 1;
    let mut elem = 32;
    for p in parts {
        if let Some(v) = p.strip_prefix('v') {
            if let Ok(n) = v.parse::<u32>() {
                lanes = n;
                continue;
            }
        }
        if let Some(b) = bits_of(p) {
            if p.starts_with(['b', 'f', 'u', 's']) {
                elem = b;
            }
        }
    }
    lanes * elem
}

/// Counts instructions by kind. Directives, labels, declarations and comments are not instructions.
pub fn instruction_mix(ptx: &str) -> PtxMix {
    let mut m = PtxMix::default();
    for raw in ptx.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with(['.', '{', '}', '(', ')']) || line.ends_with(':') {
            continue;
        }
        // Strip a predicate guard ("@%p1 bra ...").
        let line = if line.starts_with('@') {
            line.split_once(char::is_whitespace)
                .map_or("", |(_, r)| r.trim())
        } else {
            line
        };
        let opcode = line.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        if opcode.is_empty() {
            continue;
        }
        let parts: Vec<&str> = opcode.split('.').collect();
        let base = parts[0];
        m.total += 1;
        let is_float = parts
            .iter()
            .any(|p| *p == "f32" || *p == "f64" || *p == "f16");
        let has = |s: &str| parts.contains(&s);
        match base {
            "fma" | "mad" if is_float => m.fma += 1,
            "add" | "sub" | "mul" | "div" | "neg" | "abs" | "min" | "max" | "rcp" | "sqrt"
                if is_float =>
            {
                m.float_other += 1
            }
            "ld" | "ldu" if has("global") => {
                *m.ld_global.entry(access_bits(&parts[1..])).or_insert(0) += 1
            }
            "ld" if has("shared") => m.ld_shared += 1,
            "ld" if has("local") => m.ld_local += 1,
            "st" if has("global") => m.st_global += 1,
            "st" if has("shared") => m.st_shared += 1,
            "st" if has("local") => m.st_local += 1,
            "mma" | "wmma" if has("mma") || base == "mma" => m.mma += 1,
            "cp" if has("async") => m.cp_async += 1,
            "ldmatrix" => m.ldmatrix += 1,
            "bar" | "barrier" => m.barriers += 1,
            "shfl" => m.shuffles += 1,
            "mov" => m.moves += 1,
            "cvt" | "cvta" => m.conversions += 1,
            "setp" | "set" | "selp" => m.compares += 1,
            "bra" | "brx" => m.branches += 1,
            "add" | "sub" | "mul" | "mad" | "shl" | "shr" | "and" | "or" | "xor" | "not"
            | "div" | "rem" | "min" | "max" | "neg" => m.integer += 1,
            _ => {}
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_tensor_core_instructions() {
        let ptx = "
            cp.async.cg.shared.global [%r1], [%rd1], 16;
            cp.async.commit_group;
            cp.async.wait_group 0;
            mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};
            @%p1 mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%fd1,%fd2,%fd3,%fd4}, {%fd5,%fd6,%fd7,%fd8}, {%fd9,%fd10}, {%fd1,%fd2,%fd3,%fd4};
            ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2,%r3,%r4}, [%r5];
            cvt.rna.tf32.f32 %r7, %f9;
        ";
        let m = instruction_mix(ptx);
        assert_eq!((m.mma, m.cp_async, m.ldmatrix, m.conversions), (2, 3, 1, 1));
        assert_eq!(m.total, 7);
    }

    #[test]
    fn counts_a_small_listing() {
        let ptx = "
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .f32 %f<4>;
$L__BB0_1:
\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
\tld.global.f32 %f1, [%rd2];   // scalar
\tld.shared.f32 %f2, [%r1];
\tst.shared.f32 [%r1], %f2;
\tfma.rn.f32 %f3, %f1, %f2, %f3;
\tmad.lo.s32 %r2, %r1, 4, %r3;
\tbar.sync 0;
\tsetp.lt.s32 %p1, %r1, 16;
\t@%p1 bra $L__BB0_1;
\tmov.u32 %r4, %tid.x;
\tcvt.rn.f32.s32 %f4, %r4;
\tshfl.sync.idx.b32 %r5, %r4, 1, 31, -1;
\tst.global.f32 [%rd3], %f3;
\tret;
}
";
        let m = instruction_mix(ptx);
        assert_eq!(m.ld_global.get(&128), Some(&1));
        assert_eq!(m.ld_global.get(&32), Some(&1));
        assert_eq!(m.ld_shared, 1);
        assert_eq!(m.st_shared, 1);
        assert_eq!(m.fma, 1);
        assert_eq!(m.integer, 1);
        assert_eq!(m.barriers, 1);
        assert_eq!((m.compares, m.branches), (1, 1));
        assert_eq!((m.moves, m.conversions, m.shuffles), (1, 1, 1));
        assert_eq!(m.st_global, 1);
        assert_eq!(m.total, 14);
    }
}

/// PTX with what differs between any two compilations of the same code removed:
/// comments, debug directives, blank lines, register and label numbering.
pub fn normalize(ptx: &str) -> String {
    let mut out = String::new();
    for raw in ptx.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty()
            || line.starts_with(".loc")
            || line.starts_with(".file")
            || line.starts_with("//")
        {
            continue;
        }
        let mut s = String::with_capacity(line.len());
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            s.push(c);
            // %r12 -> %r, %rd3 -> %rd, $L__BB0_7 -> $L__BB: drop digits that number registers and labels.
            if c == '%' || c == '$' {
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphabetic() || n == '_' {
                        s.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_digit() || *n == '_')
                {
                    chars.next();
                }
            }
        }
        out.push_str(&s);
        out.push('\n');
    }
    out
}

/// Lines of the normalized listings that differ (inserted plus deleted).
pub fn changed_lines(a: &str, b: &str) -> usize {
    let (na, nb) = (normalize(a), normalize(b));
    similar::TextDiff::from_lines(&na, &nb)
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .count()
}

/// A unified diff of two normalized PTX listings.
pub fn diff(a_name: &str, a: &str, b_name: &str, b: &str, context: usize) -> String {
    let (na, nb) = (normalize(a), normalize(b));
    similar::TextDiff::from_lines(&na, &nb)
        .unified_diff()
        .context_radius(context)
        .header(a_name, b_name)
        .to_string()
}

/// The instruction mixes side by side.
pub fn mix_table(names: &[&str], mixes: &[&PtxMix]) -> String {
    let mut widths: BTreeMap<u32, ()> = BTreeMap::new();
    for m in mixes {
        for w in m.ld_global.keys() {
            widths.insert(*w, ());
        }
    }
    let mut rows: Vec<(String, Vec<u32>)> =
        vec![("fma".into(), mixes.iter().map(|m| m.fma).collect())];
    rows.push((
        "other float".into(),
        mixes.iter().map(|m| m.float_other).collect(),
    ));
    for w in widths.keys() {
        rows.push((
            format!("ld.global {w}-bit"),
            mixes
                .iter()
                .map(|m| m.ld_global.get(w).copied().unwrap_or(0))
                .collect(),
        ));
    }
    for (name, f) in [
        (
            "st.global",
            (|m: &PtxMix| m.st_global) as fn(&PtxMix) -> u32,
        ),
        ("ld.shared", |m| m.ld_shared),
        ("st.shared", |m| m.st_shared),
        ("ld.local", |m| m.ld_local),
        ("st.local", |m| m.st_local),
        ("barriers", |m| m.barriers),
        ("shuffles", |m| m.shuffles),
        ("moves", |m| m.moves),
        ("conversions", |m| m.conversions),
        ("compares", |m| m.compares),
        ("branches", |m| m.branches),
        ("integer", |m| m.integer),
        ("mma", |m| m.mma),
        ("cp.async", |m| m.cp_async),
        ("ldmatrix", |m| m.ldmatrix),
        ("total", |m| m.total),
    ] {
        rows.push((name.into(), mixes.iter().map(|m| f(m)).collect()));
    }
    let mut out = format!("{:<18}", "instruction");
    for n in names {
        out.push_str(&format!("{n:>14}"));
    }
    out.push('\n');
    for (name, vals) in rows {
        out.push_str(&format!("{name:<18}"));
        for v in vals {
            out.push_str(&format!("{v:>14}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod normalize_tests {
    use super::*;

    #[test]
    fn numbering_does_not_count_as_a_difference() {
        let a = "\tadd.s32 %r12, %r3, 1; // x\n.loc 1 2 3\n@%p1 bra $L__BB0_7;\n";
        let b = "\tadd.s32 %r40, %r9, 1;\n@%p2 bra $L__BB1_2;\n";
        assert_eq!(normalize(a), normalize(b));
        assert!(diff("a", a, "b", "\tmul.lo.s32 %r1, %r2, 3;\n", 1).contains("-add.s32 %r, %r, 1;"));
    }
}

/// The parameters of `.entry name(...)` in a PTX listing: each one's type and
/// width, and whether it is marked a pointer (`.ptr .global`); None where the
/// listing has no such entry.
pub fn entry_params(ptx: &str, entry: &str) -> Option<Vec<super::KernelParam>> {
    let at = ptx.find(&format!(".entry {entry}("))?;
    let rest = &ptx[at..];
    let open = rest.find('(')?;
    let close = rest.find(')')?;
    let list = &rest[open + 1..close];
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|p| p.starts_with(".param"))
            .map(|p| {
                let words: Vec<&str> = p.split_whitespace().collect();
                let ty = words.get(1).copied().unwrap_or("");
                let bytes = ty
                    .trim_start_matches(|c: char| c == '.' || c.is_ascii_alphabetic())
                    .parse::<usize>()
                    .ok()
                    .map(|bits| bits / 8);
                let space = if words.contains(&".ptr") {
                    [".global", ".shared", ".const", ".local"]
                        .iter()
                        .find(|s| words.contains(s))
                        .map(|s| match *s {
                            ".global" => "global",
                            ".shared" => "local",
                            ".const" => "constant",
                            _ => "private",
                        })
                } else {
                    None
                };
                super::KernelParam {
                    name: words.last().map(|s| s.to_string()),
                    space,
                    type_name: Some(ty.to_string()).filter(|t| !t.is_empty()),
                    bytes,
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod params_tests {
    use super::entry_params;

    #[test]
    fn entry_params_read_types_widths_and_pointers() {
        let ptx = "\n.visible .entry saxpy(\n\t.param .u32 saxpy_param_0,\n\t.param .f32 saxpy_param_1,\n\t.param .u64 .ptr .global .align 4 saxpy_param_2\n)\n{\n}";
        let p = entry_params(ptx, "saxpy").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].type_name.as_deref(), Some(".u32"));
        assert_eq!(p[0].bytes, Some(4));
        assert_eq!(p[1].type_name.as_deref(), Some(".f32"));
        assert_eq!(p[2].bytes, Some(8));
        assert_eq!(p[2].space, Some("global"));
        assert!(entry_params(ptx, "other").is_none());
        let none = "\n.visible .entry empty()\n{\n}";
        assert_eq!(entry_params(none, "empty").unwrap().len(), 0);
    }
}
