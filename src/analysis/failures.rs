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
    /// `without` of `of` measurements have no speed and are left out of every comparison.
    NoSpeed {
        without: usize,
        of: usize,
        /// Each status and how many have it, in order of first appearance.
        by_status: Vec<(String, usize)>,
        /// The first four: (kernel, toolchain, size, status).
        examples: Vec<[String; 4]>,
    },
}

pub fn analyse(data: &Data) -> Failures<'_> {
    let of = data.measured().count();
    let rows: Vec<&Measurement> = (data.measured().map(|r| r.m))
        .filter(|m| !m.status.is_ok())
        .collect();
    let kind = Kind::NoSpeed {
        without: rows.len(),
        of,
        by_status: super::stats::tally(rows.iter().map(|m| m.status.label().to_string())),
        examples: (rows.iter().take(4))
            .map(|m| {
                let (series, status) = (super::data::series_name(m), m.status.label());
                [m.kernel.clone(), series, m.size_label(), status.into()]
            })
            .collect(),
    };
    let weight = rows.len() as f64 / of.max(1) as f64;
    let f = Finding::new(Topic::Failures, super::Kind::Failures(kind)).weight(weight);
    let findings = if rows.is_empty() { vec![] } else { vec![f] };
    Failures { rows, findings }
}
