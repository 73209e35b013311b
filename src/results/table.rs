//! Plain-text tables for the terminal.

use crate::backend::Toolchain;
use crate::results::Measurement;

fn cell(m: Option<&Measurement>) -> [String; 6] {
    let Some(m) = m else {
        return [
            "-".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ];
    };
    let r = m.resources.as_ref();
    // "-": the device's compiler reports no resources at all (PoCL), or the kernel
    // is not built for this device (n/a); "?": one it did not report.
    let unknown = match reports_nothing(m) || not_built(m) {
        true => "-",
        false => "?",
    };
    let regs = match (m.cap_exceeded(), r.and_then(|r| r.registers)) {
        // More than the cap asked: the compiler did not apply it.
        (Some((used, cap)), _) => format!("{used}>cap{cap}"),
        (None, v) => v.map_or(unknown.into(), |v| v.to_string()),
    };
    let spills = match r.map(|r| (r.spill_stores_bytes, r.spill_loads_bytes)) {
        Some((Some(s), Some(l))) => format!("{s}/{l}"),
        _ => unknown.into(),
    };
    let occ = m
        .occupancy
        .map_or(unknown.into(), |o| format!("{:.0}%", o * 100.0));
    match (m.status.is_ok(), m.gflops, m.time) {
        (true, Some(g), Some(t)) => [
            // "x200": each sample was a batch of 200 launches; "T": throttled.
            if t.batch > 1 {
                format!(
                    "{g:.1} ±{:.1}% x{}{}",
                    t.spread_pct(),
                    t.batch,
                    throttle_mark(m)
                )
            } else {
                format!("{g:.1} ±{:.1}%{}", t.spread_pct(), throttle_mark(m))
            },
            m.vs_vendor
                .map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
            regs,
            spills,
            occ,
            "ok".into(),
        ],
        _ => [
            m.status.label().to_string(),
            "-".into(),
            regs,
            spills,
            occ,
            m.status.label().to_string(),
        ],
    }
}

/// " T" after the speed of a measurement whose GPU was throttled.
fn throttle_mark(m: &Measurement) -> &'static str {
    if m.clocks.as_ref().is_some_and(|c| c.throttled()) {
        " T"
    } else {
        ""
    }
}

/// The line that explains "T", when any row has it.
fn throttle_legend(rows: &[Measurement]) -> String {
    let mut reasons: Vec<String> = Vec::new();
    for c in rows.iter().filter_map(|r| r.clocks.as_ref()) {
        for r in c.limiting_reasons() {
            if !reasons.contains(&r) {
                reasons.push(r);
            }
        }
    }
    if reasons.is_empty() {
        return String::new();
    }
    format!(
        "T: the GPU was throttled ({}) before or after the timed launches (NVML)\n",
        reasons.join(", ")
    )
}

/// kernel x toolchain -> GFLOP/s (median, IQR), % of cuBLAS, registers, spills
/// (store/load bytes), occupancy, check. Failure reasons follow as notes.
/// Whether a compiled row's compiler reported none of its resources (a CPU device).
fn reports_nothing(m: &Measurement) -> bool {
    m.compile_ms.is_some()
        && m.occupancy.is_none()
        && m.resources.as_ref().is_none_or(|r| {
            r.registers.is_none() && r.spill_stores_bytes.is_none() && r.spill_loads_bytes.is_none()
        })
}

/// A kernel that cannot run on this device, so was never compiled for it.
fn not_built(m: &Measurement) -> bool {
    matches!(m.status, crate::gemm::driver::Status::Unavailable(_)) && m.compile_ms.is_none()
}

/// Says what "-" in the resource columns means, where a row has it.
fn nothing_legend(rows: &[Measurement]) -> String {
    let n_a = match rows.iter().any(not_built) {
        true => "regs, spills, occ \"-\" on an n/a row: the kernel is not built for this device (why: below)\n",
        false => "",
    };
    n_a.to_string()
        + match rows.iter().any(reports_nothing) {
        true => "regs, spills, occ \"-\": this device's compiler reports none (a CPU device); `gemmlab build --kernel K --arch sm_35` (or sweep --arch) answers for an NVIDIA GPU without one\n",
        false => "",
    }
}

/// "kernel", then each column under each toolchain's name.
fn header(toolchains: &[Toolchain], columns: &[&str]) -> Vec<String> {
    let per = toolchains
        .iter()
        .flat_map(|tc| columns.iter().map(move |h| format!("{tc} {h}")));
    std::iter::once("kernel".to_string()).chain(per).collect()
}

/// Kernel `k`'s row on `tc`, its failure's reason noted.
fn row_of<'a>(
    rows: &'a [Measurement],
    k: &str,
    tc: Toolchain,
    notes: &mut Vec<String>,
) -> Option<&'a Measurement> {
    let m = rows.iter().find(|r| r.kernel == k && r.toolchain == tc);
    if let Some(reason) = m.and_then(|m| m.status.reason()) {
        notes.push(format!("  {k} on {tc}: {}", said(reason)));
    }
    m
}

