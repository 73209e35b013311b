//! Shape classes of a GEMM call and the choice of a kernel for a call from the
//! routine's database, as cuBLAS's heuristics and CLBlast's per-size database
//! choose: by the class of the call's shape first, then by its layout and
//! transposes, then by the nearest tuned shape.

use serde::{Deserialize, Serialize};

use crate::bests::RoutineEntry;
use crate::gemm::problem::Problem;

/// What kind of work a call is, by its M, N and K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeClass {
    /// Little work (M*N*K at most `SMALL_EDGE^3`): launches and packing dominate.
    Small,
    /// M at most `THIN` and at most a quarter of N: most of a wide tile would be idle.
    ThinM,
    /// N at most `THIN` and at most a quarter of M.
    ThinN,
    /// K at most `SMALL_K` and at most a quarter of M and N: few steps along K per tile.
    SmallK,
    /// K at least four times M and N: few tiles of C, each with a long K loop (split-K pays).
    LongK,
    /// Everything else: the large, roughly balanced calls.
    Square,
}

/// The cube edge below which a call counts as small.
pub const SMALL_EDGE: usize = 512;
/// The largest M or N a thin call has.
pub const THIN: usize = 256;
/// The largest K a small-K call has.
pub const SMALL_K: usize = 512;

impl ShapeClass {
    pub const ALL: [ShapeClass; 6] = [
        ShapeClass::Small,
        ShapeClass::ThinM,
        ShapeClass::ThinN,
        ShapeClass::SmallK,
        ShapeClass::LongK,
        ShapeClass::Square,
    ];

    pub fn of(m: usize, n: usize, k: usize) -> ShapeClass {
        let work = (m as u128) * (n as u128) * (k as u128);
        let edge = SMALL_EDGE as u128;
        if work <= edge * edge * edge {
            ShapeClass::Small
        } else if m <= THIN && m * 4 <= n {
            ShapeClass::ThinM
        } else if n <= THIN && n * 4 <= m {
            ShapeClass::ThinN
        } else if k <= SMALL_K && k * 4 <= m.min(n) {
            ShapeClass::SmallK
        } else if k >= 4 * m.max(n) {
            ShapeClass::LongK
        } else {
            ShapeClass::Square
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ShapeClass::Small => "small",
            ShapeClass::ThinM => "thin-m",
            ShapeClass::ThinN => "thin-n",
            ShapeClass::SmallK => "small-k",
            ShapeClass::LongK => "long-k",
            ShapeClass::Square => "square",
        }
    }
}

impl std::fmt::Display for ShapeClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The layout and transposes of a call: "col NN".
pub fn call_label(p: &Problem) -> String {
    format!(
        "{} {}{}",
        p.layout.as_str(),
        p.trans_a.letter(),
        p.trans_b.letter()
    )
}

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
fn distance(a: (usize, usize, usize), b: (usize, usize, usize)) -> f64 {
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
        .min_by(|x, y| x.1.cmp(&y.1).then(x.2.total_cmp(&y.2)))
        .map(|(e, fit, _)| (e, fit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issues_shapes_fall_in_the_classes_they_are_named_for() {
        let c = |m, n, k| ShapeClass::of(m, n, k);
        assert_eq!(c(256, 256, 256), ShapeClass::Small);
        assert_eq!(c(512, 512, 512), ShapeClass::Small);
        assert_eq!(c(1024, 1024, 1024), ShapeClass::Square);
        assert_eq!(c(3000, 3000, 3000), ShapeClass::Square);
        assert_eq!(c(1024, 1024, 32768), ShapeClass::LongK);
        assert_eq!(c(768, 768, 8192), ShapeClass::LongK);
        assert_eq!(c(16384, 128, 2048), ShapeClass::ThinN);
        assert_eq!(c(4097, 33, 2049), ShapeClass::ThinN);
        assert_eq!(c(50000, 64, 64), ShapeClass::ThinN);
        assert_eq!(c(128, 4096, 4096), ShapeClass::ThinM);
        assert_eq!(c(4096, 4096, 256), ShapeClass::SmallK);
        assert_eq!(c(8192, 768, 768), ShapeClass::Square);
        // Zero-sized calls never launch; they still have a class.
        assert_eq!(c(0, 5, 5), ShapeClass::Small);
    }
}
