//! Strategies compared offline: with every point's outcome already known (a
//! finished exhaustive run), a strategy's search is replayed against that table
//! in milliseconds, so strategies and knobs can be judged over many seeds
//! without a GPU.
//!
//! The replay keeps `n` points in flight like the tuner does and hands outcomes
//! back oldest first, so a strategy sees the same staleness it would live.
//!
//! [`record`] replays every strategy over a search that tried its whole space;
//! `gemmlab tune` writes that record next to the search's trace for the report.

use std::collections::VecDeque;

use super::grid::Grid;
use super::run::Trace;
use super::search::{SearchResult, Tried};
use super::space::{Axis, Candidate};
use super::strategy::{self, Rng, Strategy, NAMES};
use crate::results::{Replays, StrategyReplay};

/// What trying each grid point gave once.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcomes {
    /// Score of each point (GFLOP/s, higher is better); `None` where it failed.
    pub scores: Vec<Option<f64>>,
    /// Seconds compiling and measuring each point took.
    pub costs: Vec<f64>,
}

impl Outcomes {
    /// Why this table cannot be replayed on `grid`, if it cannot.
    pub fn check(&self, grid: &Grid) -> Result<(), String> {
        if self.scores.len() != grid.len() || self.costs.len() != grid.len() {
            return Err(format!(
                "outcome table has {} scores and {} costs for a grid of {} points",
                self.scores.len(),
                self.costs.len(),
                grid.len()
            ));
        }
        if let Some(p) = self
            .scores
            .iter()
            .position(|s| s.is_some_and(|v| !v.is_finite()))
        {
            return Err(format!("point {p} has a score that is not a finite number"));
        }
        if let Some(p) = self
            .costs
            .iter()
            .position(|c| !(c.is_finite() && *c >= 0.0))
        {
            return Err(format!(
                "point {p} has a cost that is not a non-negative number"
            ));
        }
        Ok(())
    }

    /// The best score in the table: what a search can at most find.
    pub fn best(&self) -> Option<f64> {
        self.scores.iter().flatten().copied().reduce(f64::max)
    }
}

/// One point tried, in the order outcomes came back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub point: usize,
    pub score: Option<f64>,
    /// Seconds spent on every point so far, this one included. A serial sum: the
    /// tuner overlaps compilation with measurement, so wall time is lower.
    pub cost: f64,
    /// Best score so far; `None` while every point has failed.
    pub best: Option<f64>,
}

/// Replays the strategy called `name` for at most `budget` points, `n` in
/// flight, its generator seeded with `seed`.
pub fn replay(
    grid: &Grid,
    outcomes: &Outcomes,
    name: &str,
    budget: usize,
    n: usize,
    seed: u64,
) -> Result<Vec<Step>, String> {
    let mut s = strategy::by_name(name)?;
    replay_with(grid, outcomes, s.as_mut(), budget, n, seed)
}

/// Replays a strategy already built (other knobs, or one under test). A
/// strategy that asks for more than it was offered, for a point that does not
/// exist or for a point twice is an error, not a trace.
pub fn replay_with(
    grid: &Grid,
    outcomes: &Outcomes,
    strategy: &mut dyn Strategy,
    budget: usize,
    n: usize,
    seed: u64,
) -> Result<Vec<Step>, String> {
    replay_from(grid, outcomes, strategy, None, budget, n, seed)
}

