//! A user's kernel as gemmlab sees it once its spec file has been read and
//! checked: sources by language, parameters with their constraints, dimensions,
//! arguments, launches, units of work and the check. Everything that can be
//! checked without a size is checked when the file is read; what depends on the
//! size (lengths, geometry) is checked by `instantiate`, before any device work.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::expr::{Expr, Scope};
use super::file::{self, line_of, SExpr, SpecFile};
use crate::backend::{DeviceInfo, Elem, Geometry, Language, Toolchain};
use crate::error::{Error, Result};
use crate::kernel::builtin::Config;

/// A compile-time parameter: passed to both compilers as `-D NAME=VALUE`.
#[derive(Debug, Clone)]
pub struct UserParam {
    pub name: String,
    pub default: i64,
    /// Allowed values (the tuner's axis); empty: only the default.
    pub values: Vec<i64>,
    pub meaning: String,
}

#[derive(Debug, Clone)]
pub struct UserConstraint {
    pub holds: Expr,
    pub message: String,
    /// It reads a dimension or a derived value: checked per size, not per configuration.
    pub per_size: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fill {
    Random { lo: f64, hi: f64 },
    Constant(f64),
    Ramp { start: f64, step: f64 },
}

impl Fill {
    /// `fill = "random"` and no fill: floats uniform in [-1, 1); integers
    /// uniform over [-1000, 1000] (i32) or [0, 1000] (u32), both ends included,
    /// so that an integer kernel sees more than a few distinct values.
    pub fn random_for(elem: Elem) -> Fill {
        match elem {
            Elem::F32 | Elem::F64 => Fill::Random { lo: -1.0, hi: 1.0 },
            Elem::I32 => Fill::Random {
                lo: -1000.0,
                hi: 1000.0,
            },
            Elem::U32 => Fill::Random {
                lo: 0.0,
                hi: 1000.0,
            },
        }
    }

