//! The shape class of a GEMM call (small, thin M or N, small or long K, square)
//! and its layout label: what the routine's database is keyed by, below both the
//! database (`bests`) and the routine that reads it.

use serde::{Deserialize, Serialize};

use super::problem::Problem;

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