/// As `replay_with`, the search first trying `start` (as the tuner tries the
/// published configuration) and the strategy told so through `seed`.
pub fn replay_from(
    grid: &Grid,
    outcomes: &Outcomes,
    strategy: &mut dyn Strategy,
    start: Option<usize>,
    budget: usize,
    n: usize,
    seed: u64,
) -> Result<Vec<Step>, String> {
    outcomes.check(grid)?;
    if n == 0 {
        return Err("a replay needs at least one point in flight".to_string());
    }
    let name = strategy.name();
    let mut rng = Rng::new(seed);
    let mut asked = vec![false; grid.len()];
    let mut asked_count = 0usize;
    let mut flight = VecDeque::with_capacity(n);
    let mut trace = Vec::new();
    let (mut cost, mut best) = (0.0, None::<f64>);
    if let Some(p) = start.filter(|_| budget > 0) {
        let Some(seen) = asked.get_mut(p) else {
            return Err(format!("start point {p} is outside the grid"));
        };
        *seen = true;
        asked_count += 1;
        strategy.seed(grid, p);
        flight.push_back(p);
    }
    loop {
        let want = n
            .saturating_sub(flight.len())
            .min(budget.saturating_sub(asked_count));
        if want > 0 {
            let got = strategy.ask(grid, want, &mut rng);
            if got.len() > want {
                return Err(format!(
                    "{name} gave {} points when asked for {want}",
                    got.len()
                ));
            }
            for p in got {
                match asked.get_mut(p) {
                    None => return Err(format!("{name} asked for point {p}, outside the grid")),
                    Some(true) => return Err(format!("{name} asked for point {p} twice")),
                    Some(seen) => *seen = true,
                }
                asked_count += 1;
                flight.push_back(p);
            }
        }
        // Nothing in flight after asking: the budget is spent or the strategy is done.
        let Some(p) = flight.pop_front() else { break };
        let score = outcomes.scores[p];
        strategy.tell(grid, p, score);
        cost += outcomes.costs[p];
        if let Some(s) = score {
            best = Some(best.map_or(s, |b| b.max(s)));
        }
        trace.push(Step {
            point: p,
            score,
            cost,
            best,
        });
    }
    Ok(trace)
}

/// How one strategy fared over several seeded runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub strategy: String,
    pub runs: usize,
    /// Lower quartile, median and upper quartile over the runs of the best score
    /// so far as a fraction of the table's best; entry k is after k + 1 points.
    /// A run that ended early (its strategy finished) keeps its last value.
    pub q1: Vec<f64>,
    pub median: Vec<f64>,
    pub q3: Vec<f64>,
    /// Fraction of runs whose trace reached the table's best within the budget.
    pub found: f64,
}

/// Replays each named strategy `runs` times (seeds `seed`, `seed + 1`, ...) for
/// at most `budget` points (capped at the grid's size) with `n` in flight.
pub fn compare(
    grid: &Grid,
    outcomes: &Outcomes,
    names: &[&str],
    budget: usize,
    n: usize,
    runs: usize,
    seed: u64,
) -> Result<Vec<Summary>, String> {
    outcomes.check(grid)?;
    let top = match outcomes.best() {
        Some(b) if b > 0.0 => b,
        _ => return Err("comparing strategies needs a positive best score in the table".into()),
    };
    if runs == 0 {
        return Err("comparing strategies needs at least one run".to_string());
    }
    let len = budget.min(grid.len());
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        // curves[k][r]: run r's fraction after k + 1 points.
        let mut curves = vec![Vec::with_capacity(runs); len];
        let mut found = 0usize;
        for r in 0..runs {
            let trace = replay(grid, outcomes, name, len, n, seed.wrapping_add(r as u64))?;
            if trace.last().and_then(|s| s.best) == Some(top) {
                found += 1;
            }
            let mut last = 0.0;
            for (k, curve) in curves.iter_mut().enumerate() {
                if let Some(step) = trace.get(k) {
                    last = step.best.map_or(0.0, |b| b / top);
                }
                curve.push(last);
            }
        }
        let mut summary = Summary {
            strategy: (*name).to_string(),
            runs,
            q1: Vec::with_capacity(len),
            median: Vec::with_capacity(len),
            q3: Vec::with_capacity(len),
            found: found as f64 / runs as f64,
        };
        for mut at_k in curves {
            at_k.sort_by(f64::total_cmp);
            summary.q1.push(quantile(&at_k, 0.25));
            summary.median.push(quantile(&at_k, 0.5));
            summary.q3.push(quantile(&at_k, 0.75));
        }
        out.push(summary);
    }
    Ok(out)
}

