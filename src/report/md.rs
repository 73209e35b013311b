//! Markdown tables and the one set of formatting helpers every section uses.
//!
//! The conventions, the same in tables and sentences:
//! - a value that was not measured is "-" ([`MISSING`]); one that was measured
//!   but is not known is "unknown" ([`UNKNOWN`]); neither is ever shown as 0;
//! - a share of a reference (of cuBLAS, of a peak) is a percentage with one
//!   decimal, "76.5%" ([`pct`]);
//! - a change is signed with one decimal in tables, "+12.3%" ([`change`]), and
//!   a whole percentage with its direction in sentences, "61% faster"
//!   ([`faster`]); a change of `SAME_SPEED` or less is "about as fast";
//! - a ratio has two decimals, "1.11" ([`ratio`]); a multiple of a reference
//!   "0.55x" ([`times`]);
//! - speeds (GFLOP/s, GB/s) are whole from 100, with one decimal from 10 and
//!   two below, as CPU devices reach ([`speed`]); seconds likewise ([`secs`]);
//! - counts agree with their nouns: [`plural`] ("1 run", "3 runs"), [`verb`].

use crate::results::Measurement;
pub use crate::util::words::{plural, verb};

use super::data;

/// A Markdown table: columns of numbers right-aligned, others left-aligned;
/// short rows are padded with empty cells.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let cols = header.len();
    let align: String = (0..cols)
        .map(|c| {
            let cells = rows.iter().filter_map(|r| r.get(c));
            let known = |v: &&String| !matches!(v.as_str(), "" | MISSING | UNKNOWN);
            match c > 0 && cells.filter(known).all(|v| is_number(v)) {
                true => " ---: |",
                false => " :--- |",
            }
        })
        .collect();
    let empty = String::new();
    let body = (rows.iter()).map(|r| row(r.iter().chain(std::iter::repeat(&empty)).take(cols)));
    row(header.iter()) + "|" + &align + "\n" + &body.collect::<String>()
}

/// "123", "-4.5%", "+3%", "12 ±0.3%", "0/0", "1.00": starts like a number.
fn is_number(v: &str) -> bool {
    let t = v.trim_start_matches(['+', '-']);
    t.starts_with(|c: char| c.is_ascii_digit())
}

fn row<'a>(cells: impl Iterator<Item = &'a String>) -> String {
    cells.fold("|".to_string(), |s, c| s + " " + &escape(c) + " |") + "\n"
}

/// Keeps a cell on one line and its pipes literal.
pub fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The first line of a failure reason, shortened for a table note.
pub fn short_reason(r: &str) -> String {
    let first = r
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let short: String = first.chars().take(220).collect();
    match first.chars().count() > 220 {
        true => short + " ...",
        false => short,
    }
}

pub fn h(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// " T" after the speed of a measurement whose GPU was throttled (NVML).
pub fn throttle_mark(m: &Measurement) -> &'static str {
    if m.clocks.as_ref().is_some_and(|c| c.throttled()) {
        " T"
    } else {
        ""
    }
}

/// GFLOP/s cell: "-" without a measurement, the status word when it has no
/// speed (WRONG, n/a, compile error, ...), "unknown" when ok without a speed;
/// a speed measured on a throttled GPU ends in " T".
pub fn gflops(m: Option<&Measurement>) -> String {
    match m {
        None => "-".into(),
        Some(m) if !m.status.is_ok() => m.status.label().to_string(),
        Some(m) => m
            .gflops
            .filter(|g| g.is_finite())
            .map_or("unknown".into(), |g| format!("{g:.0}{}", throttle_mark(m))),
    }
}

/// GFLOP/s with the spread of the repetitions (IQR as % of the median).
pub fn gflops_spread(m: Option<&Measurement>) -> String {
    let ok = m.filter(|m| m.status.is_ok());
    match ok.and_then(|m| Some((m, m.gflops.filter(|g| g.is_finite())?, m.time?))) {
        Some((m, g, t)) => format!("{g:.0} ±{:.1}%{}", t.spread_pct(), throttle_mark(m)),
        None => gflops(m),
    }
}

/// Not measured.
pub const MISSING: &str = "-";
/// Measured, but the value is not known.
pub const UNKNOWN: &str = "unknown";

/// The text, or "-" when there is none.
pub fn or_missing(v: Option<&str>) -> String {
    v.unwrap_or(MISSING).to_string()
}

/// A value, or "unknown" when it was not recorded.
pub fn or_unknown<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(UNKNOWN.into(), |v| v.to_string())
}

/// A register cap asked: "64", or "none" for no cap.
pub fn cap_label(c: Option<u32>) -> String {
    c.map_or("none".into(), |c| c.to_string())
}

