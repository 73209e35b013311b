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