/// The `q` quantile of sorted, non-empty values, interpolated between ranks.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The replay record's target: configurations and seconds until this fraction of the best.
pub const REACH: f64 = 0.95;
/// Seeded replays per strategy in a record.
pub const RUNS: usize = 25;
/// The most configurations a recorded replay may try.
pub const BUDGET: usize = 200;
pub const SEED: u64 = 1;

/// Whether a search tried every point of its space, so its trace holds every
/// configuration's outcome and can be replayed.
pub fn is_complete(s: &SearchResult) -> bool {
    s.strategy == "exhaustive" && s.stopped.starts_with("every point")
}

/// Every strategy replayed over a complete search (`trace`, read from the file
/// `file`): the record `gemmlab tune` writes next to the trace.
pub fn record(trace: &Trace, file: &str) -> Replays {
    let in_flight = 2 * trace.search.options.workers.max(1);
    let mut rec = Replays {
        trace: file.to_string(),
        runs: RUNS,
        budget: BUDGET,
        tries: 0,
        seed: SEED,
        in_flight,
        reach: REACH,
        error: None,
        strategies: Vec::new(),
    };
    match replay_space(trace, in_flight) {
        Ok((tries, strategies)) => {
            rec.tries = tries;
            rec.strategies = strategies;
        }
        Err(why) => rec.error = Some(why),
    }
    rec
}

/// The speed a tried configuration gave: verified GFLOP/s (a pruned one at its
/// single checked launch); `None` when it failed.
fn speed(t: &Tried) -> Option<f64> {
    if t.record.status.is_ok() {
        t.record.gflops.filter(|g| g.is_finite() && *g > 0.0)
    } else {
        None
    }
}

/// The coordinates of a tried configuration on the space's axes: parameters by
/// value, a switch absent from the hints at its published state (the axis's
/// first value), the register cap from the hints.
fn coords_of(axes: &[Axis], c: &Candidate) -> Result<Vec<u8>, String> {
    axes.iter()
        .map(|a| {
            let i = match a {
                Axis::Param { name, values } => c
                    .config
                    .0
                    .get(name)
                    .and_then(|v| values.iter().position(|x| x == v)),
                Axis::Switch { name, values } => c
                    .hints
                    .switch(name)
                    .or_else(|| values.first().copied())
                    .and_then(|on| values.iter().position(|x| *x == on)),
                Axis::Cap { values } => values.iter().position(|x| *x == c.hints.max_registers),
            };
            i.and_then(|i| u8::try_from(i).ok()).ok_or_else(|| {
                format!(
                    "configuration {} has no value on the space's axis {}",
                    c.describe(),
                    a.name()
                )
            })
        })
        .collect()
}

/// The grid and the outcome table of a complete search, in point order: a
/// configuration scores its search-timing GFLOP/s and costs its device seconds
/// plus its compile time over the compile workers (a compile failure, whose
/// time is not recorded, the median compile time).
fn outcome_table(trace: &Trace) -> Result<(Grid, Outcomes), String> {
    let r = &trace.search;
    if r.tried.is_empty() {
        return Err("the search tried nothing".into());
    }
    if trace.space.axes.iter().any(|a| a.len() > 256) {
        return Err("an axis has more values than a grid holds".into());
    }
    let mut tried: Vec<&Tried> = r.tried.iter().collect();
    tried.sort_by_key(|t| t.point);
    let coords = tried
        .iter()
        .map(|t| coords_of(&trace.space.axes, &t.candidate))
        .collect::<Result<Vec<_>, _>>()?;
    let sizes: Vec<usize> = trace.space.axes.iter().map(Axis::len).collect();
    let grid = Grid::new(sizes, coords);
    if grid.len() != tried.len() {
        return Err(format!(
            "{} configurations tried but only {} distinct points of the space",
            tried.len(),
            grid.len()
        ));
    }
    let workers = r.options.workers.max(1) as f64;
    let valid = |v: &f64| v.is_finite() && *v >= 0.0;
    let mut compiles: Vec<f64> = tried
        .iter()
        .filter_map(|t| t.record.compile_ms)
        .filter(valid)
        .collect();
    compiles.sort_by(f64::total_cmp);
    let median_compile = compiles.get(compiles.len() / 2).copied().unwrap_or(0.0);
    let scores = tried.iter().map(|t| speed(t)).collect();
    let costs = tried
        .iter()
        .map(|t| {
            let device = Some(t.record.device_s).filter(valid).unwrap_or(0.0);
            let compile = t.record.compile_ms.filter(valid).unwrap_or(median_compile);
            device + compile / 1000.0 / workers
        })
        .collect();
    Ok((grid, Outcomes { scores, costs }))
}

