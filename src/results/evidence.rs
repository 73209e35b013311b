//! What a database of bests can be trusted for: each entry judged against the
//! kernels as they are now (`gemmlab db check`). An entry is a claim, "this is
//! the best configuration here"; it is stale where the kernel's source changed
//! since its search, shallow where its search tried too little of its space,
//! invalid where the kernel no longer takes its configuration, and beaten where a
//! neighbour's configuration, timed at the entry's own size, is faster (that part
//! is measured: `experiment::db_check`).

use serde::Serialize;

use super::bests::{Best, Database, SHALLOW_TRIED};
use crate::kernel::builtin;

/// What is wrong with an entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Doubt {
    /// Tuned on another version of the kernel's source.
    Stale,
    /// Its search tried fewer than [`SHALLOW_TRIED`] configurations of a larger space.
    Shallow,
    /// The kernel no longer takes its configuration.
    Invalid,
    /// No built-in kernel of its name in this gemmlab.
    UnknownKernel,
    /// Another entry's configuration ran faster at this entry's size.
    Beaten,
}

impl Doubt {
    pub fn word(&self) -> &'static str {
        match self {
            Doubt::Stale => "stale",
            Doubt::Shallow => "shallow",
            Doubt::Invalid => "invalid",
            Doubt::UnknownKernel => "unknown kernel",
            Doubt::Beaten => "beaten",
        }
    }

    /// Whether a new search answers it (`db retune`).
    pub fn retunable(&self) -> bool {
        !matches!(self, Doubt::UnknownKernel)
    }
}

/// One doubt about one entry, in words.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The entry's index in `Database::entries`.
    pub entry: usize,
    pub doubt: Doubt,
    pub words: String,
}

/// "xgemm opencl f32 at 8192".
pub fn name(e: &Best) -> String {
    let call = match &e.call {
        Some(c) if !is_spec_entry(e) => format!(" [{c}]"),
        _ => String::new(),
    };
    format!(
        "{} {} {} at {}{call}",
        e.kernel,
        e.toolchain,
        e.precision.as_str(),
        e.size_label()
    )
}

/// Whether an entry is a user's spec kernel's (its call names the dimensions):
/// its source is judged where its spec is, when it is tuned again.
pub fn is_spec_entry(e: &Best) -> bool {
    // "n=4096 m=512"; a GEMM call reads "f32 row NN 4096x4096x4096 alpha=1 beta=0".
    e.call
        .as_deref()
        .is_some_and(|c| c.split_whitespace().all(|kv| kv.contains('=')))
}

/// Every doubt about every entry that needs no device: stale sources, shallow
/// searches, configurations the kernel no longer takes, unknown kernels.
pub fn audit(db: &Database) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, e) in db.entries.iter().enumerate() {
        let mut say = |doubt: Doubt, words: String| {
            out.push(Finding {
                entry: i,
                doubt,
                words,
            })
        };
        if e.shallow() {
            let space = e.space.map_or(String::new(), |n| format!(" of {n}"));
            say(
                Doubt::Shallow,
                format!(
                    "its search ({}) tried {}{space} configurations (under {SHALLOW_TRIED})",
                    e.strategy, e.tried
                ),
            );
        }
        if is_spec_entry(e) {
            continue;
        }
        let Ok(spec) = builtin::find(&e.kernel) else {
            say(
                Doubt::UnknownKernel,
                format!("no built-in kernel is named '{}' in this gemmlab", e.kernel),
            );
            continue;
        };
        let now = crate::util::keys::fnv1a(&spec.source(e.toolchain));
        if now != e.source {
            say(
                Doubt::Stale,
                format!(
                    "tuned {} on source {}; the kernel's source is {now} now",
                    e.tuned_utc.get(..10).unwrap_or(&e.tuned_utc),
                    e.source
                ),
            );
        }
        if let Err(why) = spec
            .with_precision(&e.config, e.precision)
            .and_then(|c| spec.validate(&c))
        {
            say(
                Doubt::Invalid,
                format!("the kernel refuses its configuration: {why}"),
            );
        }
    }
    out
}

