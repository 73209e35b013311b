//! Measurements made on a device that have no speed, with their reasons
//! (offline rows have none by design).

use crate::results::Measurement;

use super::{Data, Finding, Topic};

pub struct Failures<'a> {
    pub rows: Vec<&'a Measurement>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// `without` of `of` measurements have no speed and are left out of
    /// every comparison.
    NoSpeed {
        without: usize,
        of: usize,
        /// Each status and how many have it, in order of first appearance.
        by_status: Vec<(String, usize)>,
        /// The first few: (kernel, toolchain, size, status).
        examples: Vec<[String; 4]>,
    },
}

/// How many examples a finding names.
const EXAMPLES: usize = 4;

pub fn analyse(data: &Data) -> Failures<'_> {
    let rows: Vec<&Measurement> = data
        .measured()
        .map(|r| r.m)
        .filter(|m| !m.status.is_ok())
        .collect();
    let mut findings = Vec::new();
    if !rows.is_empty() {
        let mut by_status: Vec<(String, usize)> = Vec::new();
        for m in &rows {
            let l = m.status.label();
            match by_status.iter_mut().find(|(x, _)| x == l) {
                Some((_, c)) => *c += 1,
                None => by_status.push((l.to_string(), 1)),
            }
        }
        let examples = rows
            .iter()
            .take(EXAMPLES)
            .map(|m| {
                [
                    m.kernel.clone(),
                    super::data::series_name(m),
                    m.size_label(),
                    m.status.label().to_string(),
                ]
            })
            .collect();
        let of = data.measured().count();
        findings.push(
            Finding::new(
                Topic::Failures,
                super::Kind::Failures(Kind::NoSpeed {
                    without: rows.len(),
                    of,
                    by_status,
                    examples,
                }),
            )
            .weight(rows.len() as f64 / of.max(1) as f64),
        );
    }
    Failures { rows, findings }
}
