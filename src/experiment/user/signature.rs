//! A user's launches against the kernel's own signature, before anything runs:
//! the count of arguments, buffers against pointers and values against
//! values, and each scalar's type where the compiler says it (OpenCL's kernel
//! argument info, the PTX `.entry` list). A mismatch names the spec's file and
//! line, the argument, what the kernel declares and what the spec gives.

use crate::backend::{Elem, KernelParam};
use crate::kernel::user::model::{ArgKind, UserArg, UserKernel, UserLaunch};

/// The first launch whose arguments do not fit its entry point, in words;
/// `params` gives an entry point's parameters where known.
pub fn mismatch(
    kernel: &UserKernel,
    launches: &[UserLaunch],
    mut params: impl FnMut(&str) -> Option<Vec<KernelParam>>,
) -> Option<String> {
    for l in launches {
        let Some(declared) = params(&l.entry) else {
            continue;
        };
        let at = |line: usize| format!("{}:{line}: launch of {}", kernel.path.display(), l.entry);
        // A CUDA kernel takes its local memory at launch, not as a parameter:
        // where the signature has no local parameters, the local arguments are
        // not in it.
        let local_params = declared.iter().any(|p| p.space == Some("local"));
        let given: Vec<usize> = if local_params || declared.len() == l.args.len() {
            l.args.clone()
        } else {
            (l.args.iter().copied())
                .filter(|&i| !kernel.args[i].is_local())
                .collect()
        };
        if declared.len() != given.len() {
            let theirs: Vec<String> = declared.iter().map(describe_param).collect();
            let ours: Vec<&str> = l
                .args
                .iter()
                .map(|&i| kernel.args[i].name.as_str())
                .collect();
            return Some(format!(
                "{}: the kernel declares {} ({}), the spec gives {} ({})",
                at(l.line),
                crate::util::words::plural(declared.len(), "parameter"),
                theirs.join(", "),
                crate::util::words::plural(ours.len(), "argument"),
                ours.join(", ")
            ));
        }
        for (pos, (&i, p)) in given.iter().zip(&declared).enumerate() {
            let a = &kernel.args[i];
            if let Some(why) = unfit(a, p) {
                return Some(format!(
                    "{}: argument {pos} `{}`: the spec gives {}, the kernel declares {} ({why})",
                    at(a.line),
                    a.name,
                    describe_arg(a),
                    describe_param(p)
                ));
            }
        }
    }
    None
}

fn describe_arg(a: &UserArg) -> String {
    let ty = a.elem.as_str();
    let article = if ty.starts_with('u') { "a" } else { "an" };
    if a.is_local() {
        return format!("{article} {ty} local memory");
    }
    match a.kind {
        ArgKind::Buffer { .. } => format!("{article} {ty} buffer"),
        ArgKind::Scalar { .. } => format!("{article} {ty} scalar"),
    }
}

fn describe_param(p: &KernelParam) -> String {
    let mut words = Vec::new();
    if let Some(s) = p.space.filter(|s| *s != "private") {
        words.push(format!("__{s}"));
    }
    words.extend(p.type_name.clone());
    words.extend(p.name.clone());
    if words.is_empty() {
        "a parameter".into()
    } else {
        words.join(" ")
    }
}

/// The element a C type name stands for, where it is one of the four.
fn elem_of(type_name: &str) -> Option<Elem> {
    match type_name.trim().trim_end_matches('*').trim() {
        "float" | ".f32" => Some(Elem::F32),
        "double" | ".f64" => Some(Elem::F64),
        "int" | ".s32" => Some(Elem::I32),
        "uint" | "unsigned int" | ".u32" => Some(Elem::U32),
        _ => None,
    }
}

/// Why an argument does not fit a parameter, if it does not.
fn unfit(a: &UserArg, p: &KernelParam) -> Option<&'static str> {
    if a.is_local() {
        return match p.space {
            Some("local") | None => None,
            Some(_) => Some("local memory needs a __local pointer parameter"),
        };
    }
    let pointer = match p.space {
        Some("global") | Some("constant") => Some(true),
        Some("local") => {
            return Some(
                "a __local pointer takes no buffer from the host: give access = \"local\"",
            );
        }
        Some(_) => Some(p.type_name.as_deref().is_some_and(|t| t.ends_with('*'))),
        None => None,
    };
    let ty = p.type_name.as_deref();
    match a.kind {
        ArgKind::Buffer { .. } => {
            if pointer == Some(false) || p.bytes.is_some_and(|b| b != 8) {
                return Some("a buffer needs a pointer parameter");
            }
            let named = ty.filter(|t| t.ends_with('*')).and_then(elem_of);
            named
                .filter(|e| *e != a.elem)
                .map(|_| "another element type")
        }
        ArgKind::Scalar { .. } => {
            if pointer == Some(true) {
                return Some("a pointer takes a buffer (len = ...), not a value");
            }
            if p.bytes.is_some_and(|b| b != a.elem.size()) {
                return Some("another size");
            }
            match ty.and_then(elem_of) {
                // 32-bit integers of either sign pass as each other; PTX's .b32 or .u32
                // carries either.
                Some(e) if e.is_float() || a.elem.is_float() => {
                    (e != a.elem).then_some("another type")
                }
                Some(e) => (e.size() != a.elem.size()).then_some("another size"),
                None if ty.is_some_and(|t| !t.starts_with('.')) => Some("another type"),
                None => None,
            }
        }
    }
}