/// The entries `prune` removes, with why: those no lookup should serve. An entry
/// of an older source beside one of the current source for the same call and
/// size; one whose configuration the kernel refuses; with `stale`, every entry
/// of an older source; with `shallow`, every shallow one that has a trusted entry
/// within 2x of its size.
pub fn prunable(db: &Database, stale: bool, shallow: bool) -> Vec<(usize, String)> {
    let found = audit(db);
    let has = |i: usize, d: Doubt| found.iter().any(|f| f.entry == i && f.doubt == d);
    let mut out = Vec::new();
    for (i, e) in db.entries.iter().enumerate() {
        let current = |o: &Best| {
            builtin::find(&o.kernel)
                .is_ok_and(|s| crate::util::keys::fnv1a(&s.source(o.toolchain)) == o.source)
        };
        let same_slot = |o: &Best| {
            o.kernel == e.kernel
                && o.toolchain == e.toolchain
                && o.precision == e.precision
                && o.call == e.call
                && (o.m, o.n, o.k) == (e.m, e.n, e.k)
        };
        let why = if has(i, Doubt::Invalid) {
            Some("the kernel refuses its configuration".to_string())
        } else if has(i, Doubt::Stale) && db.entries.iter().any(|o| same_slot(o) && current(o)) {
            Some("an entry of the current source holds its call and size".to_string())
        } else if stale && has(i, Doubt::Stale) {
            Some("tuned on an older source (--stale)".to_string())
        } else if shallow && has(i, Doubt::Shallow) && has_trusted_near(db, i) {
            Some("shallow, and a trusted entry within 2x serves its size (--shallow)".to_string())
        } else {
            None
        };
        if let Some(w) = why {
            out.push((i, w));
        }
    }
    out
}

fn has_trusted_near(db: &Database, i: usize) -> bool {
    let e = &db.entries[i];
    let source = builtin::find(&e.kernel)
        .ok()
        .map(|s| crate::util::keys::fnv1a(&s.source(e.toolchain)));
    let ask = super::bests::Ask {
        kernel: &e.kernel,
        toolchain: e.toolchain,
        precision: e.precision,
        size: (e.m, e.n, e.k),
        source,
    };
    db.lookup_ranked(&ask, |o| o.call == e.call)
        .is_some_and(|s| !std::ptr::eq(s.entry, e) && s.entry.trusted(ask.source.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Toolchain;
    use crate::gemm::problem::Precision;

    fn entry(size: usize, tried: usize, source: String) -> Best {
        let spec = builtin::find("xgemm").unwrap();
        Best {
            kernel: "xgemm".into(),
            toolchain: Toolchain::OpenCl,
            compiler: None,
            driver: None,
            m: size,
            n: size,
            k: size,
            precision: Precision::F32,
            call: None,
            config: spec.defaults(),
            hints: Default::default(),
            gflops: 1.0,
            vs_vendor: None,
            source,
            strategy: "anneal".into(),
            tried,
            search_s: None,
            space: Some(100_000),
            gemmlab: "x".into(),
            tuned_utc: "2026-11-25T00:00:00Z".into(),
        }
    }

    #[test]
    fn stale_shallow_invalid_and_unknown_entries_are_named_and_pruned() {
        let now =
            crate::util::keys::fnv1a(&builtin::find("xgemm").unwrap().source(Toolchain::OpenCl));
        let mut bad = entry(1024, 300, now.clone());
        bad.config.0.insert("MWG".into(), 7);
        let mut unknown = entry(512, 300, now.clone());
        unknown.kernel = "nosuch".into();
        let db = Database {
            device: "x".into(),
            entries: vec![
                entry(4096, 2362, now.clone()),
                entry(8192, 1, now.clone()),
                entry(4096, 500, "0123456789abcdef".into()),
                bad,
                unknown,
            ],
            crossovers: vec![],
            routine: vec![],
        };
        let found = audit(&db);
        let doubts = |i: usize| -> Vec<Doubt> {
            found
                .iter()
                .filter(|f| f.entry == i)
                .map(|f| f.doubt.clone())
                .collect()
        };
        assert!(doubts(0).is_empty(), "{found:?}");
        assert_eq!(doubts(1), vec![Doubt::Shallow]);
        assert_eq!(doubts(2), vec![Doubt::Stale]);
        assert_eq!(doubts(3), vec![Doubt::Invalid]);
        assert_eq!(doubts(4), vec![Doubt::UnknownKernel]);
        // Pruned by default: the stale entry beside a current one, the invalid one.
        let p: Vec<usize> = prunable(&db, false, false).iter().map(|p| p.0).collect();
        assert_eq!(p, vec![2, 3]);
        // --shallow: the one-point 8192 entry, which the 4096 entry serves.
        let p: Vec<usize> = prunable(&db, false, true).iter().map(|p| p.0).collect();
        assert_eq!(p, vec![1, 2, 3]);
    }
}
