//! What the report concludes, as data. Result records go in; typed findings
//! (what was compared, the numbers, the effect size, the chart that shows it)
//! and the rows of every table come out. There are no words here: `report`
//! renders these, and writes the findings as `findings.json` too.
//!
//! A section is one function here (`analyse`, returning its own struct with
//! its rows and `findings`) and one in `report` that renders that struct; a
//! finding's kind is an enum variant of its section, so the words for it live
//! in exactly one rendering function.

pub mod attribution;
pub mod blas;
pub mod clocks;
pub mod compare;
pub mod data;
pub mod failures;
pub mod lecture;
pub mod offline;
pub mod roofline;
pub mod routine;
pub mod runtime;
pub mod simt;
pub mod stats;
pub mod sweeps;
pub mod tc;
pub mod tune;
pub mod user;

pub use data::{Data, Rec, Run};

/// Relative speed changes at or below this are reported as no change.
pub const SAME_SPEED: f64 = 0.03;

/// What a finding is about. The summary takes the largest finding of each
/// topic first, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    VsVendor,
    Toolchains,
    /// Where a CUDA-OpenCL gap comes from: each front end's PTX through each
    /// runtime (`sweep jit`).
    Runtime,
    /// The SIMT family against cuBLAS, and where its time goes (ncu).
    Simt,
    /// The GEMM routine against cuBLAS over a suite of calls.
    Routine,
    /// The tensor-core family: speed next to cuBLAS and the accuracy gate.
    TensorCores,
    Tuning,
    /// Users' kernels from spec files.
    UserKernels,
    RegisterCaps,
    Tiling,
    Hints,
    Jit,
    Failures,
    Clocks,
    /// The tutorial's Kepler claims, from rows compiled offline for sm_35.
    Kepler,
    /// Compilers across architectures: the atlas, compiled offline.
    Offline,
    /// Front end or assembler: each front end's PTX through each assembler.
    Attribution,
}

impl Topic {
    pub const ALL: [Topic; 17] = [
        Topic::VsVendor,
        Topic::Toolchains,
        Topic::Runtime,
        Topic::Simt,
        Topic::Routine,
        Topic::TensorCores,
        Topic::Tuning,
        Topic::UserKernels,
        Topic::RegisterCaps,
        Topic::Tiling,
        Topic::Hints,
        Topic::Jit,
        Topic::Failures,
        Topic::Clocks,
        Topic::Kepler,
        Topic::Offline,
        Topic::Attribution,
    ];
}

/// One thing the data shows.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub topic: Topic,
    /// The size of the effect, a relative difference (0.25 = 25%; registers
    /// and spills in the offline topics); ranks findings for the summary.
    pub weight: f64,
    /// Whether the summary may show it; `false` for a detail that a roll-up
    /// finding of the same section covers.
    pub headline: bool,
    /// The stem of the chart that shows it (`charts/<stem>.svg`), if any;
    /// without one the finding points at its section's table.
    pub chart: Option<String>,
    /// What it says and its numbers: `"kind"` and the kind's fields in JSON.
    #[serde(flatten)]
    pub kind: Kind,
}

impl Finding {
    pub fn new(topic: Topic, kind: Kind) -> Finding {
        Finding {
            topic,
            weight: 0.0,
            headline: true,
            chart: None,
            kind,
        }
    }

    pub fn weight(mut self, w: f64) -> Finding {
        // A ratio of missing or zero speeds ranks last rather than first.
        self.weight = if w.is_finite() { w.abs() } else { 0.0 };
        self
    }

    pub fn chart(mut self, stem: Option<String>) -> Finding {
        self.chart = stem;
        self
    }

    /// A detail: listed under "All findings", never in the summary.
    pub fn detail(mut self) -> Finding {
        self.headline = false;
        self
    }
}

/// Every kind of finding, by section. Each section's enum is tagged with
/// `"kind"` in JSON.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum Kind {
    Clocks(clocks::Kind),
    Failures(failures::Kind),
    Simt(simt::Kind),
    User(user::Kind),
    Compare(compare::Kind),
    Blas(blas::Kind),
    Lecture(lecture::Kind),
    Sweeps(sweeps::Kind),
    Offline(offline::Kind),
    Tune(tune::Kind),
    Attribution(attribution::Kind),
    Routine(routine::Kind),
    Tc(tc::Kind),
    Runtime(runtime::Kind),
}

/// The most findings the summary shows.
pub const SUMMARY_MAX: usize = 10;
/// The most summary findings of one topic, so no topic crowds out the others.
pub const SUMMARY_PER_TOPIC: usize = 2;

/// The summary, as indices into `findings`: the largest headline finding of
/// each topic in `Topic` order, then the next largest by weight, at most
/// `SUMMARY_PER_TOPIC` of a topic and `SUMMARY_MAX` in all; ordered by topic,
/// largest first. With findings in more topics than places, the topics late
/// in the order (the offline ones last) are left to the full list.
pub fn summary(findings: &[&Finding]) -> Vec<usize> {
    let topic = |i: usize| findings[i].topic;
    let mut ranked: Vec<usize> = (0..findings.len())
        .filter(|&i| findings[i].headline)
        .collect();
    // Stable: equal weights keep the order the sections gave them.
    ranked.sort_by(|&a, &b| findings[b].weight.total_cmp(&findings[a].weight));
    let first_of = |t: Topic| ranked.iter().copied().find(|&i| topic(i) == t);
    let mut chosen: Vec<usize> = Topic::ALL.into_iter().filter_map(first_of).collect();
    for &i in &ranked {
        let of_topic = chosen.iter().filter(|&&c| topic(c) == topic(i)).count();
        if chosen.len() < SUMMARY_MAX && !chosen.contains(&i) && of_topic < SUMMARY_PER_TOPIC {
            chosen.push(i);
        }
    }
    chosen.truncate(SUMMARY_MAX);
    let rank = |i: usize| ranked.iter().position(|&r| r == i);
    chosen.sort_by_key(|&i| (topic(i), rank(i)));
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(topic: Topic, weight: f64) -> Finding {
        Finding::new(
            topic,
            Kind::Failures(failures::Kind::NoSpeed {
                without: 1,
                of: 2,
                by_status: vec![],
                examples: vec![],
            }),
        )
        .weight(weight)
    }

    #[test]
    fn the_summary_takes_each_topic_first_then_by_weight() {
        let mut fs = vec![
            finding(Topic::Tiling, 0.9),
            finding(Topic::VsVendor, 0.1),
            finding(Topic::VsVendor, 0.5),
            finding(Topic::VsVendor, 0.4),
            finding(Topic::Hints, 0.05),
        ];
        fs.push(finding(Topic::Tiling, 0.8).detail());
        let refs: Vec<&Finding> = fs.iter().collect();
        let chosen = summary(&refs);
        // Two of VsVendor at most (0.5 then 0.4), Tiling's headline, Hints; the detail never.
        assert_eq!(chosen, vec![2, 3, 0, 4]);
    }

    #[test]
    fn the_summary_stops_at_its_maximum() {
        let fs: Vec<Finding> = Topic::ALL
            .iter()
            .flat_map(|&t| [finding(t, 0.5), finding(t, 0.4)])
            .collect();
        let refs: Vec<&Finding> = fs.iter().collect();
        let chosen = summary(&refs);
        assert_eq!(chosen.len(), SUMMARY_MAX);
        // One of each of the first ten topics: the last three wait for the full list.
        let topics: Vec<Topic> = chosen.iter().map(|&i| fs[i].topic).collect();
        assert_eq!(topics, Topic::ALL[..SUMMARY_MAX].to_vec());
    }
}
