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
    let regs = r
        .and_then(|r| r.registers)
        .map_or("?".into(), |v| v.to_string());
    let spills = match r.map(|r| (r.spill_stores_bytes, r.spill_loads_bytes)) {
        Some((Some(s), Some(l))) => format!("{s}/{l}"),
        _ => "?".into(),
    };
    let occ = m
        .occupancy
        .map_or("?".into(), |o| format!("{:.0}%", o * 100.0));
    match (m.status.is_ok(), m.gflops, m.time) {
        (true, Some(g), Some(t)) => [
            format!("{g:.1} ±{:.1}%", t.spread_pct()),
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

/// kernel x toolchain -> GFLOP/s (median, IQR), % of cuBLAS, registers, spills
/// (store/load bytes), occupancy, check. Failure reasons follow as notes.
pub fn compare_table(rows: &[Measurement], toolchains: &[Toolchain]) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    let mut header = vec!["kernel".to_string()];
    for tc in toolchains {
        for h in [
            "GFLOP/s (IQR)",
            "%cuBLAS",
            "regs",
            "spill st/ld",
            "occ",
            "check",
        ] {
            header.push(format!("{tc} {h}"));
        }
    }
    let mut table: Vec<Vec<String>> = vec![header];
    let mut notes = Vec::new();
    for k in &kernels {
        let mut line = vec![k.to_string()];
        for tc in toolchains {
            let m = rows.iter().find(|r| r.kernel == *k && r.toolchain == *tc);
            if let Some(reason) = m.and_then(|m| m.status.reason()) {
                let first = reason.lines().next().unwrap_or(reason);
                notes.push(format!("  {k} on {tc}: {first}"));
            }
            line.extend(cell(m));
        }
        table.push(line);
    }
    let cols = table[0].len();
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
                if c == 0 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (cols - 1)));
            out.push('\n');
        }
    }
    if !notes.is_empty() {
        out.push_str("why:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}
