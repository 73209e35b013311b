//! A GEMM problem as BLAS states it: C = alpha * op(A) * op(B) + beta * C with
//! a storage order, transposes, leading dimensions and offsets, in single or
//! double precision. Arguments are checked the way reference BLAS's xerbla
//! checks them: the first bad argument is named, with its position and why.
//!
//! Every routine normalises a row-major problem to a column-major one (a
//! row-major matrix is the column-major storage of its transpose, so C = A B
//! row-major is C^T = B^T A^T column-major: swap A and B, M and N); kernels
//! only ever see column-major problems.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use crate::kernel::builtin::Precision;

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    #[default]
    ColMajor,
    RowMajor,
}

impl Layout {
    pub fn parse(s: &str) -> Result<Layout> {
        match s.trim().to_ascii_lowercase().as_str() {
            "col" | "column" | "colmajor" | "col-major" | "column-major" | "c" => {
                Ok(Layout::ColMajor)
            }
            "row" | "rowmajor" | "row-major" | "r" => Ok(Layout::RowMajor),
            _ => Err(Error::invalid(format!(
                "layout '{s}': expected col (column-major) or row (row-major)"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Layout::ColMajor => "col",
            Layout::RowMajor => "row",
        }
    }
}

/// Whether an operand is used as stored (N) or transposed (T).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Trans {
    #[default]
    N,
    T,
}

impl Trans {
    pub fn parse(s: &str) -> Result<Trans> {
        match s.trim().to_ascii_lowercase().as_str() {
            "n" | "no" | "none" | "false" | "0" => Ok(Trans::N),
            // Real matrices: the conjugate transpose is the transpose.
            "t" | "yes" | "true" | "1" | "c" => Ok(Trans::T),
            _ => Err(Error::invalid(format!(
                "transpose '{s}': expected n (as stored) or t (transposed)"
            ))),
        }
    }

    pub fn is_t(self) -> bool {
        self == Trans::T
    }

    pub fn letter(self) -> char {
        match self {
            Trans::N => 'N',
            Trans::T => 'T',
        }
    }
}

/// The three matrices of a GEMM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matrix {
    A,
    B,
    C,
}

/// One GEMM call's arguments (without the data).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    pub layout: Layout,
    pub trans_a: Trans,
    pub trans_b: Trans,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f64,
    pub beta: f64,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub a_offset: usize,
    pub b_offset: usize,
    pub c_offset: usize,
    pub precision: Precision,
}

/// How one matrix lies in its buffer, column-major: element (i, j) of the
/// stored rows x cols matrix is at `offset + j * ld + i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storage {
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
    pub offset: usize,
    /// The stored matrix is the transpose of the operand the product uses.
    pub transposed: bool,
}

impl Storage {
    /// Elements the buffer must hold (at least one, so an empty matrix still has a buffer).
    pub fn buffer_len(&self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            return self.offset.max(1);
        }
        self.offset + (self.cols - 1) * self.ld + self.rows
    }

    /// Where element (i, j) of the operand (before the stored transpose) lies.
    pub fn index(&self, i: usize, j: usize) -> usize {
        if self.transposed {
            self.offset + i * self.ld + j
        } else {
            self.offset + j * self.ld + i
        }
    }
}