pub fn compare_table(rows: &[Measurement], toolchains: &[Toolchain]) -> String {
    let kernels = kernels_in(rows);
    let columns = [
        "GFLOP/s (IQR)",
        "%cuBLAS",
        "regs",
        "spill st/ld",
        "occ",
        "check",
    ];
    let mut table: Vec<Vec<String>> = vec![header(toolchains, &columns)];
    let mut notes = Vec::new();
    for k in &kernels {
        let mut line = vec![k.to_string()];
        for tc in toolchains {
            let m = row_of(rows, k, *tc, &mut notes);
            if let Some((used, cap)) = m.and_then(Measurement::cap_exceeded) {
                notes.push(format!(
                    "  {k} on {tc}: {used} registers used, more than the cap of {cap}: the compiler did not apply it"
                ));
            }
            line.extend(cell(m));
        }
        table.push(line);
    }
    let legend = throttle_legend(rows) + &paired_legend(rows) + &nothing_legend(rows);
    render(&table, |c| c < 1, &legend, &notes)
}

/// The line that says what %cuBLAS is against, when a row's cuBLAS was timed with it.
fn paired_legend(rows: &[Measurement]) -> String {
    match rows.iter().any(|r| r.vendor_paired.is_some()) {
        true => "%cuBLAS: against cuBLAS timed in the same interleaved repetitions as the row; the cublas row is cuBLAS timed alone, before them\n".into(),
        false => String::new(),
    }
}

/// One line per kernel and sweep point: per toolchain (and variant) GFLOP/s,
/// % of cuBLAS, registers (with the cap asked), spills, occupancy, status.
pub fn sweep_table(rows: &[Measurement]) -> String {
    let mut lanes: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.kernel != "cublas") {
        let lane = lane_name(r);
        if !lanes.contains(&lane) {
            lanes.push(lane);
        }
    }
    let mut points: Vec<(String, String)> = Vec::new();
    for r in rows.iter().filter(|r| r.kernel != "cublas") {
        let p = (r.kernel.clone(), r.label.clone().unwrap_or_default());
        if !points.contains(&p) {
            points.push(p);
        }
    }
    let mut table = vec![{
        let mut h = vec!["kernel".to_string(), "point".to_string()];
        for l in &lanes {
            for c in ["GFLOP/s", "%cuBLAS", "regs", "spill st/ld", "occ"] {
                h.push(format!("{l} {c}"));
            }
        }
        h
    }];
    let mut notes = Vec::new();
    for (kernel, label) in &points {
        let mut line = vec![kernel.clone(), label.clone()];
        for l in &lanes {
            let m = rows.iter().find(|r| {
                &r.kernel == kernel
                    && r.label.as_deref().unwrap_or("") == label
                    && &lane_name(r) == l
            });
            let c = cell(m);
            if let Some(reason) = m.and_then(|m| m.status.reason()) {
                notes.push(format!("  {kernel} {label} on {l}: {}", said(reason)));
            }
            line.extend([
                c[0].clone(),
                c[1].clone(),
                c[2].clone(),
                c[3].clone(),
                c[4].clone(),
            ]);
        }
        table.push(line);
    }
    let extra = rows
        .iter()
        .find(|r| r.kernel == "cublas" && r.status.is_ok())
        .and_then(|r| r.gflops)
        .map_or(String::new(), |v| format!("cuBLAS: {v:.1} GFLOP/s\n"));
    let legend = extra + &throttle_legend(rows) + &paired_legend(rows);
    render(&table, |c| c < 2, &legend, &notes)
}

/// What a toolchain ignored of what a sweep asked (its build notes say so), once
/// per toolchain and reason: "note: opencl ignored it: PoCL has no register-cap option".
pub fn ignored_legend(rows: &[Measurement]) -> String {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for r in rows {
        let why = r
            .build_notes
            .iter()
            .filter_map(|n| n.split_once(" ignored: "));
        for (_, why) in why {
            let key = (lane_name(r), why);
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
    }
    let line = |(lane, why): &(String, &str)| format!("note: {lane} ignored it: {why}\n");
    seen.iter().map(line).collect()
}

fn lane_name(r: &Measurement) -> String {
    match &r.variant {
        Some(v) => format!("{}[{v}]", r.toolchain),
        None => r.toolchain.to_string(),
    }
}

/// Aligned columns (those `left` picks to the left, the rest to the right), a
/// rule under the header, then `extra` and the failure reasons.
pub fn render(
    table: &[Vec<String>],
    left: impl Fn(usize) -> bool,
    extra: &str,
    notes: &[String],
) -> String {
    let cols = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in table.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if left(c) {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
            out.push('\n');
        }
    }
    out.push_str(extra);
    if !notes.is_empty() {
        out.push_str("why:\n");
        for n in notes {
            out.push_str(n);
            out.push('\n');
        }
    }
    out
}

