//! One kernel model for the commands: a built-in registry entry or a user's spec,
//! asked the same questions (its id, sources by language, compile options, the
//! configuration under defines, whether a toolchain can run it), so `build`,
//! `ptx`, offline compiles, `compare`, `tune` and the store handle both alike.

pub mod builtin;
pub mod user;

use crate::backend::{CompileOptions, DeviceInfo, Language, Toolchain};
use crate::error::Result;
use crate::kernel::user::UserKernel;

use crate::kernel::builtin::{Config, Hints, KernelSpec};

#[derive(Debug, Clone, Copy)]
pub enum Kernel {
    /// A registry entry: a GEMM family's kernel.
    Builtin(&'static KernelSpec),
    /// A kernel described by a spec file (see `crate::kernel::user`).
    User(&'static UserKernel),
}

impl From<&'static KernelSpec> for Kernel {
    fn from(k: &'static KernelSpec) -> Kernel {
        Kernel::Builtin(k)
    }
}

impl From<&'static UserKernel> for Kernel {
    fn from(k: &'static UserKernel) -> Kernel {
        Kernel::User(k)
    }
}

/// A kernel's unchanged form in a label: "defaults" for a user's kernel,
/// "published" for a registry one (see [`Kernel::unchanged`]).
pub fn unchanged_name(user: bool) -> &'static str {
    if user {
        "defaults"
    } else {
        "published"
    }
}

impl Kernel {
    pub fn id(&self) -> &'static str {
        match self {
            Kernel::Builtin(k) => k.id,
            Kernel::User(k) => &k.id,
        }
    }

    /// The entry point whose resources a row reports (a spec's first launch).
    pub fn entry(&self) -> &'static str {
        match self {
            Kernel::Builtin(k) => k.entry,
            Kernel::User(k) => k.launches.first().map_or("", |l| l.entry.as_str()),
        }
    }

    /// What its unchanged form is called in a configuration's label: a
    /// registry kernel is "published", a user's kernel has its "defaults".
    pub fn unchanged(&self) -> &'static str {
        unchanged_name(matches!(self, Kernel::User(_)))
    }

    pub fn title(&self) -> &'static str {
        match self {
            Kernel::Builtin(k) => k.title,
            Kernel::User(k) => &k.title,
        }
    }

    /// Whether it has a source in `language`.
    pub fn has_source_in(&self, language: Language) -> bool {
        match self {
            Kernel::Builtin(k) => k.source_in(language).is_some(),
            Kernel::User(k) => k.sources.contains_key(&language),
        }
    }

    /// The source a toolchain compiles (by its language), preludes included;
    /// `None` where the kernel has none in that language.
    pub fn source(&self, toolchain: Toolchain) -> Option<String> {
        match self {
            Kernel::Builtin(k) => Some(k.source(toolchain)),
            Kernel::User(k) => k.source(toolchain).map(|s| s.text.clone()),
        }
    }

    /// What keys this kernel's results in the tuning store and the database of
    /// bests on a toolchain: the source it compiles, and for a user's kernel
    /// also its spec (arguments, launches, check), so that a changed kernel
    /// never reuses an old result.
    pub fn fingerprint(&self, toolchain: Toolchain) -> String {
        let source = self.source(toolchain).unwrap_or_default();
        match self {
            Kernel::Builtin(_) => crate::util::keys::fnv1a(&source),
            Kernel::User(k) => crate::util::keys::fnv1a(&format!("{source}\n{}", k.spec_hash)),
        }
    }

    pub fn compile_options(
        &self,
        c: &Config,
        hints: &Hints,
        toolchain: Toolchain,
    ) -> CompileOptions {
        match self {
            Kernel::Builtin(k) => k.compile_options(c, hints, toolchain),
            Kernel::User(_) => user::compile_options(c, hints),
        }
    }

    /// Why this kernel cannot run on that device with those hints, if it cannot.
    pub fn unavailable(&self, device: &DeviceInfo, hints: &Hints) -> Option<String> {
        match self {
            Kernel::Builtin(k) => k.unavailable(device, hints),
            Kernel::User(k) => k.not_applicable_on(device),
        }
    }

    pub fn defaults(&self) -> Config {
        match self {
            Kernel::Builtin(k) => k.defaults(),
            Kernel::User(k) => k.defaults(),
        }
    }

    /// Defaults overridden by NAME=VALUE defines, checked.
    pub fn config(&self, defines: &[(String, i64)]) -> Result<Config> {
        match self {
            Kernel::Builtin(k) => k.config(defines),
            Kernel::User(k) => k.config(defines),
        }
    }

    /// Work-items per work-group of the measured launch (a spec's at its default size).
    pub fn threads_per_group(&self, c: &Config) -> usize {
        match self {
            Kernel::Builtin(k) => k.threads_per_group(c),
            Kernel::User(k) => k
                .dims_at(&Default::default())
                .and_then(|d| k.instantiate(c, &d))
                .ok()
                .and_then(|i| i.launches.first().map(|(_, g, _)| g.threads_per_group()))
                .unwrap_or(1),
        }
    }

    /// The hints as they apply: a built-in kernel keeps only its own switches;
    /// a spec has none, so only the register cap and fast math remain.
    pub fn own_hints(&self, hints: &Hints) -> Hints {
        match self {
            Kernel::Builtin(k) => k.own_hints(hints),
            Kernel::User(_) => Hints {
                switches: Default::default(),
                ..hints.clone()
            },
        }
    }

    pub fn has_switch(&self, name: &str) -> bool {
        match self {
            Kernel::Builtin(k) => k.has_switch(name),
            Kernel::User(_) => false,
        }
    }

    pub fn switch_names(&self) -> Vec<&'static str> {
        match self {
            Kernel::Builtin(k) => k.switches.iter().map(|s| s.name()).collect(),
            Kernel::User(_) => Vec::new(),
        }
    }

    pub fn builtin(&self) -> Option<&'static KernelSpec> {
        match self {
            Kernel::Builtin(k) => Some(k),
            Kernel::User(_) => None,
        }
    }

    pub fn user(&self) -> Option<&'static UserKernel> {
        match self {
            Kernel::User(k) => Some(k),
            Kernel::Builtin(_) => None,
        }
    }
}
