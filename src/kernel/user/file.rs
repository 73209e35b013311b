//! The spec file as written: TOML read with serde, every table closed to unknown
//! fields, every expression kept with its position so that an error can name the
//! line. `model` turns this into a checked `UserKernel`.

use serde::Deserialize;
use toml::Spanned;

/// A number where an expression may also stand: `len = 1024` or `len = "n * 4"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ExprText {
    Int(i64),
    Float(f64),
    Text(String),
}

impl ExprText {
    pub fn text(&self) -> String {
        match self {
            ExprText::Int(v) => v.to_string(),
            ExprText::Float(v) => format!("{v:?}"),
            ExprText::Text(s) => s.clone(),
        }
    }
}

pub type SExpr = Spanned<ExprText>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Short name on the command line and in results.
    pub id: Spanned<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub sources: Spanned<Sources>,
    /// Problem dimensions and their defaults: `n = 1048576`.
    #[serde(default)]
    pub dims: Option<Spanned<toml::Table>>,
    /// Values computed from dimensions and parameters, in the order written.
    #[serde(default)]
    pub derived: Vec<Spanned<Derived>>,
    #[serde(default)]
    pub params: Vec<Spanned<Param>>,
    #[serde(default)]
    pub constraints: Vec<Spanned<Constraint>>,
    pub args: Vec<Spanned<Arg>>,
    pub launches: Vec<Spanned<Launch>>,
    #[serde(default)]
    pub work: Option<Spanned<Work>>,
    pub check: Spanned<Check>,
    /// What the kernel needs of a device; elsewhere it is not applicable.
    #[serde(default)]
    pub requires: Option<Spanned<Requires>>,
}

/// `[requires]`: a device vendor (a word of its vendor, name or platform, e.g.
/// "nvidia") and a least compute capability ("8.0"), for kernels written for
/// one kind of GPU (inline PTX, tensor cores).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    #[serde(default)]
    pub vendor: Option<String>,
    #[serde(default)]
    pub compute_capability: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    /// OpenCL C source, relative to the spec file.
    #[serde(default)]
    pub opencl: Option<Spanned<String>>,
    /// CUDA C++ source (kernels `extern "C"`), relative to the spec file.
    #[serde(default)]
    pub cuda: Option<Spanned<String>>,
    /// A prelude put before the OpenCL source.
    #[serde(default)]
    pub opencl_prelude: Option<Spanned<String>>,
    /// A prelude put before the CUDA source.
    #[serde(default)]
    pub cuda_prelude: Option<Spanned<String>>,
    /// A prelude shared by both (after the language's own prelude).
    #[serde(default)]
    pub prelude: Option<Spanned<String>>,
    /// The entry point launches use when they name none.
    #[serde(default)]
    pub entry: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Derived {
    pub name: String,
    pub value: SExpr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    pub default: i64,
    #[serde(default)]
    pub values: Vec<i64>,
    #[serde(default)]
    pub meaning: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constraint {
    /// True when the configuration is valid: `TS % WPT == 0`.
    pub holds: SExpr,
    /// What a person reads when it fails.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arg {
    pub name: String,
    /// Element type: f32, f64, i32, u32.
    #[serde(rename = "type")]
    pub elem: Spanned<String>,
    /// Buffers: the number of elements.
    #[serde(default)]
    pub len: Option<SExpr>,
    /// Buffers: in, out or inout.
    #[serde(default)]
    pub access: Option<Spanned<String>>,
    /// Buffers: how inputs are filled.
    #[serde(default)]
    pub fill: Option<Spanned<Fill>>,
    /// Scalars: the value.
    #[serde(default)]
    pub value: Option<SExpr>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Fill {
    /// "random" (in [-1, 1)), "zeros", "ramp" (0, 1, 2, ...)
    Word(String),
    Table(FillTable),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FillTable {
    /// Uniform in [lo, hi): integers in [lo, hi] for integer buffers.
    #[serde(default)]
    pub random: Option<[f64; 2]>,
    #[serde(default)]
    pub constant: Option<f64>,
    /// start, step
    #[serde(default)]
    pub ramp: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    #[serde(default)]
    pub entry: Option<String>,
    /// Work-items per dimension (1 to 3 expressions).
    pub global: Vec<SExpr>,
    /// Work-group (CUDA block) size per dimension.
    pub local: Vec<SExpr>,
    /// Arguments by name, in the kernel's order; default: every argument in the spec's order.
    #[serde(default)]
    pub args: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Work {
    #[serde(default)]
    pub flops: Option<SExpr>,
    #[serde(default)]
    pub bytes: Option<SExpr>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// What the outputs are compared with: "defaults" (this kernel at its default
    /// parameters), "launches" (the `[[check.launches]]`, e.g. a naive entry point of
    /// the same source), "spec" (the spec file `spec`, at its defaults on the same
    /// inputs) or "toolchains" (the first toolchain's run at the defaults).
    pub reference: Spanned<String>,
    #[serde(default)]
    pub spec: Option<Spanned<String>>,
    #[serde(default)]
    pub launches: Vec<Spanned<Launch>>,
    #[serde(default)]
    pub exact: bool,
    #[serde(default)]
    pub abs: Option<f64>,
    #[serde(default)]
    pub rel: Option<f64>,
    #[serde(default)]
    pub ulp: Option<u64>,
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