impl Problem {
    /// The tutorial's problem: column-major C = A * B in f32, tight leading dimensions.
    pub fn plain(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            layout: Layout::ColMajor,
            trans_a: Trans::N,
            trans_b: Trans::N,
            m,
            n,
            k,
            alpha: 1.0,
            beta: 0.0,
            lda: m.max(1),
            ldb: k.max(1),
            ldc: m.max(1),
            a_offset: 0,
            b_offset: 0,
            c_offset: 0,
            precision: Precision::F32,
        }
    }

    /// The same call with every leading dimension set to its smallest legal value.
    pub fn tight(mut self) -> Problem {
        self.lda = self.min_ld(Matrix::A);
        self.ldb = self.min_ld(Matrix::B);
        self.ldc = self.min_ld(Matrix::C);
        self
    }

    /// C = A * B, column-major, no transposes, alpha 1, beta 0, tight, no offsets, f32:
    /// what the tutorial kernels compute.
    pub fn is_plain(&self) -> bool {
        *self == Problem::plain(self.m, self.n, self.k)
    }

    /// Rows and columns of the matrix as stored (in the problem's own layout).
    fn stored_shape(&self, which: Matrix) -> (usize, usize) {
        let (rows, cols, t) = match which {
            Matrix::A => (self.m, self.k, self.trans_a),
            Matrix::B => (self.k, self.n, self.trans_b),
            Matrix::C => (self.m, self.n, Trans::N),
        };
        if t.is_t() {
            (cols, rows)
        } else {
            (rows, cols)
        }
    }

    /// The smallest leading dimension BLAS accepts: max(1, rows as stored)
    /// (column-major) or max(1, columns as stored) (row-major).
    pub fn min_ld(&self, which: Matrix) -> usize {
        let (rows, cols) = self.stored_shape(which);
        match self.layout {
            Layout::ColMajor => rows.max(1),
            Layout::RowMajor => cols.max(1),
        }
    }

    fn ld(&self, which: Matrix) -> usize {
        match which {
            Matrix::A => self.lda,
            Matrix::B => self.ldb,
            Matrix::C => self.ldc,
        }
    }

    fn offset(&self, which: Matrix) -> usize {
        match which {
            Matrix::A => self.a_offset,
            Matrix::B => self.b_offset,
            Matrix::C => self.c_offset,
        }
    }

    /// Whether op(A) and op(B) are K-contiguous as the call stores them: the forms a
    /// kernel reads without a transposing pack (`KMAJOR_A`, `KMAJOR_B`).
    pub fn k_contiguous(&self) -> (bool, bool) {
        (
            self.storage(Matrix::A).transposed,
            !self.storage(Matrix::B).transposed,
        )
    }

    /// How a matrix lies in its buffer, in column-major terms: a row-major matrix
    /// is stored as the column-major transpose of itself.
    pub fn storage(&self, which: Matrix) -> Storage {
        let (rows, cols) = self.stored_shape(which);
        let t = match which {
            Matrix::A => self.trans_a.is_t(),
            Matrix::B => self.trans_b.is_t(),
            Matrix::C => false,
        };
        match self.layout {
            Layout::ColMajor => Storage {
                rows,
                cols,
                ld: self.ld(which),
                offset: self.offset(which),
                transposed: t,
            },
            Layout::RowMajor => Storage {
                rows: cols,
                cols: rows,
                ld: self.ld(which),
                offset: self.offset(which),
                transposed: !t,
            },
        }
    }

    /// The column-major problem that computes the same memory: a row-major
    /// C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, i.e. the same
    /// transposes with A and B (and M and N) swapped.
    pub fn column_major(&self) -> Problem {
        self.in_layout(Layout::ColMajor)
    }

    /// The row-major problem that computes the same memory (the mirror of
    /// `column_major`).
    pub fn row_major(&self) -> Problem {
        self.in_layout(Layout::RowMajor)
    }

    /// The same memory read in `layout`: itself, or the other layout's view of
    /// it with A and B, M and N, and their transposes swapped.
    fn in_layout(&self, layout: Layout) -> Problem {
        if self.layout == layout {
            return *self;
        }
        Problem {
            layout,
            trans_a: self.trans_b,
            trans_b: self.trans_a,
            m: self.n,
            n: self.m,
            lda: self.ldb,
            ldb: self.lda,
            a_offset: self.b_offset,
            b_offset: self.a_offset,
            ..*self
        }
    }

    /// True when the column-major form swapped A and B.
    pub fn swaps_operands(&self) -> bool {
        self.layout == Layout::RowMajor
    }

    /// The largest buffer of the call, when it is beyond what 32-bit kernel
    /// indices address (a limit of the kernels, not of the call).
    pub fn beyond_int_indices(&self) -> Option<(Matrix, usize)> {
        [Matrix::A, Matrix::B, Matrix::C]
            .into_iter()
            .map(|w| (w, self.buffer_len(w)))
            .find(|&(_, len)| len > i32::MAX as usize)
    }

    /// Elements each buffer must hold.
    pub fn buffer_len(&self, which: Matrix) -> usize {
        self.storage(which).buffer_len()
    }

    /// 2 M N K: the flops of the product (the alpha/beta update is not counted, as in BLAS benchmarks).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// A product with nothing to compute: C is only scaled by beta (or left alone).
    pub fn is_noop(&self) -> bool {
        self.m == 0 || self.n == 0
    }

    /// Checks the arguments the way reference BLAS does (xerbla): the first bad one
    /// is named with its position in the CBLAS argument list and why it is bad.
    pub fn validate(&self) -> Result<()> {
        let name = format!("{}GEMM", self.precision.blas_letter());
        let bad = |pos: usize, arg: &str, why: String| {
            Err(Error::invalid(format!(
                "{name}: argument {pos} ({arg}) is invalid: {why}"
            )))
        };
        for (pos, arg, v) in [(4, "M", self.m), (5, "N", self.n), (6, "K", self.k)] {
            if v > i32::MAX as usize {
                return bad(pos, arg, format!("{v} exceeds the 32-bit index range"));
            }
        }
        if !self.alpha.is_finite() {
            return bad(7, "alpha", format!("{} is not a finite number", self.alpha));
        }
        if !self.beta.is_finite() {
            return bad(12, "beta", format!("{} is not a finite number", self.beta));
        }
        for (pos, which, arg) in [
            (9, Matrix::A, "lda"),
            (11, Matrix::B, "ldb"),
            (14, Matrix::C, "ldc"),
        ] {
            let min = self.min_ld(which);
            let ld = self.ld(which);
            if ld < min {
                let (rows, cols) = self.stored_shape(which);
                let dim = match self.layout {
                    Layout::ColMajor => format!("rows of the stored {rows} x {cols} matrix"),
                    Layout::RowMajor => format!("columns of the stored {rows} x {cols} matrix"),
                };
                return bad(
                    pos,
                    arg,
                    format!(
                        "{ld} is below max(1, {dim}) = {min} ({} layout{})",
                        match self.layout {
                            Layout::ColMajor => "column-major",
                            Layout::RowMajor => "row-major",
                        },
                        match which {
                            Matrix::A if self.trans_a.is_t() => ", A transposed",
                            Matrix::B if self.trans_b.is_t() => ", B transposed",
                            _ => "",
                        }
                    ),
                );
            }
        }
        Ok(())
    }

    /// "f32 col NN 1024x1024x1024 alpha=1 beta=0": what a result row says it computed.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} {} {}{} {}x{}x{} alpha={} beta={}",
            self.precision,
            self.layout.as_str(),
            self.trans_a.letter(),
            self.trans_b.letter(),
            self.m,
            self.n,
            self.k,
            self.alpha,
            self.beta
        );
        let tight = self.tight();
        if (self.lda, self.ldb, self.ldc) != (tight.lda, tight.ldb, tight.ldc) {
            s.push_str(&format!(" ld={},{},{}", self.lda, self.ldb, self.ldc));
        }
        if (self.a_offset, self.b_offset, self.c_offset) != (0, 0, 0) {
            s.push_str(&format!(
                " offsets={},{},{}",
                self.a_offset, self.b_offset, self.c_offset
            ));
        }
        s
    }
}