/// A row's reason as a terminal shows it: its first line, and where that line
/// introduces more (a compiler's "rejected X:" before its log) the next lines
/// that say something, up to six; the whole is in the results.
fn said(reason: &str) -> String {
    let mut lines = reason
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or(reason).to_string();
    if !first.trim_end().ends_with(':') {
        return first;
    }
    let more: Vec<&str> = lines.take(6).collect();
    let mut out = first;
    for l in more {
        out.push_str("\n      ");
        out.push_str(l.trim_start());
    }
    out
}

/// The kernels of `rows` in the order they first appear.
fn kernels_in(rows: &[Measurement]) -> Vec<&str> {
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    kernels
}

/// Users' kernels at one size: per toolchain the median time (IQR), GFLOP/s and
/// GB/s where the spec states its work, registers, spills, occupancy, check.
pub fn spec_table(rows: &[Measurement], toolchains: &[Toolchain]) -> String {
    let kernels = kernels_in(rows);
    let columns = [
        "time us (IQR)",
        "GFLOP/s",
        "GB/s",
        "regs",
        "spill st/ld",
        "occ",
        "check",
    ];
    let mut table = vec![header(toolchains, &columns)];
    let mut notes = Vec::new();
    for k in &kernels {
        let mut line = vec![k.to_string()];
        for tc in toolchains {
            let m = row_of(rows, k, *tc, &mut notes);
            let [speed, _, regs, spills, occ, mut check] = cell(m);
            let poison_only = m
                .and_then(|m| m.check.as_ref())
                .and_then(|c| c.method.as_deref());
            if check == "ok" && poison_only.is_some_and(|w| w.starts_with("poison only")) {
                check = "ok (poison only)".into();
            }
            let Some(m) = m else {
                line.extend([
                    "-".to_string(),
                    String::new(),
                    String::new(),
                    regs,
                    spills,
                    occ,
                    check,
                ]);
                continue;
            };
            let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            let time = match (m.status.is_ok(), m.time) {
                (true, Some(t)) => format!(
                    "{:.2} ±{:.1}%{}{}",
                    t.median_ns / 1e3,
                    t.spread_pct(),
                    if t.batch > 1 {
                        format!(" x{}", t.batch)
                    } else {
                        String::new()
                    },
                    throttle_mark(m)
                ),
                _ => speed,
            };
            line.extend([time, rate(m.gflops), rate(m.gbs), regs, spills, occ, check]);
        }
        table.push(line);
    }
    render(&table, |c| c < 1, &throttle_legend(rows), &notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Measurement> {
        include_str!("../../tests/fixtures/report/compare/measurements.jsonl")
            .lines()
            .take(3)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn what_a_toolchain_ignored_is_said_once_per_toolchain_and_reason() {
        let mut rows = rows();
        assert_eq!(ignored_legend(&rows), "");
        for (r, cap) in rows.iter_mut().zip([64, 32, 16]) {
            r.build_notes = vec![format!(
                "register cap {cap} ignored: PoCL has no register-cap option"
            )];
        }
        let lanes: Vec<String> = rows.iter().map(lane_name).collect();
        let legend = ignored_legend(&rows);
        for lane in &lanes {
            let line = format!("note: {lane} ignored it: PoCL has no register-cap option\n");
            assert_eq!(legend.matches(&line).count(), 1, "{legend}");
        }
    }

    #[test]
    fn a_kernel_not_built_here_shows_dashes_not_question_marks() {
        let mut rows = rows();
        let row = &mut rows[0];
        row.status = crate::gemm::driver::Status::Unavailable("not an NVIDIA GPU".into());
        (row.compile_ms, row.resources, row.occupancy) = (None, None, None);
        let (kernel, tc) = (row.kernel.clone(), row.toolchain);
        let t = compare_table(&rows[..1], &[tc]);
        let line = t.lines().find(|l| l.starts_with(&kernel)).unwrap();
        assert!(!line.contains('?') && line.contains(" - "), "{t}");
        assert!(t.contains("on an n/a row: the kernel is not built"), "{t}");
    }

    #[test]
    fn a_throttled_speed_is_marked_and_explained() {
        let mut rows = rows();
        let tcs = [Toolchain::Cuda, Toolchain::OpenCl];
        let plain = compare_table(&rows, &tcs);
        assert!(!plain.contains(" T"), "{plain}");
        assert!(!plain.contains("throttled"), "{plain}");
        rows[1].clocks = Some(crate::measure::clocks::test_window(false));
        assert_eq!(
            compare_table(&rows, &tcs),
            plain,
            "unthrottled clocks change nothing"
        );
        rows[2].clocks = Some(crate::measure::clocks::test_window(true));
        let marked = compare_table(&rows, &tcs);
        let gemm1 = marked.lines().find(|l| l.starts_with("gemm1")).unwrap();
        // gemm1 on CUDA (rows[1]) is not marked, on OpenCL (rows[2]) it is.
        assert_eq!(gemm1.matches("% T").count(), 1, "{marked}");
        assert!(
            marked.contains("T: the GPU was throttled (sw_power_cap)"),
            "{marked}"
        );
        assert!(sweep_table(&rows).contains("T: the GPU was throttled"));
    }
}
