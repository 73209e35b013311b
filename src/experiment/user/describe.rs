//! `spec --check`: a user's kernel as gemmlab read it, in words, evaluated at
//! each size point of a run, without a device.

use std::fmt::Write;

use crate::error::{Error, Result};
use crate::kernel::builtin::Config;
use crate::kernel::user::model::{Access, ArgKind, Reference};
use crate::kernel::user::{Dims, UserKernel};
use crate::util::words::plural;

/// The spec as gemmlab read it, at each size point: what `spec --check`
/// prints.
pub fn describe(
    k: &UserKernel,
    all: &[&UserKernel],
    points: &[crate::kernel::user::Dims],
    defines: &[(String, i64)],
) -> Result<String> {
    let mut s = String::new();
    describe_model(&mut s, k);
    let config = crate::experiment::user::config_for(k, defines)?;
    let sizes = crate::experiment::points_for(k, all, points)?;
    for dims in sizes {
        describe_point(&mut s, k, &config, &dims)?;
    }
    if s.is_empty() {
        return Err(Error::invalid("nothing to describe"));
    }
    Ok(s)
}

/// What a spec declares: sources, toolchains it cannot run on, dimensions,
/// derived values, parameters and constraints, the check and the work.
fn describe_model(s: &mut String, k: &UserKernel) {
    let w = s;
    let _ = writeln!(w, "{} ({}): {}", k.id, k.path.display(), k.title);
    for (lang, src) in &k.sources {
        let _ = writeln!(
            w,
            "  source  {}: {} ({} lines with preludes)",
            lang.name(),
            src.file.display(),
            src.text.lines().count()
        );
    }
    if let Some(v) = &k.requires.vendor {
        let _ = writeln!(
            w,
            "  requires a device of vendor '{v}' (elsewhere: not applicable)"
        );
    }
    if let Some((a, b)) = k.requires.compute_capability {
        let _ = writeln!(w, "  requires compute capability {a}.{b} or later");
    }
    for tc in crate::Toolchain::ALL {
        if let Some(why) = k.not_applicable(tc) {
            let _ = writeln!(w, "  {tc}: {why}");
        }
    }
    let _ = writeln!(
        w,
        "  dimensions: {}",
        if k.dims.is_empty() {
            "none".to_string()
        } else {
            k.dims
                .iter()
                .map(|(d, v)| format!("{d} (default {v})"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    for (name, e) in &k.derived {
        let _ = writeln!(w, "  derived {name} = {}", e.text);
    }
    let space: u64 = k
        .params
        .iter()
        .map(|p| p.values.len().max(1) as u64)
        .product();
    let _ = writeln!(
        w,
        "  parameters: {} ({} combinations); constraints: {} on parameters, {} per size",
        k.params.len(),
        space,
        k.constraints.iter().filter(|c| !c.per_size).count(),
        k.constraints.iter().filter(|c| c.per_size).count()
    );
    for p in &k.params {
        let _ = writeln!(
            w,
            "    {} = {} {} {}",
            p.name,
            p.default,
            if p.values.is_empty() {
                "(fixed)".to_string()
            } else {
                format!("of {:?}", p.values)
            },
            p.meaning
        );
    }
    let valid = if space <= 1 << 20 {
        k.configs()
            .iter()
            .filter(|c| k.param_violation(c).is_none())
            .count()
            .to_string()
    } else {
        "not counted".to_string()
    };
    let _ = writeln!(
        w,
        "    {valid} of {space} combinations satisfy the parameter constraints"
    );
    for c in &k.constraints {
        let _ = writeln!(
            w,
            "    constraint{} {}: {}",
            if c.per_size { " (per size)" } else { "" },
            c.holds.text,
            c.message
        );
    }
    let _ = writeln!(
        w,
        "  check: against {}; {}",
        k.check.reference.describe(),
        k.check.tolerance.describe()
    );
    if matches!(k.check.reference, Reference::Defaults) {
        let _ = writeln!(
            w,
            "    note: at the default parameters the reference is the kernel itself: only the poison check (every out element written) applies there"
        );
    }
    if k.flops.is_none() && k.bytes.is_none() {
        let _ = writeln!(w, "  work: not stated (rows show times only)");
    }
}

/// One size point: every argument's length or value, every launch (the
/// reference launches too), the work and the device memory.
fn describe_point(s: &mut String, k: &UserKernel, config: &Config, dims: &Dims) -> Result<()> {
    let w = s;
    let inst = k.instantiate(config, dims)?;
    let _ = writeln!(
        w,
        "  at {} with {}:",
        UserKernel::describe_dims(dims),
        if config.0.is_empty() {
            "no parameters".to_string()
        } else {
            config.describe()
        }
    );
    for (i, a) in k.args.iter().enumerate() {
        match (&a.kind, inst.lens[i], inst.scalars[i]) {
            (ArgKind::Buffer { access, fill, .. }, Some(n), _) => {
                let how = match access {
                    Access::In => format!("in, {}", fill.describe(a.elem)),
                    Access::InOut => format!("inout, {}; checked", fill.describe(a.elem)),
                    Access::Out => "out, poisoned before the checked run; checked".to_string(),
                    Access::Local => {
                        "work-group local memory (an OpenCL __local pointer; CUDA's extern __shared__, its bytes at launch)"
                            .to_string()
                    }
                };
                let _ = writeln!(
                    w,
                    "    arg {i} {}: {} buffer of {n} elements ({} bytes), {how}",
                    a.name,
                    a.elem.as_str(),
                    n * a.elem.size()
                );
            }
            (_, _, Some(v)) => {
                let _ = writeln!(
                    w,
                    "    arg {i} {}: {} scalar = {v}",
                    a.name,
                    a.elem.as_str()
                );
            }
            _ => {}
        }
    }
    // The reference launches too (at the defaults): they run at every size.
    let reference = match &k.check.reference {
        Reference::Launches(l) => Some(k.instantiate_launches(&k.defaults(), dims, l, false)?),
        _ => None,
    };
    let own = inst.launches.iter().map(|l| ("launch", l));
    let checks = reference.iter().flat_map(|r| r.launches.iter());
    for (what, (entry, g, idx)) in own.chain(checks.map(|l| ("reference launch", l))) {
        let names: Vec<&str> = idx.iter().map(|&i| k.args[i].name.as_str()).collect();
        let _ = writeln!(
            w,
            "    {what} {entry}: global {:?} local {:?} ({} of {}) args ({})",
            g.global,
            g.local,
            plural(g.groups().iter().product::<usize>(), "work-group"),
            g.threads_per_group(),
            names.join(", ")
        );
    }
    let mut work = Vec::new();
    if let Some(f) = inst.flops {
        work.push(format!("{f:.4e} FLOPs"));
    }
    if let Some(b) = inst.bytes {
        work.push(format!("{b:.4e} bytes"));
    }
    if !work.is_empty() {
        let _ = writeln!(w, "    work: {}", work.join(", "));
    }
    let _ = writeln!(
        w,
        "    device memory: {} bytes of buffers",
        inst.buffer_bytes(k)
    );
    Ok(())
}
