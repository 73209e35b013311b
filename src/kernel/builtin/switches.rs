//! Source switches: everything gemmlab can change in a published kernel's text.
//!
//! A kernel's default configuration IS the published kernel. Each switch is one
//! named difference from it (an attribute, a qualifier, one unroll pragma on one
//! named loop, or one of the published build's own `#ifdef` options), declared in
//! both twins with the published state as its default. A finding can therefore
//! always say "published kernel" or "published kernel + SWITCH=value".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backend::{Language, Toolchain};

/// A switch that some kernels have.
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    pub name: &'static str,
    /// What turning it on does to the source.
    pub meaning: &'static str,
    /// On OpenCL, the "on" state is written in NVIDIA inline PTX.
    pub opencl_needs_nvidia: bool,
    /// Turned away from its published state, the result falls below the call's
    /// precision: searches leave it alone unless it is named, the routine never.
    pub lowers_precision: bool,
}

pub const USE_BOUNDS: Switch = Switch {
    name: "USE_BOUNDS",
    meaning: "reqd_work_group_size (OpenCL) / __launch_bounds__ (CUDA) on the kernel",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const USE_RESTRICT: Switch = Switch {
    name: "USE_RESTRICT",
    meaning: "restrict (OpenCL) / __restrict__ (CUDA) on the A and B operands",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const UNROLL_K: Switch = Switch {
    name: "UNROLL_K",
    meaning: "#pragma unroll on the loop over k inside a tile (kernel 1: over all of K)",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const UNROLL_WPT: Switch = Switch {
    name: "UNROLL_WPT",
    meaning: "#pragma unroll on the loops over a work-item's several elements (w, l)",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const VOLATILE_IDX: Switch = Switch {
    name: "VOLATILE_IDX",
    meaning: "volatile on the tile-load index (the tutorial's kernel 6 trick against hoisted index registers)",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const USE_LDG: Switch = Switch {
    name: "USE_LDG",
    meaning: "tile loads through the read-only data cache (CUDA __ldg; OpenCL: NVIDIA inline PTX ld.global.nc)",
    opencl_needs_nvidia: true,
    lowers_precision: false,
};
pub const USE_SHUFFLE: Switch = Switch {
    name: "USE_SHUFFLE",
    meaning: "B values shared through warp shuffles (CUDA __shfl_sync; OpenCL: NVIDIA inline PTX shfl.sync)",
    opencl_needs_nvidia: true,
    lowers_precision: false,
};

pub const VEC_LOADS: Switch = Switch {
    name: "VEC_LOADS",
    meaning: "128-bit (float4) global loads, local-memory loads and stores of C (off: the same accesses one float at a time)",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const ASYNC_COPY: Switch = Switch {
    name: "ASYNC_COPY",
    meaning: "tile copies global -> local memory with cp.async, not through registers (CUDA inline PTX; OpenCL: NVIDIA inline PTX)",
    opencl_needs_nvidia: true,
    lowers_precision: false,
};
pub const CP_CA: Switch = Switch {
    name: "CP_CA",
    meaning: "16-byte cp.async tile copies through L1 (cp.async.ca) instead of L2 only (.cg); NVIDIA's OpenCL runtime serves .cg copies at under half the CUDA driver's rate, .ca at the same (results/h200/tc/cp-ca)",
    opencl_needs_nvidia: true,
    lowers_precision: false,
};
pub const ASYNC_ALONG_K: Switch = Switch {
    name: "ASYNC_ALONG_K",
    meaning: "with ASYNC_COPY, an operand read along K is copied by cp.async too, 4 bytes at a time into its transposed place in the local tile (a warp's lanes take 8 K of 4 columns), not loaded through registers",
    opencl_needs_nvidia: true,
    lowers_precision: false,
};
pub const KTILE_B: Switch = Switch {
    name: "KTILE_B",
    meaning: "B read along K (KMAJOR_B) keeps K contiguous in its local tile: copied 16 bytes at a time (by cp.async with ASYNC_COPY) and read by the compute 4 K of a column at a time, so it is neither transposed nor packed",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const SMEM_PAD: Switch = Switch {
    name: "SMEM_PAD",
    meaning: "local-memory tile rows padded by 4 floats (against bank conflicts)",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const KMAJOR_RUNS: Switch = Switch {
    name: "KMAJOR_RUNS",
    meaning: "an operand read along K is loaded with each column's K run across consecutive work-items (coalesced loads, bank conflicts in the transposed stores), not one chunk of each of 32 columns",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};
pub const RASTER: Switch = Switch {
    name: "RASTER",
    meaning: "work-groups visit the tiles of C in groups of GROUP tile rows (swizzled block order, for L2 reuse), not row by row",
    opencl_needs_nvidia: false,
    lowers_precision: false,
};

pub const TF32_SINGLE: Switch = Switch {
    name: "TF32_SINGLE",
    meaning: "one TF32 product per step (1xTF32: operands rounded to 11 significant bits, LOWER precision than FP32) instead of the three of 3xTF32",
    opencl_needs_nvidia: true,
    lowers_precision: true,
};

pub const PROMOTE_ACC: Switch = Switch {
    name: "PROMOTE_ACC",
    meaning: "each k8 step's TF32 products summed from zero by the tensor core, then added to FP32 accumulators with an IEEE add (off: the tensor core accumulates over all of K)",
    opencl_needs_nvidia: true,
    lowers_precision: true,
};

/// Every switch, in the order sweeps and tables show them.
pub const ALL: &[Switch] = &[
    USE_BOUNDS,
    USE_RESTRICT,
    UNROLL_K,
    UNROLL_WPT,
    VOLATILE_IDX,
    USE_LDG,
    USE_SHUFFLE,
    VEC_LOADS,
    ASYNC_COPY,
    CP_CA,
    ASYNC_ALONG_K,
    KTILE_B,
    SMEM_PAD,
    KMAJOR_RUNS,
    RASTER,
    TF32_SINGLE,
    PROMOTE_ACC,
];

pub fn find(name: &str) -> Option<&'static Switch> {
    ALL.iter().find(|s| s.name == name)
}

/// A switch a kernel has, with the state its published OpenCL and CUDA builds had.
/// The two differ only where the published build did (`USE_LDG`: the tutorial's
/// CUDA build defined it, its OpenCL build could not).
#[derive(Debug, Clone, Copy)]
pub struct SwitchUse {
    pub switch: Switch,
    pub published_opencl: bool,
    pub published_cuda: bool,
}

impl SwitchUse {
    pub const fn off(switch: Switch) -> SwitchUse {
        SwitchUse {
            switch,
            published_opencl: false,
            published_cuda: false,
        }
    }

    pub const fn on(switch: Switch) -> SwitchUse {
        SwitchUse {
            switch,
            published_opencl: true,
            published_cuda: true,
        }
    }

    pub const fn cuda_only(switch: Switch) -> SwitchUse {
        SwitchUse {
            switch,
            published_opencl: false,
            published_cuda: true,
        }
    }

    /// The published state in the source `toolchain` compiles: a switch belongs
    /// to a source, so both compilers of a language start from the same state.
    pub fn published(&self, toolchain: Toolchain) -> bool {
        match toolchain.language() {
            Language::OpenClC => self.published_opencl,
            Language::CudaCpp => self.published_cuda,
        }
    }

    pub fn name(&self) -> &'static str {
        self.switch.name
    }
}

/// What a measurement changes from the published kernel: switches set away from
/// (or explicitly to) their published state, fast math, a register cap. The
/// default is the published kernel built with no extra flags.
/// Files written before the switches existed recorded other fields (our old
/// defaults were not the published kernels); they are refused, not misread.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hints {
    /// Switches set by the user; a switch absent here keeps its published state.
    #[serde(default)]
    pub switches: BTreeMap<String, bool>,
    #[serde(default)]
    pub fast_math: bool,
    #[serde(default)]
    pub max_registers: Option<u32>,
    /// The shared-memory carveout preference (percent of the unified L1/shared
    /// memory) the CUDA driver is asked for at each timed launch: a runtime
    /// factor `sweep jit --carveout` tries on the same binary. NVIDIA's OpenCL has
    /// no such control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carveout: Option<u32>,
}

impl Hints {
    /// Reads the switches out of a define list (`UNROLL_K=1`); other names are parameters.
    pub fn from_defines(defines: &[(String, i64)], max_registers: Option<u32>) -> Hints {
        let switches = defines
            .iter()
            .filter(|(n, _)| find(n).is_some())
            .map(|(n, v)| (n.clone(), *v != 0))
            .collect();
        Hints {
            switches,
            fast_math: false,
            max_registers,
            carveout: None,
        }
    }

    pub fn with_switch(&self, name: &str, on: bool) -> Hints {
        let mut h = self.clone();
        h.switches.insert(name.to_string(), on);
        h
    }

    pub fn switch(&self, name: &str) -> Option<bool> {
        self.switches.get(name).copied()
    }

    /// The published kernel with no extra compiler flags?
    pub fn is_published(&self) -> bool {
        self.switches.is_empty() && !self.fast_math && self.max_registers.is_none()
    }

    /// "published", or "published + UNROLL_K=1, fast math"; register caps are
    /// shown by the register sweep's own columns, so only when `with_cap`.
    pub fn describe(&self, with_cap: bool) -> String {
        self.describe_from("published", with_cap)
    }

    /// A configuration with these hints: its parameters, then what the hints
    /// change of the unchanged kernel `base` ("ITEMS=16 defaults + maxrregcount=32");
    /// a kernel without parameters is named by its hints alone ("defaults").
    pub fn describe_with(&self, config: &super::Config, base: &str) -> String {
        let (c, h) = (config.describe(), self.describe_from(base, true));
        match (c.is_empty(), h == base) {
            (true, _) => h,
            (false, true) => c,
            (false, false) => format!("{c} {h}"),
        }
    }

    /// As [`Hints::describe`], naming the unchanged kernel `base`: a user's
    /// kernel is not published, its unchanged form is its "defaults".
    pub fn describe_from(&self, base: &str, with_cap: bool) -> String {
        let mut parts: Vec<String> = self
            .switches
            .iter()
            .map(|(n, v)| format!("{n}={}", u8::from(*v)))
            .collect();
        if self.fast_math {
            parts.push("fast math".into());
        }
        if let (true, Some(c)) = (with_cap, self.max_registers) {
            parts.push(format!("maxrregcount={c}"));
        }
        if let Some(c) = self.carveout {
            parts.push(format!("carveout {c}%"));
        }
        if parts.is_empty() {
            base.into()
        } else {
            format!("{base} + {}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_become_switches_and_the_rest_stays_parameters() {
        let d = vec![
            ("UNROLL_K".to_string(), 1),
            ("TSM".to_string(), 64),
            ("USE_LDG".to_string(), 0),
        ];
        let h = Hints::from_defines(&d, Some(64));
        assert_eq!(h.switch("UNROLL_K"), Some(true));
        assert_eq!(h.switch("USE_LDG"), Some(false));
        assert_eq!(h.switch("TSM"), None);
        assert_eq!(h.max_registers, Some(64));
        assert_eq!(
            h.describe(true),
            "published + UNROLL_K=1, USE_LDG=0, maxrregcount=64"
        );
        assert_eq!(Hints::default().describe(true), "published");
        assert!(Hints::default().is_published());
    }

    #[test]
    fn hints_of_the_old_format_are_refused_not_misread() {
        let old = r#"{"launch_bounds":true,"unroll":true,"volatile_index":false,"fast_math":false,"max_registers":null}"#;
        assert!(serde_json::from_str::<Hints>(old).is_err());
    }
}