    /// What a buffer of `elem` gets, in words ("random integers in [0, 1000]").
    pub fn describe(self, elem: Elem) -> String {
        match self {
            Fill::Random { lo, hi } if elem.is_float() => format!("random in [{lo}, {hi})"),
            Fill::Random { lo, hi } => {
                let lo = if elem == Elem::U32 { lo.max(0.0) } else { lo };
                format!("random integers in [{}, {}]", lo.ceil(), hi.floor())
            }
            Fill::Constant(c) => format!("constant {c}"),
            Fill::Ramp { start, step } => format!("ramp from {start} by {step}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    In,
    Out,
    InOut,
    /// Work-group local memory of `len` elements: an OpenCL `__local` pointer
    /// argument, a CUDA kernel's `extern __shared__` array (its bytes at launch).
    /// Nothing is allocated, filled or checked.
    Local,
}

impl Access {
    pub fn writes(self) -> bool {
        matches!(self, Access::Out | Access::InOut)
    }
}

#[derive(Debug, Clone)]
pub enum ArgKind {
    Buffer {
        len: Expr,
        access: Access,
        fill: Fill,
    },
    Scalar {
        value: Expr,
    },
}

#[derive(Debug, Clone)]
pub struct UserArg {
    pub name: String,
    pub elem: Elem,
    pub kind: ArgKind,
    pub line: usize,
}

impl UserArg {
    pub fn is_output(&self) -> bool {
        matches!(&self.kind, ArgKind::Buffer { access, .. } if access.writes())
    }

    /// Work-group local memory (`access = "local"`), not a device buffer.
    pub fn is_local(&self) -> bool {
        matches!(
            &self.kind,
            ArgKind::Buffer {
                access: Access::Local,
                ..
            }
        )
    }
}

#[derive(Debug, Clone)]
pub struct UserLaunch {
    pub entry: String,
    pub global: Vec<Expr>,
    pub local: Vec<Expr>,
    /// Indices into the kernel's arguments, in the entry point's order.
    pub args: Vec<usize>,
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    Exact,
    /// Passes where |got - ref| <= abs + rel |ref|, or where the two are at most `ulp`
    /// units in the last place apart.
    Within {
        abs: f64,
        rel: f64,
        ulp: Option<u64>,
    },
}

impl Tolerance {
    pub fn describe(&self) -> String {
        match self {
            Tolerance::Exact => "exact".into(),
            Tolerance::Within { abs, rel, ulp } => {
                let mut parts = vec![format!("abs {abs:e}"), format!("rel {rel:e}")];
                if let Some(u) = ulp {
                    parts.push(format!("or {u} ulp"));
                }
                parts.join(", ")
            }
        }
    }
}

#[derive(Debug, Clone)]
pub enum Reference {
    /// This kernel at its default parameters.
    Defaults,
    /// The first toolchain's run of this kernel at its default parameters.
    Toolchains,
    /// Other launches of the same source (e.g. a naive entry point), default parameters.
    Launches(Vec<UserLaunch>),
    /// Another spec at its defaults, on the inputs of the same names.
    Spec(Box<UserKernel>),
}

impl Reference {
    pub fn describe(&self) -> String {
        match self {
            Reference::Defaults => "this kernel at its default parameters".into(),
            Reference::Toolchains => "the first toolchain's run at the default parameters".into(),
            Reference::Launches(l) => {
                let mut names: Vec<&str> = l.iter().map(|l| l.entry.as_str()).collect();
                names.dedup();
                format!("reference launches of {}", names.join(", "))
            }
            Reference::Spec(k) => format!("spec {} at its defaults", k.id),
        }
    }
}

#[derive(Debug, Clone)]
pub struct UserCheck {
    pub reference: Reference,
    pub tolerance: Tolerance,
}

/// One source file, its preludes put in front.
#[derive(Debug, Clone)]
pub struct UserSource {
    pub file: PathBuf,
    pub text: String,
}

/// A kernel described by a spec file.
#[derive(Debug, Clone)]
pub struct UserKernel {
    pub path: PathBuf,
    pub id: String,
    pub title: String,
    pub description: String,
    pub sources: BTreeMap<Language, UserSource>,
    /// Dimensions and their defaults, in the order written.
    pub dims: Vec<(String, i64)>,
    pub derived: Vec<(String, Expr)>,
    pub params: Vec<UserParam>,
    pub constraints: Vec<UserConstraint>,
    pub args: Vec<UserArg>,
    pub launches: Vec<UserLaunch>,
    pub flops: Option<Expr>,
    pub bytes: Option<Expr>,
    pub check: UserCheck,
    /// What a device must be for the kernel to run there (`[requires]`).
    pub requires: Requires,
    /// A hash of the spec file's text and its reference spec's: with the source,
    /// what keys a user's kernel in the tuning store and the database, so a
    /// changed launch, argument or check never reuses an old result.
    pub spec_hash: String,
}

/// `[requires]` as read: a vendor word and a least compute capability.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requires {
    pub vendor: Option<String>,
    pub compute_capability: Option<(u32, u32)>,
}

impl Requires {
    /// Why a device does not meet these, if it does not.
    pub fn unmet(&self, d: &DeviceInfo) -> Option<String> {
        if let Some(v) = &self.vendor {
            let w = v.to_ascii_lowercase();
            let seen = [&d.vendor, &d.name, &d.platform]
                .iter()
                .any(|s| s.to_ascii_lowercase().contains(&w));
            if !seen {
                return Some(format!(
                    "not applicable: the spec requires a device of vendor '{v}'; {} is {}",
                    d.name, d.vendor
                ));
            }
        }
        if let Some((ma, mi)) = self.compute_capability {
            match d.compute_capability {
                Some(cc) if cc >= (ma, mi) => {}
                Some((a, b)) => {
                    return Some(format!(
                        "not applicable: the spec requires compute capability {ma}.{mi} or later; {} has {a}.{b}",
                        d.name
                    ))
                }
                None => {
                    return Some(format!(
                        "not applicable: the spec requires compute capability {ma}.{mi} or later; {} has none",
                        d.name
                    ))
                }
            }
        }
        None
    }
}

/// A dimension point: every dimension of the kernel with its value.
pub type Dims = BTreeMap<String, i64>;

/// The kernel at one configuration and one size: everything evaluated.
#[derive(Debug, Clone)]
pub struct Instance {
    pub scope: Scope,
    /// Elements of each buffer argument (None for scalars).
    pub lens: Vec<Option<usize>>,
    /// Value of each scalar argument (None for buffers).
    pub scalars: Vec<Option<f64>>,
    pub launches: Vec<(String, Geometry, Vec<usize>)>,
    pub flops: Option<f64>,
    pub bytes: Option<f64>,
}

impl Instance {
    /// Bytes of device memory the buffers take.
    pub fn buffer_bytes(&self, kernel: &UserKernel) -> u64 {
        kernel
            .args
            .iter()
            .zip(&self.lens)
            .filter(|(a, _)| !a.is_local())
            .filter_map(|(a, n)| n.map(|n| (n * a.elem.size()) as u64))
            .sum()
    }
}

const MAX_GROUPS: u64 = 1 << 31;
/// Configurations enumerated to prove the parameter constraints satisfiable.
const SATISFIABLE_SCAN: u64 = 1 << 20;

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Reader<'_> {
    fn err(&self, offset: Option<usize>, message: impl Into<String>) -> Error {
        Error::Spec {
            path: self.path.to_path_buf(),
            line: offset.map(|o| line_of(self.text, o)),
            message: message.into(),
        }
    }

    fn expr(&self, e: &SExpr) -> Result<Expr> {
        let line = line_of(self.text, e.span().start);
        Expr::parse(&e.get_ref().text(), line).map_err(|m| self.err(Some(e.span().start), m))
    }

    fn file(&self, name: &toml::Spanned<String>) -> Result<(PathBuf, String)> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let p = dir.join(name.get_ref());
        std::fs::read_to_string(&p)
            .map(|t| (p.clone(), t))
            .map_err(|e| {
                self.err(
                    Some(name.span().start),
                    format!(
                        "cannot read {} (given as '{}'): {e}",
                        p.display(),
                        name.get_ref()
                    ),
                )
            })
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl UserKernel {
    /// Reads and checks a spec file. Errors name the file and the line.
    pub fn load(path: &Path) -> Result<UserKernel> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Spec {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot read the spec file: {e}"),
        })?;
        Self::from_toml(path, &text)
    }