/// The middle value (the upper one of an even count); `None` when it is not
/// finite: most runs did not reach the target.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2]).filter(|m| m.is_finite())
}

/// Replays every strategy over a complete search: the budget used and what each needed.
fn replay_space(trace: &Trace, in_flight: usize) -> Result<(usize, Vec<StrategyReplay>), String> {
    let (grid, outcomes) = outcome_table(trace)?;
    let budget = grid.len().min(BUDGET);
    let summaries = compare(&grid, &outcomes, NAMES, budget, in_flight, RUNS, SEED)?;
    let top = outcomes
        .best()
        .filter(|b| *b > 0.0)
        .ok_or("no configuration of the space has a speed")?;
    let mut out = Vec::new();
    for summary in summaries {
        let (mut configs, mut seconds) = (Vec::new(), Vec::new());
        for r in 0..RUNS {
            let seed = SEED.wrapping_add(r as u64);
            let steps = replay(&grid, &outcomes, &summary.strategy, budget, in_flight, seed)?;
            let (c, s) = match steps
                .iter()
                .position(|s| s.best.is_some_and(|b| b >= REACH * top))
            {
                Some(k) => ((k + 1) as f64, steps[k].cost),
                None => (f64::INFINITY, f64::INFINITY),
            };
            configs.push(c);
            seconds.push(s);
        }
        out.push(StrategyReplay {
            reached: configs.iter().filter(|c| c.is_finite()).count(),
            configs: median(configs),
            seconds: median(seconds),
            strategy: summary.strategy,
            found: summary.found,
            q1: summary.q1,
            median: summary.median,
            q3: summary.q3,
        });
    }
    Ok((budget, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::strategy::testkit;

    fn cand(tsm: i64, unroll: Option<bool>, cap: Option<u32>) -> Candidate {
        let mut hints = crate::kernel::builtin::Hints {
            max_registers: cap,
            ..Default::default()
        };
        if let Some(on) = unroll {
            hints.switches.insert("UNROLL_K".into(), on);
        }
        Candidate {
            config: crate::kernel::builtin::Config(
                [("TSM".to_string(), tsm)].into_iter().collect(),
            ),
            hints,
        }
    }

    #[test]
    fn coordinates_come_back_from_candidates() {
        let axes = vec![
            Axis::Param {
                name: "TSM".into(),
                values: vec![16, 32, 64],
            },
            // Published on: absent from the hints means on.
            Axis::Switch {
                name: "UNROLL_K".into(),
                values: vec![true, false],
            },
            Axis::Cap {
                values: vec![None, Some(64)],
            },
        ];
        assert_eq!(coords_of(&axes, &cand(32, None, None)).unwrap(), [1, 0, 0]);
        assert_eq!(
            coords_of(&axes, &cand(64, Some(false), Some(64))).unwrap(),
            [2, 1, 1]
        );
        assert_eq!(
            coords_of(&axes, &cand(16, Some(true), None)).unwrap(),
            [0, 0, 0]
        );
        let e = coords_of(&axes, &cand(8, None, None)).unwrap_err();
        assert!(e.contains("TSM"), "{e}");
        assert!(coords_of(&axes, &cand(16, None, Some(96))).is_err());
    }

    #[test]
    fn medians_of_unreached_runs_are_none() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(
            median(vec![f64::INFINITY, f64::INFINITY, 1.0]),
            None,
            "most runs did not reach it"
        );
        assert_eq!(median(Vec::new()), None);
    }

    fn table(grid: &Grid) -> Outcomes {
        let scores = testkit::objective(grid);
        // Failures are quick (a compile error); successes cost more the slower they run.
        let costs = scores
            .iter()
            .map(|s| s.map_or(0.5, |v| 1.0 + 100.0 / v))
            .collect();
        Outcomes { scores, costs }
    }

    #[test]
    fn traces_are_monotone_in_best_and_cost() {
        for grid in testkit::grids() {
            let t = table(&grid);
            for name in NAMES {
                let trace = replay(&grid, &t, name, 200, 4, 9).unwrap();
                assert_eq!(trace.len(), 200.min(grid.len()));
                for w in trace.windows(2) {
                    assert!(w[1].cost >= w[0].cost, "{name}: cost went down");
                    assert!(w[1].best >= w[0].best, "{name}: best went down");
                    assert!(w[1].best.is_some() || w[0].best.is_none());
                }
            }
        }
    }

    #[test]
    fn exhaustive_reaches_the_true_best_within_the_grid() {
        for grid in testkit::grids() {
            let t = table(&grid);
            let trace = replay(&grid, &t, "exhaustive", usize::MAX, 8, 0).unwrap();
            assert_eq!(trace.len(), grid.len());
            assert_eq!(trace.last().unwrap().best, t.best());
            let total: f64 = t.costs.iter().sum();
            assert!((trace.last().unwrap().cost - total).abs() < 1e-9 * total);
        }
    }

    #[test]
    fn compare_gives_ordered_quartiles_and_full_marks_to_exhaustive() {
        let grid = Grid::full(vec![5, 5, 4, 3]);
        let t = table(&grid);
        let all = compare(&grid, &t, NAMES, grid.len(), 4, 5, 1).unwrap();
        assert_eq!(all.len(), NAMES.len());
        for s in &all {
            assert_eq!(s.median.len(), grid.len());
            for k in 0..grid.len() {
                assert!(s.q1[k] <= s.median[k] && s.median[k] <= s.q3[k]);
                assert!(s.q3[k] <= 1.0);
                if k > 0 {
                    assert!(s.median[k] >= s.median[k - 1]);
                }
            }
            // Unbounded on this grid, every strategy sees every point.
            assert_eq!(s.found, 1.0, "{}", s.strategy);
            assert_eq!(*s.median.last().unwrap(), 1.0);
        }
        let short = compare(&grid, &t, &["exhaustive"], 10, 4, 3, 1).unwrap();
        assert_eq!(short[0].median.len(), 10);
        assert_eq!(short[0].q1, short[0].q3, "exhaustive ignores the seed");
    }

    #[test]
    fn bad_input_is_an_error() {
        let grid = Grid::full(vec![3, 3]);
        let mut t = table(&grid);
        assert!(replay(&grid, &t, "anneal", 5, 0, 0).is_err());
        assert!(replay(&grid, &t, "hill", 5, 1, 0).is_err());
        assert!(compare(&grid, &t, NAMES, 5, 1, 0, 0).is_err());
        t.costs[2] = f64::NAN;
        assert!(replay(&grid, &t, "random", 5, 1, 0).is_err());
        t.costs.pop();
        assert!(replay(&grid, &t, "random", 5, 1, 0).is_err());
        let failed = Outcomes {
            scores: vec![None; grid.len()],
            costs: vec![1.0; grid.len()],
        };
        assert!(compare(&grid, &failed, NAMES, 5, 1, 2, 0).is_err());
    }

    /// Asks for point 0 every time.
    struct Stuck;

    impl Strategy for Stuck {
        fn name(&self) -> &'static str {
            "stuck"
        }
        fn ask(&mut self, _grid: &Grid, _n: usize, _rng: &mut Rng) -> Vec<usize> {
            vec![0]
        }
        fn tell(&mut self, _grid: &Grid, _point: usize, _score: Option<f64>) {}
        fn seed(&mut self, _grid: &Grid, _point: usize) {}
    }

    #[test]
    fn a_repeating_strategy_is_caught() {
        let grid = Grid::full(vec![3, 3]);
        let t = table(&grid);
        let err = replay_with(&grid, &t, &mut Stuck, 5, 2, 0).unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }
}
