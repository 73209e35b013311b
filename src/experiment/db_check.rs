//! The measured half of `gemmlab db check`: is each entry's configuration still
//! the fastest the database knows at the entry's own size? Its configuration
//! and every other configuration the database holds for the same kernel,
//! toolchain and precision (tuned at other sizes) are timed at the entry's size,
//! interleaved, checked like every measurement; a neighbour faster by more than
//! the margin beats the entry.

use crate::error::Result;
use crate::gemm::driver::{Session, Source};
use crate::gemm::problem::Template;
use crate::kernel::builtin::{self, Config, Hints};
use crate::measure::progress::Progress;
use crate::measure::Plan;
use crate::results::bests::{Best, Database};
use crate::results::evidence::{is_spec_entry, name, Doubt, Finding};
use crate::results::Measurement;

use super::gemm::{measure_items, Lane, Point, Problem};

/// What the check measured: its findings and every row it timed.
pub struct Checked {
    pub findings: Vec<Finding>,
    pub rows: Vec<Measurement>,
    /// Entries with no neighbour to time against, or whose toolchain has no session.
    pub skipped: Vec<(usize, String)>,
}

/// The configurations an entry is timed against: every other entry's of the same
/// kernel, toolchain and precision (plain calls), distinct, that the kernel takes.
fn neighbours<'a>(db: &'a Database, e: &Best) -> Vec<&'a Best> {
    let mut seen: Vec<(&Config, &Hints)> = vec![(&e.config, &e.hints)];
    let mut out = Vec::new();
    for o in &db.entries {
        let same = o.kernel == e.kernel
            && o.toolchain == e.toolchain
            && o.precision == e.precision
            && o.call.is_none();
        if !same || seen.contains(&(&o.config, &o.hints)) {
            continue;
        }
        let takes = builtin::find(&o.kernel).is_ok_and(|s| {
            s.with_precision(&o.config, o.precision)
                .and_then(|c| s.validate(&c))
                .is_ok()
        });
        if takes {
            seen.push((&o.config, &o.hints));
            out.push(o);
        }
    }
    out
}

/// Times each chosen entry (`chosen`: indices into `db.entries`) against its
/// neighbours' configurations at its own size. `margin`: how much faster (0.03:
/// 3%) a neighbour must be to beat it.
pub fn beaten(
    sessions: &mut [Session],
    db: &Database,
    chosen: &[usize],
    plan: &Plan,
    seed: u64,
    margin: f64,
    progress: &Progress,
) -> Result<Checked> {
    let mut out = Checked {
        findings: Vec::new(),
        rows: Vec::new(),
        skipped: Vec::new(),
    };
    for &i in chosen {
        let e = &db.entries[i];
        progress.set_message(name(e));
        let session = sessions
            .iter()
            .position(|s| s.backend.borrow().toolchain() == e.toolchain);
        let spec = builtin::find(&e.kernel).ok();
        let (Some(session), Some(spec), false) =
            (session, spec, is_spec_entry(e) || e.call.is_some())
        else {
            out.skipped.push((
                i,
                "not a plain GEMM entry of a toolchain this run opened".into(),
            ));
            progress.inc(1);
            continue;
        };
        let others = neighbours(db, e);
        if others.is_empty() {
            out.skipped
                .push((i, "no other configuration to time it against".into()));
            progress.inc(1);
            continue;
        }
        let call = Template {
            precision: e.precision,
            ..Template::plain()
        }
        .at(e.m, e.n, e.k)?;
        let problem = match Problem::prepare(sessions, &call, seed, plan, progress) {
            Ok(p) => p,
            Err(status) => {
                let why = status
                    .reason()
                    .unwrap_or("the size cannot run here")
                    .to_string();
                out.skipped.push((i, why));
                progress.inc(1);
                continue;
            }
        };
        let point = |b: &Best, label: String| Point {
            spec,
            config: b.config.clone(),
            hints: b.hints.clone(),
            label: Some(label),
        };
        let mut points = vec![point(e, format!("the entry at {}", e.size_label()))];
        points.extend((others.iter()).map(|o| {
            point(
                o,
                format!("the configuration of the {} entry", o.size_label()),
            )
        }));
        let lane = Lane {
            session,
            source: Source::Native,
            variant: None,
        };
        let items: Vec<(&Point, Lane)> = points.iter().map(|p| (p, lane.clone())).collect();
        let rows = measure_items(sessions, &items, &problem, plan, "db check", &[]);
        sessions[session].unload();
        if let Some(f) = judge(i, &rows, margin) {
            out.findings.push(f);
        }
        out.rows.extend(rows);
        progress.inc(1);
    }
    Ok(out)
}

/// The fastest checked neighbour, where it beats the entry (the first row) by more
/// than `margin`; a failed entry row is a finding too.
fn judge(entry: usize, rows: &[Measurement], margin: f64) -> Option<Finding> {
    let (first, rest) = rows.split_first()?;
    let median = |r: &Measurement| {
        r.time
            .as_ref()
            .filter(|_| r.status.is_ok())
            .map(|t| t.median_ns)
    };
    let Some(own) = median(first) else {
        let why = first.status.reason().unwrap_or("it failed");
        return Some(Finding {
            entry,
            doubt: Doubt::Invalid,
            words: format!("its configuration failed at its own size: {why}"),
        });
    };
    let (best, ns) = rest
        .iter()
        .filter_map(|r| median(r).map(|t| (r, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let gain = own / ns - 1.0;
    (gain > margin).then(|| Finding {
        entry,
        doubt: Doubt::Beaten,
        words: format!(
            "{} runs {:.1}% faster at this size ({:.0} us against {:.0} us, medians of one interleaved run)",
            best.label.as_deref().unwrap_or("another configuration"),
            gain * 100.0,
            ns / 1e3,
            own / 1e3
        ),
    })
}