    /// Reads a spec from its text; `path` names it in errors and anchors relative source paths.
    pub fn from_toml(path: &Path, text: &str) -> Result<UserKernel> {
        let r = Reader { path, text };
        let f: SpecFile = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            r.err(e.span().map(|s| s.start), msg)
        })?;
        Self::build(&r, f)
    }

    fn build(r: &Reader, f: SpecFile) -> Result<UserKernel> {
        let id = f.id.get_ref().trim().to_string();
        if id.is_empty() || id.contains(char::is_whitespace) || id.contains(',') {
            return Err(r.err(
                Some(f.id.span().start),
                format!("id '{id}': give a short name without spaces or commas"),
            ));
        }
        // Names: dimensions, then parameters, then derived values; one namespace.
        let mut names: Names = BTreeMap::new();
        let dims = read_dims(r, &f, &mut names)?;
        let params = read_params(r, &f, &mut names)?;
        let derived = read_derived(r, &f, &mut names)?;
        let constraints = read_constraints(r, &f, &names, &params)?;
        let sources = read_sources(r, &f)?;
        let (args, arg_names) = read_args(r, &f, &names)?;
        let reader = Launches {
            r,
            names: &names,
            args: &args,
            arg_names: &arg_names,
            entry: f.sources.get_ref().entry.as_deref(),
        };
        if f.launches.is_empty() {
            return Err(r.err(
                None,
                "no [[launches]]: say which entry point runs with which geometry",
            ));
        }
        let launches = f
            .launches
            .iter()
            .map(|l| reader.read(l.get_ref(), l.span().start))
            .collect::<Result<Vec<_>>>()?;
        let (flops, bytes) = read_work(r, &f, &names)?;
        let requires = read_requires(r, &f)?;
        let check = read_check(r, &f, &args, &reader)?;
        let kernel = UserKernel {
            path: r.path.to_path_buf(),
            id,
            title: f.title.clone().unwrap_or_default(),
            description: f.description.clone().unwrap_or_default(),
            sources,
            dims,
            derived,
            params,
            constraints,
            args,
            launches,
            flops,
            bytes,
            requires,
            spec_hash: crate::util::keys::fnv1a(&match &check.reference {
                Reference::Spec(other) => format!("{}\n{}", r.text, other.spec_hash),
                _ => r.text.to_string(),
            }),
            check,
        };
        kernel.check_defaults_and_satisfiable(r)?;
        Ok(kernel)
    }

    /// The defaults must satisfy every parameter constraint (they are the published
    /// kernel), and so must at least one configuration: said before compiling.
    fn check_defaults_and_satisfiable(&self, r: &Reader) -> Result<()> {
        let total: u64 = self
            .params
            .iter()
            .map(|p| p.values.len().max(1) as u64)
            .try_fold(1u64, |a, b| a.checked_mul(b))
            .unwrap_or(u64::MAX);
        if total <= SATISFIABLE_SCAN {
            let any = self
                .configs()
                .iter()
                .any(|c| self.param_violation(c).is_none());
            if !any {
                let list: Vec<String> = self
                    .constraints
                    .iter()
                    .filter(|c| !c.per_size)
                    .map(|c| format!("'{}' (line {})", c.holds.text, c.holds.line))
                    .collect();
                return Err(r.err(
                    None,
                    format!(
                        "no combination of the parameters' values satisfies the constraints {}: all {total} combinations tried",
                        list.join(", ")
                    ),
                ));
            }
        }
        let only_params: Vec<&UserConstraint> =
            self.constraints.iter().filter(|c| !c.per_size).collect();
        let defaults = self.defaults();
        for c in &only_params {
            match c.holds.truth(&defaults.0.clone().into_iter().collect()) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Error::Spec {
                        path: self.path.clone(),
                        line: Some(c.holds.line),
                        message: format!(
                            "the default parameters ({}) violate '{}': {}",
                            defaults.describe(),
                            c.holds.text,
                            c.message
                        ),
                    })
                }
                Err(m) => {
                    return Err(Error::Spec {
                        path: self.path.clone(),
                        line: Some(c.holds.line),
                        message: m,
                    })
                }
            }
        }
        Ok(())
    }

    /// The default configuration.
    pub fn defaults(&self) -> Config {
        Config(
            self.params
                .iter()
                .map(|p| (p.name.clone(), p.default))
                .collect(),
        )
    }

    /// Every combination of the parameters' values (the full space).
    pub fn configs(&self) -> Vec<Config> {
        let mut out = vec![Config::default()];
        for p in &self.params {
            let values = if p.values.is_empty() {
                vec![p.default]
            } else {
                p.values.clone()
            };
            let mut next = Vec::with_capacity(out.len() * values.len());
            for c in &out {
                for v in &values {
                    let mut c = c.clone();
                    c.0.insert(p.name.clone(), *v);
                    next.push(c);
                }
            }
            out = next;
        }
        out
    }

    /// The first parameter-only constraint `c` violates, with its message.
    pub fn param_violation(&self, c: &Config) -> Option<String> {
        let scope: Scope = c.0.clone().into_iter().collect();
        self.constraints
            .iter()
            .filter(|k| !k.per_size)
            .find_map(|k| match k.holds.truth(&scope) {
                Ok(true) => None,
                Ok(false) => Some(k.message.clone()),
                Err(e) => Some(e),
            })
    }

    /// `defines` over the defaults: unknown names and values outside a parameter's
    /// list are errors that say what is allowed; constraints are checked.
    pub fn config(&self, defines: &[(String, i64)]) -> Result<Config> {
        let mut c = self.defaults();
        for (name, value) in defines {
            let Some(p) = self.params.iter().find(|p| &p.name == name) else {
                return Err(Error::Constraint {
                    kernel: self.id.clone(),
                    message: format!(
                        "unknown parameter {name}; {} takes {}",
                        self.id,
                        if self.params.is_empty() {
                            "none".to_string()
                        } else {
                            self.params
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                    values: format!("{name}={value}"),
                });
            };
            c.0.insert(name.clone(), *value);
            if !p.values.is_empty() && !p.values.contains(value) {
                return Err(Error::Constraint {
                    kernel: self.id.clone(),
                    message: if p.meaning.is_empty() {
                        format!("{name} must be one of {:?}", p.values)
                    } else {
                        format!("{name} must be one of {:?} ({})", p.values, p.meaning)
                    },
                    values: format!("{name}={value}"),
                });
            }
        }
        if let Some(m) = self.param_violation(&c) {
            return Err(Error::Constraint {
                kernel: self.id.clone(),
                message: m,
                values: c.describe(),
            });
        }
        Ok(c)
    }

    /// The source for a toolchain, by the language it compiles.
    pub fn source(&self, toolchain: Toolchain) -> Option<&UserSource> {
        self.sources.get(&toolchain.language())
    }

    /// Why this toolchain cannot run the kernel, if it cannot: no source in its language.
    /// Why the kernel cannot run on this device through its toolchain: no
    /// source in its language, or a `[requires]` the device does not meet.
    pub fn not_applicable_on(&self, device: &DeviceInfo) -> Option<String> {
        self.not_applicable(device.toolchain)
            .or_else(|| self.requires.unmet(device))
    }

    pub fn not_applicable(&self, toolchain: Toolchain) -> Option<String> {
        self.source(toolchain).is_none().then(|| {
            format!(
                "not applicable: no source in {} (the spec gives {})",
                toolchain.language().name(),
                self.sources
                    .keys()
                    .map(|l| l.name())
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        })
    }

    /// Every dimension at `given` or its default; unknown names are an error.
    pub fn dims_at(&self, given: &Dims) -> Result<Dims> {
        for name in given.keys() {
            if !self.dims.iter().any(|(d, _)| d == name) {
                return Err(Error::invalid(format!(
                    "{}: no dimension '{name}' (its dimensions: {})",
                    self.id,
                    if self.dims.is_empty() {
                        "none".to_string()
                    } else {
                        self.dims
                            .iter()
                            .map(|(d, _)| d.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                )));
            }
        }
        Ok(self
            .dims
            .iter()
            .map(|(d, v)| (d.clone(), given.get(d).copied().unwrap_or(*v)))
            .collect())
    }

    /// This spec's dimensions at the values `dims` gives for the names the two
    /// share, its defaults elsewhere: where a reference spec runs.
    pub fn dims_shared_with(&self, dims: &Dims) -> Result<Dims> {
        let shared: Dims = (self.dims.iter())
            .filter_map(|(d, _)| dims.get(d).map(|v| (d.clone(), *v)))
            .collect();
        self.dims_at(&shared)
    }

    fn at_line(&self, line: usize, message: String) -> Error {
        Error::Spec {
            path: self.path.clone(),
            line: Some(line),
            message,
        }
    }

    /// Everything at one configuration and size: derived values, per-size
    /// constraints, buffer lengths, scalar values, launch geometry and work. Errors
    /// name the line whose expression failed.
    ///
    /// The reference's launches run at every size too, so their geometry is
    /// checked here as well: a bad one stops the run before any device work.
    pub fn instantiate(&self, config: &Config, dims: &Dims) -> Result<Instance> {
        self.reference_fits(dims)?;
        self.instantiate_launches(config, dims, &self.launches, true)
    }

    /// Whether the check's reference can run at `dims`: its launches (at the
    /// defaults), or the reference spec at the dimensions the two share.
    fn reference_fits(&self, dims: &Dims) -> Result<()> {
        match &self.check.reference {
            Reference::Launches(l) => {
                self.instantiate_launches(&self.defaults(), dims, l, false)?;
            }
            Reference::Spec(other) => {
                let at = other.dims_shared_with(dims)?;
                other.instantiate_launches(&other.defaults(), &at, &other.launches, true)?;
            }
            Reference::Defaults | Reference::Toolchains => {}
        }
        Ok(())
    }

    /// As `instantiate`, running `launches` instead of the kernel's own; the
    /// per-size constraints are checked only where `constrained` (they speak of the
    /// kernel's own launches, not of a reference entry's).
    pub fn instantiate_launches(
        &self,
        config: &Config,
        dims: &Dims,
        launches: &[UserLaunch],
        constrained: bool,
    ) -> Result<Instance> {
        let scope = self.scope_at(config, dims)?;
        if constrained {
            self.check_per_size(&scope)?;
        }
        let (lens, scalars) = (self.args.iter())
            .map(|a| self.arg_value(a, &scope))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let out = (launches.iter())
            .map(|l| {
                Ok((
                    l.entry.clone(),
                    self.launch_geometry(l, &scope)?,
                    l.args.clone(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let work = |e: &Option<Expr>, what: &str| -> Result<Option<f64>> {
            e.as_ref()
                .map(|e| {
                    e.number(&scope)
                        .map_err(|m| self.at_line(e.line, format!("work {what}: {m}")))
                })
                .transpose()
        };
        Ok(Instance {
            flops: work(&self.flops, "flops")?,
            bytes: work(&self.bytes, "bytes")?,
            scope,
            lens,
            scalars,
            launches: out,
        })
    }

    /// The names an instance's expressions see: the dimensions, the
    /// configuration's parameters and the derived values, in that order.
    fn scope_at(&self, config: &Config, dims: &Dims) -> Result<Scope> {
        let mut scope: Scope = dims.clone();
        for (k, v) in &config.0 {
            scope.insert(k.clone(), *v);
        }
        for (name, e) in &self.derived {
            let v = e
                .int(&scope)
                .map_err(|m| self.at_line(e.line, format!("derived {name}: {m}")))?;
            scope.insert(name.clone(), v);
        }
        Ok(scope)
    }

    /// The first per-size constraint `scope` violates, as an error naming the
    /// values it speaks of.
    fn check_per_size(&self, scope: &Scope) -> Result<()> {
        for c in self.constraints.iter().filter(|c| c.per_size) {
            match c.holds.truth(scope) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Error::Constraint {
                        kernel: self.id.clone(),
                        message: c.message.clone(),
                        values: c
                            .holds
                            .names()
                            .iter()
                            .filter_map(|n| scope.get(n).map(|v| format!("{n}={v}")))
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
                }
                Err(m) => return Err(self.at_line(c.holds.line, m)),
            }
        }
        Ok(())
    }

    /// Argument `a` at `scope`: its buffer length (None for a scalar) and its
    /// scalar value (None for a buffer).
    fn arg_value(&self, a: &UserArg, scope: &Scope) -> Result<(Option<usize>, Option<f64>)> {
        Ok(match &a.kind {
            ArgKind::Buffer { len, .. } => (Some(self.buffer_len(a, len, scope)?), None),
            ArgKind::Scalar { value } => (None, Some(self.scalar_value(a, value, scope)?)),
        })
    }

    /// Buffer `a`'s elements, `len` at `scope`: not negative, and not more bytes
    /// than any device holds.
    fn buffer_len(&self, a: &UserArg, len: &Expr, scope: &Scope) -> Result<usize> {
        let n = len
            .int(scope)
            .map_err(|m| self.at_line(len.line, format!("length of {}: {m}", a.name)))?;
        if n < 0 {
            return Err(self.at_line(
                len.line,
                format!(
                    "length of {}: '{}' gives {n}, a negative number of elements",
                    a.name, len.text
                ),
            ));
        }
        let bytes = (n as u128) * a.elem.size() as u128;
        if bytes > (1u128 << 46) {
            return Err(self.at_line(
                len.line,
                format!(
                    "length of {}: {n} elements ({bytes} bytes) is larger than any device memory",
                    a.name
                ),
            ));
        }
        Ok(n as usize)
    }

    /// Scalar `a`'s value, `value` at `scope`, where it fits the argument's type.
    fn scalar_value(&self, a: &UserArg, value: &Expr, scope: &Scope) -> Result<f64> {
        let v = value
            .number(scope)
            .map_err(|m| self.at_line(value.line, format!("value of {}: {m}", a.name)))?;
        let fits = match a.elem {
            Elem::I32 => v.fract() == 0.0 && v >= i32::MIN as f64 && v <= i32::MAX as f64,
            Elem::U32 => v.fract() == 0.0 && v >= 0.0 && v <= u32::MAX as f64,
            _ => v.is_finite(),
        };
        if !fits {
            return Err(self.at_line(
                a.line,
                format!("value of {}: {v} does not fit {}", a.name, a.elem.as_str()),
            ));
        }
        Ok(v)
    }

    /// Launch `l`'s grid at `scope`: each global size a multiple of the local
    /// one, and no more work-groups than a device runs.
    fn launch_geometry(&self, l: &UserLaunch, scope: &Scope) -> Result<Geometry> {
        let global = self.launch_sizes(l, &l.global, "global", scope)?;
        let local = self.launch_sizes(l, &l.local, "local", scope)?;
        for i in 0..3 {
            if global[i] % local[i] != 0 {
                return Err(self.at_line(
                    l.line,
                    format!(
                        "launch of {}: global size {} in dimension {i} ('{}') is not a multiple of the local size {} ('{}')",
                        l.entry,
                        global[i],
                        l.global.get(i).map_or("1".into(), |e| e.text.clone()),
                        local[i],
                        l.local.get(i).map_or("1".into(), |e| e.text.clone())
                    ),
                ));
            }
        }
        let groups: u64 = (0..3).map(|i| (global[i] / local[i]) as u64).product();
        if groups > MAX_GROUPS {
            return Err(self.at_line(
                l.line,
                format!(
                    "launch of {}: {groups} work-groups is more than any device runs",
                    l.entry
                ),
            ));
        }
        Ok(Geometry {
            global,
            local,
            launch_local: 0,
            carveout: None,
        })
    }

    /// The `what` ("global" or "local") sizes of launch `l`, `sizes` at `scope`:
    /// 1 in each dimension they leave out, each from 1 to `u32::MAX`.
    fn launch_sizes(
        &self,
        l: &UserLaunch,
        sizes: &[Expr],
        what: &str,
        scope: &Scope,
    ) -> Result<[usize; 3]> {
        let mut d = [1usize; 3];
        for (i, e) in sizes.iter().enumerate() {
            let x = e
                .int(scope)
                .map_err(|m| self.at_line(e.line, format!("{what} size of {}: {m}", l.entry)))?;
            if x <= 0 || x > u32::MAX as i64 {
                return Err(self.at_line(
                    e.line,
                    format!(
                        "{what} size of {} in dimension {i}: '{}' gives {x}; it must be at least 1",
                        l.entry, e.text
                    ),
                ));
            }
            d[i] = x as usize;
        }
        Ok(d)
    }

    /// "n=4096 m=512": a size as the tables show it.
    pub fn describe_dims(dims: &Dims) -> String {
        dims.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The entry points the kernel's own launches use, in order, once each.
    pub fn entries(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for l in &self.launches {
            if !v.contains(&l.entry.as_str()) {
                v.push(&l.entry);
            }
        }
        v
    }
}

/// Takes `name` for a dimension, parameter or derived value: one namespace.
fn claim(
    r: &Reader,
    names: &mut BTreeMap<String, &'static str>,
    name: &str,
    what: &'static str,
    at: usize,
) -> Result<()> {
    if !is_ident(name) {
        return Err(r.err(
            Some(at),
            format!(
                "{what} '{name}' is not a name (letters, digits, _; not starting with a digit)"
            ),
        ));
    }
    if let Some(prev) = names.insert(name.to_string(), what) {
        return Err(r.err(
            Some(at),
            format!("{what} '{name}' is already a {prev}: each name stands for one value"),
        ));
    }
    Ok(())
}

fn check_names(
    r: &Reader,
    e: &Expr,
    known: &BTreeMap<String, &'static str>,
    at: usize,
) -> Result<()> {
    for n in e.names() {
        if !known.contains_key(&n) {
            let list = |what: &str| {
                let v: Vec<&str> = known
                    .iter()
                    .filter(|(_, w)| **w == what)
                    .map(|(k, _)| k.as_str())
                    .collect();
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(", ")
                }
            };
            return Err(Error::Spec {
                path: r.path.to_path_buf(),
                line: Some(if e.line > 0 { e.line } else { line_of(r.text, at) }),
                message: format!(
                    "'{}' names {n}, which is no dimension, parameter or derived value defined before it (dimensions: {}; parameters: {}; derived: {})",
                    e.text,
                    list("dimension"),
                    list("parameter"),
                    list("derived value")
                ),
            });
        }
    }
    Ok(())
}

fn read_fill(f: &file::Fill, elem: Elem) -> std::result::Result<Fill, String> {
    match f {
        file::Fill::Word(w) => match w.as_str() {
            "random" => Ok(Fill::random_for(elem)),
            "zeros" => Ok(Fill::Constant(0.0)),
            "ramp" => Ok(Fill::Ramp { start: 0.0, step: 1.0 }),
            other => Err(format!(
                "fill '{other}': give random, zeros, ramp, {{ random = [lo, hi] }}, {{ constant = x }} or {{ ramp = [start, step] }}"
            )),
        },
        file::Fill::Table(t) => match (t.random, t.constant, t.ramp) {
            (Some([lo, hi]), None, None) if lo < hi && lo.is_finite() && hi.is_finite() => {
                Ok(Fill::Random { lo, hi })
            }
            (Some([lo, hi]), None, None) => Err(format!("fill random = [{lo}, {hi}]: give lo < hi")),
            (None, Some(c), None) if c.is_finite() => Ok(Fill::Constant(c)),
            (None, None, Some([start, step])) if start.is_finite() && step.is_finite() => {
                Ok(Fill::Ramp { start, step })
            }
            _ => Err("fill: give exactly one of random = [lo, hi], constant = x, ramp = [start, step]".into()),
        },
    }
}

/// Where a key of a table is written (for a dimension's line): its first occurrence
/// at or after the table's start.
fn text_offset(text: &str, key: &str, from: usize) -> usize {
    let tail = &text[from.min(text.len())..];
    let mut pos = 0;
    while let Some(i) = tail[pos..].find(key) {
        let at = pos + i;
        let before_ok = at == 0 || !tail.as_bytes()[at - 1].is_ascii_alphanumeric();
        let after = tail[at + key.len()..].trim_start();
        if before_ok && after.starts_with('=') {
            return from + at;
        }
        pos = at + key.len();
    }
    from
}

/// Parses `--sizes` for specs: `n=4096,m=512` is one point; a point ends at `;`
/// or where a name repeats (`n=1024,n=4096` is two points).
pub fn parse_dim_points(items: &[String]) -> Result<Vec<Dims>> {
    let mut points: Vec<Dims> = Vec::new();
    let mut cur = Dims::new();
    for item in items {
        for (i, part) in item.split(';').enumerate() {
            if i > 0 && !cur.is_empty() {
                points.push(std::mem::take(&mut cur));
            }
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (name, value) = part.split_once('=').ok_or_else(|| {
                Error::invalid(format!(
                    "--sizes '{part}': a spec's size is NAME=VALUE, e.g. n=4096"
                ))
            })?;
            let v = parse_count(value.trim()).ok_or_else(|| {
                Error::invalid(format!(
                    "--sizes {name}: '{value}' is not a non-negative integer"
                ))
            })?;
            let name = name.trim().to_string();
            if cur.contains_key(&name) {
                points.push(std::mem::take(&mut cur));
            }
            cur.insert(name, v);
        }
    }
    if !cur.is_empty() {
        points.push(cur);
    }
    Ok(points)
}

/// 4096, 1<<20, 16M, 4k
fn parse_count(s: &str) -> Option<i64> {
    if let Some((a, b)) = s.split_once("<<") {
        let a: i64 = a.trim().parse().ok()?;
        let b: u32 = b.trim().parse().ok()?;
        return a.checked_shl(b).filter(|v| *v >= 0 && b < 63);
    }
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1i64 << 10),
        Some('m' | 'M') => (&s[..s.len() - 1], 1i64 << 20),
        Some('g' | 'G') => (&s[..s.len() - 1], 1i64 << 30),
        _ => (s, 1),
    };
    num.trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| v.checked_mul(mul))
        .filter(|v| *v >= 0)
}

/// The spec's one namespace: dimensions, parameters and derived values, each
/// with what it is.
type Names = BTreeMap<String, &'static str>;

/// `[dims]`: each dimension and its default.
fn read_dims(r: &Reader, f: &SpecFile, names: &mut Names) -> Result<Vec<(String, i64)>> {
    let mut dims = Vec::new();
    let empty = toml::Table::new();
    let (dim_table, dims_at) = match &f.dims {
        Some(d) => (d.get_ref(), d.span().start),
        None => (&empty, 0),
    };
    for (k, v) in dim_table {
        let at = text_offset(r.text, k, dims_at);
        claim(r, names, k, "dimension", at)?;
        let value = v.as_integer().ok_or_else(|| {
            r.err(
                Some(at),
                format!("dimension {k}: its default must be an integer, got {v:?}"),
            )
        })?;
        dims.push((k.clone(), value));
    }
    Ok(dims)
}

/// `[[params]]`: each with its default among its values.
fn read_params(r: &Reader, f: &SpecFile, names: &mut Names) -> Result<Vec<UserParam>> {
    let mut params = Vec::new();
    for p in &f.params {
        let at = p.span().start;
        let p = p.get_ref();
        claim(r, names, &p.name, "parameter", at)?;
        if !p.values.is_empty() && !p.values.contains(&p.default) {
            return Err(r.err(
                Some(at),
                format!(
                    "parameter {}: its default {} is not among its values {:?}",
                    p.name, p.default, p.values
                ),
            ));
        }
        let mut values = p.values.clone();
        values.dedup();
        params.push(UserParam {
            name: p.name.clone(),
            default: p.default,
            values,
            meaning: p.meaning.clone().unwrap_or_default(),
        });
    }
    Ok(params)
}

/// `[[derived]]`: each may read dimensions, parameters and the ones before it.
fn read_derived(r: &Reader, f: &SpecFile, names: &mut Names) -> Result<Vec<(String, Expr)>> {
    let mut derived = Vec::new();
    for d in &f.derived {
        let at = d.span().start;
        let d = d.get_ref();
        let e = r.expr(&d.value)?;
        // A derived value may read dimensions, parameters and the ones before it.
        check_names(r, &e, names, at)?;
        claim(r, names, &d.name, "derived value", at)?;
        derived.push((d.name.clone(), e));
    }
    Ok(derived)
}

/// `[[constraints]]`: each with its message; a constraint that reads a
/// dimension is judged per size.
fn read_constraints(
    r: &Reader,
    f: &SpecFile,
    names: &Names,
    params: &[UserParam],
) -> Result<Vec<UserConstraint>> {
    let param_names: BTreeSet<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let mut constraints = Vec::new();
    for c in &f.constraints {
        let at = c.span().start;
        let e = r.expr(&c.get_ref().holds)?;
        check_names(r, &e, names, at)?;
        let per_size = e.names().iter().any(|n| !param_names.contains(n.as_str()));
        constraints.push(UserConstraint {
            holds: e,
            message: c.get_ref().message.clone(),
            per_size,
        });
    }

    Ok(constraints)
}

/// `[sources]`: the source of each language, with its preludes.
fn read_sources(r: &Reader, f: &SpecFile) -> Result<BTreeMap<Language, UserSource>> {
    let mut sources = BTreeMap::new();
    let s = f.sources.get_ref();
    let shared = match &s.prelude {
        Some(p) => r.file(p)?.1,
        None => String::new(),
    };
    for (lang, main, own) in [
        (Language::OpenClC, &s.opencl, &s.opencl_prelude),
        (Language::CudaCpp, &s.cuda, &s.cuda_prelude),
    ] {
        let Some(main) = main else { continue };
        let (file, body) = r.file(main)?;
        let own = match own {
            Some(p) => r.file(p)?.1,
            None => String::new(),
        };
        let mut text = String::new();
        for part in [own.as_str(), shared.as_str()] {
            if !part.is_empty() {
                text.push_str(part);
                text.push('\n');
            }
        }
        text.push_str(&body);
        sources.insert(lang, UserSource { file, text });
    }
    if sources.is_empty() {
        return Err(r.err(
            Some(f.sources.span().start),
            "[sources] names no source: give opencl = \"file.cl\", cuda = \"file.cu\" or both",
        ));
    }

    Ok(sources)
}

/// `[[args]]`: buffers and scalars, in the kernel's order; at least one output.
fn read_args(
    r: &Reader,
    f: &SpecFile,
    names: &Names,
) -> Result<(Vec<UserArg>, BTreeMap<String, usize>)> {
    let mut args = Vec::new();
    let mut arg_names: BTreeMap<String, usize> = BTreeMap::new();
    for a in &f.args {
        let at = a.span().start;
        let line = line_of(r.text, at);
        let a = a.get_ref();
        if !is_ident(&a.name) || arg_names.insert(a.name.clone(), args.len()).is_some() {
            return Err(r.err(
                Some(at),
                format!("argument '{}': give each argument a distinct name", a.name),
            ));
        }
        args.push(read_arg(r, a, at, line, names)?);
    }
    if !args.iter().any(UserArg::is_output) {
        return Err(r.err(
            None,
            "no argument is an out or inout buffer: there is nothing to check",
        ));
    }
    Ok((args, arg_names))
}

/// One argument: its element type, and a buffer's length, access and fill or
/// a scalar's value.
fn read_arg(r: &Reader, a: &file::Arg, at: usize, line: usize, names: &Names) -> Result<UserArg> {
    let elem = Elem::parse(a.elem.get_ref()).ok_or_else(|| {
        r.err(
            Some(a.elem.span().start),
            format!(
                "argument {}: type '{}' is not one of f32, f64, i32, u32 (or their C names float, double, int, uint)",
                a.name,
                a.elem.get_ref()
            ),
        )
    })?;
    let kind = match (&a.len, &a.value) {
        (Some(len), None) => {
            let len = r.expr(len)?;
            check_names(r, &len, names, at)?;
            let access = match a.access.as_ref().map(|x| x.get_ref().as_str()) {
                Some("in") => Access::In,
                Some("out") => Access::Out,
                Some("inout") => Access::InOut,
                Some("local") => Access::Local,
                other => {
                    return Err(r.err(
                        Some(a.access.as_ref().map_or(at, |x| x.span().start)),
                        format!(
                            "argument {}: access {}: give in, out, inout or local",
                            a.name,
                            other.map_or("missing".to_string(), |o| format!("'{o}'"))
                        ),
                    ))
                }
            };
            let fill = match &a.fill {
                None => Fill::random_for(elem),
                Some(fl) => read_fill(fl.get_ref(), elem).map_err(|m| {
                    r.err(Some(fl.span().start), format!("argument {}: {m}", a.name))
                })?,
            };
            if access == Access::Local && a.fill.is_some() {
                return Err(r.err(
                    Some(at),
                    format!(
                        "argument {}: local memory is the kernel's own: drop fill",
                        a.name
                    ),
                ));
            }
            if access == Access::Out && a.fill.is_some() {
                return Err(r.err(
                    Some(at),
                    format!("argument {}: an out buffer is poisoned before each checked run, not filled: drop fill or make it inout", a.name),
                ));
            }
            ArgKind::Buffer { len, access, fill }
        }
        (None, Some(value)) => {
            let value = r.expr(value)?;
            check_names(r, &value, names, at)?;
            if a.access.is_some() || a.fill.is_some() {
                return Err(r.err(
                    Some(at),
                    format!(
                        "argument {}: a scalar (value = ...) has no access or fill",
                        a.name
                    ),
                ));
            }
            ArgKind::Scalar { value }
        }
        (Some(_), Some(_)) => {
            return Err(r.err(
                Some(at),
                format!(
                    "argument {}: give len (a buffer) or value (a scalar), not both",
                    a.name
                ),
            ))
        }
        (None, None) => {
            return Err(r.err(
                Some(at),
                format!(
                    "argument {}: give len = ... for a buffer or value = ... for a scalar",
                    a.name
                ),
            ))
        }
    };
    Ok(UserArg {
        name: a.name.clone(),
        elem,
        kind,
        line,
    })
}

/// Reads launches (`[[launches]]` and `[[check.launches]]`) against the
/// spec's names and arguments.
struct Launches<'a> {
    r: &'a Reader<'a>,
    names: &'a Names,
    args: &'a [UserArg],
    arg_names: &'a BTreeMap<String, usize>,
    /// `[sources] entry`, for launches that name none.
    entry: Option<&'a str>,
}

impl Launches<'_> {
    fn read(&self, l: &file::Launch, at: usize) -> Result<UserLaunch> {
        let r = self.r;
        let entry = l
            .entry
            .clone()
            .or_else(|| self.entry.map(str::to_string))
            .ok_or_else(|| {
                r.err(
                    Some(at),
                    "launch without entry: give entry = \"kernel_name\" here or in [sources]",
                )
            })?;
        if l.global.is_empty() || l.global.len() > 3 || l.global.len() != l.local.len() {
            return Err(r.err(
                    Some(at),
                    format!(
                        "launch of {entry}: global and local need the same number of dimensions, 1 to 3 (got {} and {})",
                        l.global.len(),
                        l.local.len()
                    ),
                ));
        }
        let exprs = |v: &Vec<SExpr>| -> Result<Vec<Expr>> {
            v.iter()
                .map(|e| {
                    let x = r.expr(e)?;
                    check_names(r, &x, self.names, e.span().start)?;
                    Ok(x)
                })
                .collect()
        };
        let global = exprs(&l.global)?;
        let local = exprs(&l.local)?;
        let idx = match &l.args {
            None => (0..self.args.len()).collect(),
            Some(list) => list
                .iter()
                .map(|n| {
                    self.arg_names.get(n).copied().ok_or_else(|| {
                        r.err(
                            Some(at),
                            format!(
                                "launch of {entry}: no argument named '{n}' (arguments: {})",
                                self.args
                                    .iter()
                                    .map(|a| a.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?,
        };
        Ok(UserLaunch {
            entry,
            global,
            local,
            args: idx,
            line: line_of(r.text, at),
        })
    }
}

/// `[work]`: FLOPs and bytes per run, where the spec states them.
fn read_work(r: &Reader, f: &SpecFile, names: &Names) -> Result<(Option<Expr>, Option<Expr>)> {
    let Some(w) = &f.work else {
        return Ok((None, None));
    };
    let at = w.span().start;
    let w = w.get_ref();
    let one = |e: &Option<SExpr>| -> Result<Option<Expr>> {
        match e {
            None => Ok(None),
            Some(e) => {
                let x = r.expr(e)?;
                check_names(r, &x, names, at)?;
                Ok(Some(x))
            }
        }
    };
    Ok((one(&w.flops)?, one(&w.bytes)?))
}

/// `[requires]`: a vendor word and a least compute capability ("8.0").
fn read_requires(r: &Reader, f: &SpecFile) -> Result<Requires> {
    let Some(q) = &f.requires else {
        return Ok(Requires::default());
    };
    let at = q.span().start;
    let q = q.get_ref();
    let compute_capability = match &q.compute_capability {
        None => None,
        Some(cc) => {
            let parsed = cc
                .split_once('.')
                .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
            Some(parsed.ok_or_else(|| {
                r.err(
                    Some(at),
                    format!("[requires] compute_capability '{cc}': give MAJOR.MINOR, e.g. \"8.0\""),
                )
            })?)
        }
    };
    if q.vendor.as_deref().is_some_and(|v| v.trim().is_empty()) {
        return Err(r.err(
            Some(at),
            "[requires] vendor: give a word of the vendor's name, e.g. \"nvidia\"",
        ));
    }
    Ok(Requires {
        vendor: q.vendor.clone(),
        compute_capability,
    })
}

/// `[check]`: the reference and the tolerance.
fn read_check(
    r: &Reader,
    f: &SpecFile,
    args: &[UserArg],
    launches: &Launches,
) -> Result<UserCheck> {
    let c = f.check.get_ref();
    let check_at = f.check.span().start;
    let reference = match c.reference.get_ref().as_str() {
        "defaults" => Reference::Defaults,
        "toolchains" => Reference::Toolchains,
        "launches" => {
            if c.launches.is_empty() {
                return Err(r.err(
                    Some(c.reference.span().start),
                    "reference = \"launches\" needs [[check.launches]]",
                ));
            }
            Reference::Launches(
                c.launches
                    .iter()
                    .map(|l| launches.read(l.get_ref(), l.span().start))
                    .collect::<Result<_>>()?,
            )
        }
        "spec" => {
            let name = c.spec.as_ref().ok_or_else(|| {
                r.err(
                    Some(c.reference.span().start),
                    "reference = \"spec\" needs spec = \"other.toml\"",
                )
            })?;
            let dir = r.path.parent().unwrap_or(Path::new("."));
            let other_path = dir.join(name.get_ref());
            if other_path == r.path {
                return Err(r.err(
                    Some(name.span().start),
                    "a spec cannot be its own reference",
                ));
            }
            let other = UserKernel::load(&other_path)
                .map_err(|e| r.err(Some(name.span().start), format!("the reference spec: {e}")))?;
            for o in other.args.iter().filter(|a| a.is_output()) {
                if !args.iter().any(|a| a.name == o.name && a.is_output()) {
                    return Err(r.err(
                        Some(name.span().start),
                        format!(
                            "the reference spec {} writes '{}', which is no output here",
                            other.id, o.name
                        ),
                    ));
                }
            }
            Reference::Spec(Box::new(other))
        }
        other => {
            return Err(r.err(
                Some(c.reference.span().start),
                format!("reference '{other}': give defaults, launches, spec or toolchains"),
            ))
        }
    };
    let tolerance = if c.exact {
        if c.abs.is_some() || c.rel.is_some() || c.ulp.is_some() {
            return Err(r.err(Some(check_at), "exact = true takes no abs, rel or ulp"));
        }
        Tolerance::Exact
    } else if c.abs.is_none() && c.rel.is_none() && c.ulp.is_none() {
        return Err(r.err(
            Some(check_at),
            "[check] states no tolerance: give exact = true, or abs, rel and/or ulp",
        ));
    } else {
        for (what, v) in [("abs", c.abs), ("rel", c.rel)] {
            if v.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err(r.err(
                    Some(check_at),
                    format!("{what} must be a finite number >= 0"),
                ));
            }
        }
        Tolerance::Within {
            abs: c.abs.unwrap_or(0.0),
            rel: c.rel.unwrap_or(0.0),
            ulp: c.ulp,
        }
    };

    Ok(UserCheck {
        reference,
        tolerance,
    })
}