/// A GEMM call without its size: what `--layout`, `--trans-a`, `--alpha`, ...
/// say, applied to each size of a run. Leading dimensions not given are the
/// smallest legal ones for each size.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Template {
    pub layout: Layout,
    pub trans_a: Trans,
    pub trans_b: Trans,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub lda: Option<usize>,
    pub ldb: Option<usize>,
    pub ldc: Option<usize>,
    pub a_offset: usize,
    pub b_offset: usize,
    pub c_offset: usize,
    pub precision: Precision,
}

impl Template {
    /// The tutorial's problem at every size.
    pub fn plain() -> Template {
        Template::default()
    }

    /// The call at one size, checked like BLAS checks its arguments.
    pub fn at(&self, m: usize, n: usize, k: usize) -> Result<Problem> {
        let mut p = Problem {
            layout: self.layout,
            trans_a: self.trans_a,
            trans_b: self.trans_b,
            alpha: self.alpha.unwrap_or(1.0),
            beta: self.beta.unwrap_or(0.0),
            a_offset: self.a_offset,
            b_offset: self.b_offset,
            c_offset: self.c_offset,
            precision: self.precision,
            ..Problem::plain(m, n, k)
        }
        .tight();
        p.lda = self.lda.unwrap_or(p.lda);
        p.ldb = self.ldb.unwrap_or(p.ldb);
        p.ldc = self.ldc.unwrap_or(p.ldc);
        p.validate()?;
        Ok(p)
    }