/// A speed: whole from 100, one decimal from 10, two below (CPU devices
/// reach a few GFLOP/s).
pub fn speed(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// Seconds: whole from 100, one decimal below.
pub fn secs(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A multiple of a reference, "0.55x"; "-" when unknown.
pub fn times(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or(MISSING.into(), |v| format!("{v:.2}x"))
}

/// A relative change in words: "61% faster", "6% slower", "about as fast".
pub fn faster(change: f64) -> String {
    if crate::analysis::stats::is_same(change) {
        "about as fast".into()
    } else if change > 0.0 {
        format!("{:.0}% faster", change * 100.0)
    } else {
        format!("{:.0}% slower", -change * 100.0)
    }
}

/// Fraction as a percentage, "-" if unknown.
pub fn pct(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

pub fn vs_vendor(m: Option<&Measurement>) -> String {
    match m {
        Some(m) if m.status.is_ok() => pct_or_unknown(m.vs_vendor),
        _ => MISSING.into(),
    }
}

/// A resource of a measurement: "-" without one, "unknown" when not recorded.
fn opt<T: std::fmt::Display>(
    m: Option<&Measurement>,
    f: impl Fn(&Measurement) -> Option<T>,
) -> String {
    m.map_or(MISSING.into(), |m| or_unknown(f(m)))
}

pub fn registers(m: Option<&Measurement>) -> String {
    opt(m, data::registers)
}

/// "stores/loads" bytes.
pub fn spills(m: Option<&Measurement>) -> String {
    opt(m, |m| {
        let r = m.resources.as_ref()?;
        let (stores, loads) = (r.spill_stores_bytes?, r.spill_loads_bytes?);
        Some(format!("{stores}/{loads}"))
    })
}

pub fn stack(m: Option<&Measurement>) -> String {
    opt(m, |m| m.resources.as_ref()?.stack_frame_bytes)
}

pub fn shared(m: Option<&Measurement>) -> String {
    opt(m, |m| m.resources.as_ref()?.shared_bytes)
}

pub fn occupancy(m: Option<&Measurement>) -> String {
    m.map_or(MISSING.into(), |m| pct_or_unknown(m.occupancy))
}

/// "a/b" as a ratio with two decimals, "-" when either is unknown.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => format!("{:.2}", a / b),
        _ => "-".into(),
    }
}

/// Signed relative change of `new` against `base`, e.g. "+12.3%".
pub fn change(new: Option<f64>, base: Option<f64>) -> String {
    match (new, base) {
        (Some(n), Some(b)) if b > 0.0 && n.is_finite() => format!("{:+.1}%", (n / b - 1.0) * 100.0),
        _ => "-".into(),
    }
}

/// A Markdown link target: spaces and parentheses escaped.
pub fn link(path: &str) -> String {
    path.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// "a", "a and b", "a, b and c".
pub fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped,
/// each space a hyphen. Used to link a finding to the section with its numbers.
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// "M = N = K = 4096", or "M x N x K = 10 x 20 x 30".
pub fn size_label_long(s: (usize, usize, usize)) -> String {
    if s.0 == s.1 && s.1 == s.2 {
        format!("M = N = K = {}", s.0)
    } else {
        format!("M x N x K = {} x {} x {}", s.0, s.1, s.2)
    }
}

/// A share that was measured but may not be known: "76.5%", or "unknown".
pub fn pct_or_unknown(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or(UNKNOWN.into(), |v| pct(Some(v)))
}

/// A table from a list of columns, each its header and how it reads an item.
pub fn table_of<T, F: Fn(&T) -> String>(columns: &[(&str, F)], items: &[T]) -> String {
    let header: Vec<String> = columns.iter().map(|c| c.0.to_string()).collect();
    let rows: Vec<Vec<String>> = (items.iter())
        .map(|x| columns.iter().map(|c| (c.1)(x)).collect())
        .collect();
    table(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_pipes_and_pad_rows() {
        let t = table(&h(&["a", "b"]), &[vec!["x|y".into()]]);
        assert_eq!(t, "| a | b |\n| :--- | ---: |\n| x\\|y |  |\n");
        let t = table(
            &h(&["k", "n", "t"]),
            &[vec!["a".into(), "1".into(), "cuda".into()]],
        );
        assert!(t.contains("| :--- | ---: | :--- |"), "{t}");
        assert_eq!(table(&h(&["a"]), &[]), "");
    }

    #[test]
    fn words_for_changes_and_multiples() {
        assert_eq!(faster(0.61), "61% faster");
        assert_eq!(faster(-0.06), "6% slower");
        assert_eq!(faster(0.02), "about as fast");
        assert_eq!(times(Some(0.554)), "0.55x");
        assert_eq!(or_unknown(None::<u32>), "unknown");
    }

    #[test]
    fn unknowns_are_never_zero() {
        assert_eq!(gflops(None), "-");
        assert_eq!(pct(None), "-");
        assert_eq!(ratio(Some(1.0), None), "-");
        assert_eq!(change(Some(110.0), Some(100.0)), "+10.0%");
    }

    #[test]
    fn anchors_as_github_makes_them() {
        assert_eq!(
            anchor("Speed: kernels x toolchains x sizes (compare)"),
            "speed-kernels-x-toolchains-x-sizes-compare"
        );
        assert_eq!(
            anchor("OpenCL's PTX through the CUDA driver JIT (jit)"),
            "opencls-ptx-through-the-cuda-driver-jit-jit"
        );
        assert_eq!(
            anchor("Register tiling: RX x RY (tiling)"),
            "register-tiling-rx-x-ry-tiling"
        );
    }
}
