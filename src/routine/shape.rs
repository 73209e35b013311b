//! Shape classes of a GEMM call and the choice of a kernel for a call from the
//! routine's database, as cuBLAS's heuristics and CLBlast's per-size database
//! choose: by the class of the call's shape first, then by its layout and
//! transposes, then by the nearest tuned shape.

use crate::gemm::problem::Problem;
pub use crate::gemm::shape::{call_label, ShapeClass, SMALL_EDGE, SMALL_K, THIN};
use crate::results::bests::RoutineEntry;

/// How well a database entry fits a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    /// Tuned for this very call.
    Exact,
    /// The same class, layout and transposes, at another shape.
    SameClassAndCall,
    /// The same class, another layout or transposes.
    SameClass,
    /// No entry of this class: the nearest shape of another.
    OtherClass,
}

impl Fit {
    pub fn describe(self) -> &'static str {
        match self {
            Fit::Exact => "tuned for this call",
            Fit::SameClassAndCall => "nearest tuned shape of its class",
            Fit::SameClass => "nearest tuned shape of its class, another layout or transposes",
            Fit::OtherClass => "no entry of its class: nearest tuned shape of another class",
        }
    }
}

/// Distance between two shapes: the sum of |log2| ratios of M, N and K.
pub(crate) fn distance(a: (usize, usize, usize), b: (usize, usize, usize)) -> f64 {
    let d = |x: usize, y: usize| ((x.max(1) as f64) / (y.max(1) as f64)).log2().abs();
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

/// The entry that fits `p` best among `entries` (already those of the call's
/// device, toolchain and precision): its class first, then its layout and
/// transposes, then the nearest shape.
pub fn select<'a>(entries: &'a [RoutineEntry], p: &Problem) -> Option<(&'a RoutineEntry, Fit)> {
    let class = ShapeClass::of(p.m, p.n, p.k);
    let call = call_label(p);
    let shape = (p.m, p.n, p.k);
    entries
        .iter()
        .map(|e| {
            let same_call = e.call == call;
            let fit = match (e.class == class, same_call) {
                (true, true) if (e.m, e.n, e.k) == shape => Fit::Exact,
                (true, true) => Fit::SameClassAndCall,
                (true, false) => Fit::SameClass,
                (false, _) => Fit::OtherClass,
            };
            let d = distance((e.m, e.n, e.k), shape) + if same_call { 0.0 } else { 0.5 };
            (e, fit, d)
        })
        // Equally near entries (a call's own and its emulated one): the faster.
        .min_by(|x, y| {
            (x.1.cmp(&y.1))
                .then(x.2.total_cmp(&y.2))
                .then(x.0.routine_ns.total_cmp(&y.0.routine_ns))
        })
        .map(|(e, fit, _)| (e, fit))
}