    pub fn is_plain(&self) -> bool {
        self.at(1, 1, 1).is_ok_and(|p| p.is_plain())
            && self.lda.is_none()
            && self.ldb.is_none()
            && self.ldc.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(layout: Layout, ta: Trans, tb: Trans, m: usize, n: usize, k: usize) -> Problem {
        Problem {
            layout,
            trans_a: ta,
            trans_b: tb,
            ..Problem::plain(m, n, k)
        }
        .tight()
    }

    #[test]
    fn leading_dimensions_follow_layout_and_transposes() {
        let c = p(Layout::ColMajor, Trans::N, Trans::N, 5, 7, 3);
        assert_eq!((c.lda, c.ldb, c.ldc), (5, 3, 5));
        let c = p(Layout::ColMajor, Trans::T, Trans::T, 5, 7, 3);
        assert_eq!((c.lda, c.ldb, c.ldc), (3, 7, 5));
        let r = p(Layout::RowMajor, Trans::N, Trans::N, 5, 7, 3);
        assert_eq!((r.lda, r.ldb, r.ldc), (3, 7, 7));
        let r = p(Layout::RowMajor, Trans::T, Trans::N, 5, 7, 3);
        assert_eq!((r.lda, r.ldb, r.ldc), (5, 7, 7));
        // Degenerate sizes still need ld >= 1.
        let z = p(Layout::ColMajor, Trans::N, Trans::N, 0, 0, 0);
        assert_eq!((z.lda, z.ldb, z.ldc), (1, 1, 1));
        assert!(z.validate().is_ok() && z.is_noop());
    }

    #[test]
    fn bad_arguments_are_named_like_xerbla() {
        let mut q = p(Layout::ColMajor, Trans::N, Trans::T, 8, 6, 4);
        q.lda = 7;
        let e = q.validate().unwrap_err().to_string();
        assert!(
            e.contains("SGEMM") && e.contains("argument 9 (lda)") && e.contains("= 8"),
            "{e}"
        );
        let mut q = p(Layout::RowMajor, Trans::N, Trans::T, 8, 6, 4);
        q.precision = Precision::F64;
        q.ldb = 3;
        let e = q.validate().unwrap_err().to_string();
        assert!(
            e.contains("DGEMM") && e.contains("argument 11 (ldb)") && e.contains("B transposed"),
            "{e}"
        );
        let mut q = p(Layout::ColMajor, Trans::N, Trans::N, 8, 6, 4);
        q.alpha = f64::NAN;
        assert!(q.validate().unwrap_err().to_string().contains("(alpha)"));
    }

    #[test]
    fn storage_indexes_every_case_consistently() {
        // Element (i, j) of op(A) must land at the same address whichever way the
        // problem is spelled: row-major storage of X is column-major storage of X^T.
        for (layout, t) in [
            (Layout::ColMajor, Trans::N),
            (Layout::ColMajor, Trans::T),
            (Layout::RowMajor, Trans::N),
            (Layout::RowMajor, Trans::T),
        ] {
            let mut q = p(layout, t, Trans::N, 3, 2, 4);
            q.lda += 2;
            q.a_offset = 5;
            let s = q.storage(Matrix::A);
            let stored_row_major = (layout == Layout::RowMajor) != t.is_t();
            for i in 0..3 {
                for kk in 0..4 {
                    let want = if stored_row_major {
                        5 + i * q.lda + kk
                    } else {
                        5 + kk * q.lda + i
                    };
                    assert_eq!(s.index(i, kk), want, "{layout:?} {t:?} ({i},{kk})");
                }
            }
            assert!(s.buffer_len() > s.index(2, 3));
        }
    }

    #[test]
    fn row_major_becomes_column_major_by_swapping() {
        let mut r = p(Layout::RowMajor, Trans::T, Trans::N, 5, 7, 3);
        r.a_offset = 1;
        r.b_offset = 2;
        let c = r.column_major();
        assert_eq!((c.m, c.n, c.k), (7, 5, 3));
        assert_eq!((c.trans_a, c.trans_b), (Trans::N, Trans::T));
        assert_eq!((c.lda, c.ldb, c.ldc), (r.ldb, r.lda, r.ldc));
        assert_eq!((c.a_offset, c.b_offset), (2, 1));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn both_normal_forms_address_every_element_alike() {
        for layout in [Layout::ColMajor, Layout::RowMajor] {
            for (ta, tb) in [
                (Trans::N, Trans::N),
                (Trans::T, Trans::N),
                (Trans::N, Trans::T),
            ] {
                let mut q = p(layout, ta, tb, 5, 7, 3);
                q.lda += 1;
                q.c_offset = 2;
                for form in [q.row_major(), q.column_major()] {
                    assert!(form.validate().is_ok());
                    // C(i, j) of the original is element (j, i) of a swapped form.
                    let swapped = form.layout != q.layout;
                    let (s0, s1) = (q.storage(Matrix::C), form.storage(Matrix::C));
                    for i in 0..5 {
                        for j in 0..7 {
                            let there = if swapped {
                                s1.index(j, i)
                            } else {
                                s1.index(i, j)
                            };
                            assert_eq!(s0.index(i, j), there, "{layout:?} {ta:?}{tb:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn parsers_accept_the_usual_spellings() {
        assert_eq!(Precision::parse("double").unwrap(), Precision::F64);
        assert_eq!(Layout::parse("row-major").unwrap(), Layout::RowMajor);
        assert_eq!(Trans::parse("T").unwrap(), Trans::T);
        assert!(Trans::parse("x").is_err() && Layout::parse("diag").is_err());
    }
}
