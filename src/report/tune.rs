//! "Tuning (tune)": what `gemmlab tune` found for each kernel, size and
//! toolchain (its final round), how each search got there, how much of each
//! space is near its best, and how the strategies fared when replayed over the
//! spaces searched exhaustively. The numbers come from `analysis::tune`.

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::tune::{
    config_of, Group, Hardness, Kind, Published, Rate, Replayed, Search, SearchName, Source, Tune,
    Tuned, Verdict, NEAR_BEST,
};
use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::{Replays, StrategyReplay};

use super::data::{self, size_label, toolchain_name as tc_name};
use super::md::{self, plural, size_label_long};
use super::{color, VENDOR_COLOR};
use super::{Ctx, Section, Words, SAME_SPEED};
use crate::plot::{Band, Figure, Line, Panel, RefLine, Style, XAxis};

const TUNING: &str = "Tuning (tune)";

/// Colours of the replayed strategies, in the record's order.
const STRATEGY_COLORS: [RGBColor; 4] = [
    RGBColor(90, 90, 90),
    RGBColor(214, 120, 0),
    RGBColor(170, 40, 120),
    RGBColor(20, 150, 160),
];

const INTRO: &str = "`gemmlab tune` searched each kernel's space of parameters, hint switches and register caps \
    on each toolchain with a strategy, timing each configuration briefly (a few timed launches after its checked run, \
    which is the warm-up; one far slower than the best so far is pruned after its checked run), then re-measured each \
    toolchain's fastest configurations with the full timing method, the toolchains' repetitions interleaved: the final round. \
    Tuned bests and the top tables quote the final round (median GFLOP/s ± the interquartile range as % of the median, \
    \"x cuBLAS\" the ratio to cuBLAS measured in the same run); the search tables and charts use the search timing. \
    A published default comes from a compare row of the same device when the results hold one, \
    else from the default configuration's point in a search.\n\n";

const SCREEN: &str = "Searches with a screen (`tune --screen`) first ran each configuration once, checked, with K \
    cut short; one far slower there than the best so far was pruned with that launch, whose speed is of the shorter K.\n\n";

const SEARCHES: &str = "In the search tables \"run\" numbers the result directories as in Environment, and \
    \"measured / s\" (the search rate) counts configurations measured in this run, not answered from the store, \
    per wall second, compiling included.\n\n";

const CHARTS: &str = "The progress charts draw the best verified GFLOP/s so far against the configurations tried, \
    in the order the strategy was told their outcomes (left; those answered from the store count at once), and \
    against the seconds since the search started (right). The spread charts draw every configuration each toolchain \
    tried (all its searches, each configuration once), fastest first, as a fraction of that toolchain's best; x is the \
    rank as a fraction of the configurations tried, so a curve ends early by the share that failed, and where it crosses \
    90% is the share of the space near the best. Guided strategies try more good configurations than a uniform sample \
    would; exhaustive searches show the whole space.\n\n";

const REPLAY: &str = "An exhaustive search that tried every point of its space holds every configuration's outcome, \
    so each strategy's search can be replayed against that table without a device, in seeded runs with as many \
    configurations in flight as the tuner keeps (twice the compile workers). This is a replay over measured outcomes, \
    not new measurements: a configuration scores its search-timing GFLOP/s (a pruned one its single checked launch, \
    a failed one nothing), and costs the device seconds it took plus its compile time divided by the compile workers \
    (a compile failure, whose time is not recorded, costs the median compile time); summed one configuration after \
    another, those seconds approximate, not reproduce, the tuner's overlapped wall time. The replay charts draw the \
    median over the runs of the best found so far as a fraction of the space's true best, the band from the lower to \
    the upper quartile.\n\n";

/// "CUDA", "CUDA anneal", "CUDA anneal (run 2)".
fn name(n: &SearchName) -> String {
    let strategy = n
        .strategy
        .as_ref()
        .map_or(String::new(), |s| format!(" {s}"));
    let run = n.run.map_or(String::new(), |r| format!(" (run {r})"));
    format!("{}{strategy}{run}", tc_name(n.toolchain))
}

fn at(kernel: &str, size: (usize, usize, usize)) -> String {
    format!("{kernel} at {}", size_label(size))
}

pub(crate) fn section(ctx: &mut Ctx, a: &Tune) -> Result<Section> {
    if a.empty {
        return Ok(Section::default());
    }
    let mut s = format!("## {TUNING}\n\n{INTRO}");
    let explained = [
        (a.searches.iter().any(|x| x.screened > 0), SCREEN),
        (!a.searches.is_empty(), SEARCHES),
        (a.groups.iter().any(|g| !g.curves.is_empty()), CHARTS),
        (a.searches.iter().any(|x| x.replays.is_some()), REPLAY),
    ];
    explained
        .iter()
        .filter(|e| e.0)
        .for_each(|e| s.push_str(e.1));
    let traces = plural(a.searches.len(), "search trace");
    let _ = writeln!(s, "{traces} from {}.\n", plural(a.dirs, "result directory"));
    if !a.unreadable.is_empty() {
        s.push_str("Search traces that could not be read (left out):\n\n");
        for u in &a.unreadable {
            let _ = writeln!(s, "- {}", md::escape(&md::short_reason(u)));
        }
        s.push('\n');
    }
    if a.groups.is_empty() {
        s.push_str("No search and no final round to show.\n\n");
    }
    for g in &a.groups {
        let mut title = format!("{}, {}", g.kernel, size_label_long(g.size));
        if a.machines > 1 {
            let _ = write!(title, " on {}", g.machine.join(" + "));
        }
        let _ = writeln!(s, "### {title}\n");
        searches_table(a, g, &mut s);
        rounds(g, &mut s);
        charts(ctx, g, &title, &mut s)?;
        replays(ctx, a, g, &title, &mut s)?;
    }
    let mut sec = Section {
        title: TUNING.to_string(),
        markdown: s,
        ..Section::default()
    };
    sec.show(&a.findings);
    Ok(sec)
}

type Column = (&'static str, fn(&Search, &SearchName) -> String);

/// The search table's columns: a search and its name give each cell.
const COLUMNS: [Column; 16] = [
    ("search", |_, n| name(n)),
    ("strategy", |x, _| x.strategy().to_string()),
    ("run", |x, _| x.run.to_string()),
    ("space (after filtering of before)", |x, _| {
        format!("{} of {}", x.trace.space.after, x.trace.space.before)
    }),
    ("tried", |x, _| x.trace.search.tried.len().to_string()),
    ("measured", |x, _| x.measured.to_string()),
    ("from store", |x, _| {
        (x.trace.search.tried.len() - x.measured).to_string()
    }),
    ("failed", |x, _| x.failed.to_string()),
    ("pruned", |x, _| x.pruned.to_string()),
    ("wall s", |x, _| md::secs(x.trace.search.wall_s)),
    ("compile CPU s", |x, _| md::secs(x.trace.search.compile_s)),
    ("device s", |x, _| md::secs(x.trace.search.device_s)),
    ("compile workers", |x, _| {
        x.trace.search.options.workers.to_string()
    }),
    ("measured / s", |x, _| {
        x.rate.map_or(md::MISSING.into(), |v| format!("{v:.2}"))
    }),
    ("best GFLOP/s (search)", |x, _| {
        x.best
            .as_ref()
            .map_or(md::MISSING.into(), |b| md::speed(b.0))
    }),
    ("stopped", |x, _| x.trace.search.stopped.clone()),
];

/// One row per search, and the spaces' notes.
fn searches_table(a: &Tune, g: &Group, s: &mut String) {
    let rows: Vec<Vec<String>> = g
        .searches
        .iter()
        .zip(&g.names)
        .map(|(&i, n)| COLUMNS.iter().map(|c| c.1(&a.searches[i], n)).collect())
        .collect();
    let head: Vec<String> = COLUMNS.iter().map(|c| c.0.to_string()).collect();
    s.push_str(&md::table(&head, &rows));
    if !rows.is_empty() {
        s.push('\n');
    }
    if !g.notes.is_empty() {
        s.push_str("Space notes:\n\n");
        for (t, n) in &g.notes {
            let _ = writeln!(s, "- {}", md::escape(&format!("{}: {n}", tc_name(*t))));
        }
        s.push('\n');
    }
}

/// "2.5 GFLOP/s = 0.40x cuBLAS from a compare row", "WRONG measured while searching".
fn describe_default(d: &Published) -> String {
    let from = match d.source {
        Source::Compare => "from a compare row",
        Source::Search => "measured while searching",
    };
    match (&d.failed, d.gflops, d.vs_vendor) {
        (Some(status), _, _) => format!("{status} {from}"),
        (None, Some(g), Some(v)) => format!("{} GFLOP/s = {v:.2}x cuBLAS {from}", md::speed(g)),
        (None, Some(g), None) => format!("{} GFLOP/s {from}", md::speed(g)),
        (None, None, _) => format!("no speed {from}"),
    }
}

/// Each toolchain's fastest of the final round and its published default.
fn rounds(g: &Group, s: &mut String) {
    for r in &g.rounds {
        let name = tc_name(r.tuned.toolchain);
        let _ = writeln!(s, "#### {name}: the fastest of the final round\n");
        if r.rows.is_empty() {
            let why = if r.failed.is_empty() {
                " (the run wrote no final round)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "No final-round configuration of {name} has a speed{why}.\n"
            );
        }
        let mut head = md::h(&["rank", "GFLOP/s", "x cuBLAS", "registers", "configuration"]);
        if r.several_runs {
            head.push("run".into());
        }
        let rows = r.rows.iter().zip(1..).map(|(f, rank)| {
            let m = f.m;
            let spread = m
                .time
                .map_or(String::new(), |t| format!(" ±{:.1}%", t.spread_pct()));
            let speed = data::gflops(m).map_or(md::MISSING.into(), md::speed);
            let mut row = vec![
                rank.to_string(),
                format!("{speed}{spread}{}", md::throttle_mark(m)),
                md::ratio(data::vs_vendor(m), Some(1.0)),
                md::registers(Some(m)),
                config_of(m),
            ];
            if r.several_runs && f.strategies.is_empty() {
                row.push(f.run.to_string());
            } else if r.several_runs {
                row.push(format!("{} ({})", f.run, f.strategies.join(", ")));
            }
            row
        });
        let rows: Vec<Vec<String>> = rows.collect();
        if !rows.is_empty() {
            let _ = writeln!(s, "{}", md::table(&head, &rows));
        }
        if !r.failed.is_empty() {
            let what = r.failed.iter();
            let what: Vec<String> = what
                .map(|m| format!("{} ({})", config_of(m), m.status.label()))
                .collect();
            let what = md::escape(&what.join("; "));
            let _ = writeln!(s, "Without a speed in the final round: {what}.\n");
        }
        if let Some(d) = &r.tuned.default {
            let gain = r.tuned.gain.map_or(String::new(), |u| {
                format!(" The tuned best is {:.2}x its speed.", u + 1.0)
            });
            let _ = writeln!(s, "Published default: {}.{gain}\n", describe_default(d));
        }
    }
}

/// The i-th series of a toolchain: its colour, then darker and lighter shades.
pub fn shade(c: RGBColor, i: usize) -> RGBColor {
    let f = |v: u8, k: f64, to: f64| (f64::from(v) + (to - f64::from(v)) * k).round() as u8;
    let (k, to) = match i {
        0 => return c,
        i if i % 2 == 1 => (0.45_f64.min(0.25 * i.div_ceil(2) as f64), 0.0),
        i => (0.6_f64.min(0.3 * (i / 2) as f64), 255.0),
    };
    RGBColor(f(c.0, k, to), f(c.1, k, to), f(c.2, k, to))
}

/// A line plain when dense, with markers when sparse.
fn styled(style: Style, points: usize) -> Style {
    if points > 40 {
        style.plain()
    } else {
        style.line()
    }
}

/// A panel of fractions of a best, from 0 to `hi` configurations, with a
/// reference line at `reach`.
fn fraction_panel(hi: f64, x_label: &str, y_label: &str, reach: f64) -> Panel {
    let mut panel = Panel::new("", XAxis::Linear { lo: 0.0, hi }, x_label, y_label);
    panel.y_max = Some(1.08);
    panel.refs.push(RefLine {
        label: format!("{:.0}% of the best", reach * 100.0),
        y: reach,
        color: VENDOR_COLOR,
    });
    panel
}

/// A figure of `panels` side by side, titled "gemm6 at 4096{what} on H200".
fn figure(ctx: &Ctx, g: &Group, what: &str, legend: Vec<Style>, panels: Vec<Panel>) -> Figure {
    let title = format!("{}{what}{}", at(&g.kernel, g.size), ctx.title_suffix());
    let cols = panels.len();
    // One panel: wide; two: side by side.
    let (panel_w, panel_h) = match cols {
        1 => (860, 400),
        _ => (560, 380),
    };
    Figure {
        title,
        legend,
        panels,
        cols,
        panel_w,
        panel_h,
    }
}

/// Best so far against configurations and seconds; the spread of each space.
fn charts(ctx: &mut Ctx, g: &Group, title: &str, s: &mut String) -> Result<()> {
    if let Some(fig) = progress_figure(ctx, g) {
        let alt = format!("{title}: best GFLOP/s so far against configurations tried and seconds");
        let stem = format!("tune-progress-{}", g.stem);
        s.push_str(&ctx.chart(&fig, &stem, &alt)?.markdown);
    }
    let mut panel = fraction_panel(
        1.0,
        "rank / configurations tried",
        "GFLOP/s / the toolchain's best",
        NEAR_BEST,
    );
    let mut legend = Vec::new();
    for x in g.spread.iter().filter(|x| !x.speeds.is_empty()) {
        let (t, n) = (x.toolchain, x.tried.max(1) as f64);
        let label = format!("{} ({} tried)", tc_name(t), x.tried);
        let style = styled(Style::new(label, color(t)), x.speeds.len());
        let points = x.speeds.iter().zip(1..);
        let points = points.map(|(v, i)| (i as f64 / n, Some(v / x.best)));
        let points = points.collect();
        panel.lines.push(Line {
            style: style.clone(),
            points,
        });
        legend.push(style);
    }
    if legend.is_empty() {
        return Ok(());
    }
    let fig = figure(ctx, g, ": the tried space by rank", legend, vec![panel]);
    let alt = format!("{title}: tried configurations' GFLOP/s as a fraction of the best, by rank");
    let stem = format!("tune-spread-{}", g.stem);
    s.push_str(&ctx.chart(&fig, &stem, &alt)?.markdown);
    Ok(())
}

fn progress_figure(ctx: &Ctx, g: &Group) -> Option<Figure> {
    let most = g.curves.iter().map(|c| c.points.len()).max()?;
    let longest = g.curves.iter().filter_map(|c| c.points.last().map(|p| p.1));
    let longest = longest.filter(|v| v.is_finite()).fold(0.0, f64::max);
    let y = "best GFLOP/s so far";
    let x = XAxis::Linear {
        lo: 0.0,
        hi: most as f64,
    };
    let mut by_count = Panel::new("against configurations tried", x, "configurations tried", y);
    let hi = if longest > 0.0 { longest } else { 1.0 };
    let x = XAxis::Linear { lo: 0.0, hi };
    let mut by_time = Panel::new("against seconds", x, "seconds since the search started", y);
    let mut legend = Vec::new();
    for c in &g.curves {
        let mut style = Style::new(name(&c.name), shade(color(c.name.toolchain), c.nth));
        style = styled(style, c.points.len());
        if c.nth > 0 {
            style = style.dashed();
        }
        for (panel, by_time) in [(&mut by_count, false), (&mut by_time, true)] {
            let points = c.points.iter();
            let points = points.map(|p| (if by_time { p.1 } else { p.0 as f64 }, p.2));
            let (style, points) = (style.clone(), points.collect());
            panel.lines.push(Line { style, points });
        }
        legend.push(style);
    }
    let top = by_count.data_max().max(by_time.data_max());
    if let Some(v) = g.vendor {
        let r = RefLine {
            label: format!("cuBLAS {}", md::speed(v)),
            y: v,
            color: VENDOR_COLOR,
        };
        by_count.refs.push(r.clone());
        by_time.refs.push(r);
        legend.push(Style::new("cuBLAS (final round)", VENDOR_COLOR).dashed());
    }
    let y_max = top.max(g.vendor.unwrap_or(0.0)) * 1.08;
    by_count.y_max = Some(if y_max > 0.0 { y_max } else { 1.0 });
    by_time.y_max = by_count.y_max;
    let panels = vec![by_count, by_time];
    Some(figure(ctx, g, ": best GFLOP/s so far", legend, panels))
}

/// The strategies replayed over each complete search, from its replay record.
fn replays(ctx: &mut Ctx, a: &Tune, g: &Group, title: &str, s: &mut String) -> Result<()> {
    if g.replays.is_empty() {
        return Ok(());
    }
    s.push_str("#### Strategies replayed over the measured space\n\n");
    if let Some(rec) = g.replays.iter().find_map(|r| r.record.as_ref()) {
        let _ = writeln!(
            s,
            "{} seeded runs per strategy, each trying at most {} configurations (or the whole space if smaller).\n",
            rec.runs, rec.budget
        );
    }
    for r in &g.replays {
        let label = name(&r.name);
        match &r.record {
            None => {
                let dir = ctx.data.runs[a.searches[r.search].run - 1].dir.display();
                let _ = writeln!(
                    s,
                    "{label}: no replay record; `gemmlab tune --replay-only {dir}` writes it from the search's trace.\n"
                );
            }
            Some(Replays {
                error: Some(why), ..
            }) => {
                let _ = writeln!(s, "{label}: no replay: {}.\n", md::escape(why));
            }
            Some(rec) => replay_table(ctx, g, r, rec, (title, &label), s)?,
        }
    }
    Ok(())
}

fn replay_table(
    ctx: &mut Ctx,
    g: &Group,
    r: &Replayed,
    rec: &Replays,
    (title, label): (&str, &str),
    s: &mut String,
) -> Result<()> {
    let len = rec.tries;
    let (x_label, y_label) = ("configurations tried", "best so far / the space's best");
    let mut panel = fraction_panel(len as f64, x_label, y_label, rec.reach);
    let mut legend = Vec::new();
    for (n, c) in rec.strategies.iter().zip(STRATEGY_COLORS.iter().cycle()) {
        let band = n.q1.iter().zip(&n.q3).zip(1..);
        let band = band.map(|((q1, q3), k)| (k as f64, *q1, *q3));
        panel.bands.push(Band {
            color: *c,
            points: band.collect(),
        });
        let style = styled(Style::new(n.strategy.clone(), *c), len);
        let median = n.median.iter().zip(1..).map(|(v, k)| (k as f64, Some(*v)));
        panel.lines.push(Line {
            style: style.clone(),
            points: median.collect(),
        });
        legend.push(style);
    }
    let what = format!(", {label}: strategies replayed");
    let mut fig = figure(ctx, g, &what, legend, vec![panel]);
    (fig.panel_w, fig.panel_h) = (900, 420);
    let alt =
        format!("{title}, {label}: strategies replayed, median best so far against configurations");
    s.push_str(&ctx.chart(&fig, &r.stem, &alt)?.markdown);
    let reach = rec.reach * 100.0;
    let rows: Vec<Vec<String>> = rec
        .strategies
        .iter()
        .map(|n| {
            vec![
                n.strategy.clone(),
                n.configs
                    .map_or("not reached".into(), |c| format!("{c:.0}")),
                n.seconds.map_or(md::MISSING.into(), md::secs),
                format!("{} of {}", n.reached, rec.runs),
                format!("{:.0}%", n.found * 100.0),
                md::pct(n.median.last().copied()),
            ]
        })
        .collect();
    let head = [
        "strategy".to_string(),
        format!("configurations to {reach:.0}% (median)"),
        format!("seconds to {reach:.0}% (median)"),
        format!("runs reaching {reach:.0}%"),
        "runs finding the best".to_string(),
        format!("median at {len} configurations"),
    ];
    let _ = writeln!(s, "{}", md::table(&head, &rows));
    Ok(())
}

pub(crate) fn words(k: &Kind) -> Words {
    match k {
        Kind::Tuned {
            kernel,
            size,
            toolchains,
            search_only,
            has_vendor,
        } => tuned_words(kernel, *size, toolchains, *search_only, *has_vendor),
        Kind::ToolchainGap { .. } => gap_words(k),
        Kind::HowHard {
            kernel,
            size,
            near_best,
            toolchains,
            harder,
        } => hard_words(&at(kernel, *size), near_best * 100.0, toolchains, harder),
        Kind::Replayed {
            kernel,
            size,
            search,
            space,
            replays,
        } => replay_words(&at(kernel, *size), &name(search), *space, replays),
        Kind::SearchRate {
            kernel,
            size,
            searches,
        } => rate_words(&at(kernel, *size), searches),
    }
}

fn hard_words(
    at: &str,
    pct: f64,
    toolchains: &[Hardness],
    harder: &Option<[Toolchain; 2]>,
) -> Words {
    let long: Vec<String> = toolchains
        .iter()
        .map(|x| {
            let whole = if x.whole_space { "the whole space" } else { "a sample of the space" };
            format!(
                "{}: {} of {} configurations tried ({:.0}%) within {pct:.0}% of its best {} GFLOP/s, {} failed (searched by {}; {whole})",
                tc_name(x.toolchain), x.near, x.tried, x.share * 100.0, md::speed(x.best), x.failed, x.strategies.join(" and ")
            )
        })
        .collect();
    let short: Vec<String> = toolchains
        .iter()
        .map(|x| {
            format!(
                "{:.0}% of {}'s {}",
                x.share * 100.0,
                tc_name(x.toolchain),
                x.tried
            )
        })
        .collect();
    let mut text = format!("**How hard to tune, {at}**: {}.", long.join("; "));
    if let Some([hard, easy]) = harder {
        let (hard, easy) = (tc_name(*hard), tc_name(*easy));
        let _ = write!(
            text,
            " Fewer of {hard}'s configurations are near its best than {easy}'s: {hard} is the harder to tune."
        );
    }
    let short = md::join_and(&short);
    Words {
        text,
        short: format!(
            "For {at}, {short} tried configurations are within {pct:.0}% of the toolchain's best."
        ),
    }
}

/// The words of a toolchain-gap finding.
fn gap_words(k: &Kind) -> Words {
    let Kind::ToolchainGap {
        kernel,
        size,
        toolchains,
        tuned,
        lead,
        gap,
        same,
        both_final,
        default,
    } = k
    else {
        unreachable!("a toolchain gap")
    };
    let at = at(kernel, *size);
    let (na, nb) = (tc_name(toolchains[0]), tc_name(toolchains[1]));
    let pair = format!("{na}/{nb}");
    let Some((dr, src, verdict)) = default else {
        let how = if *same {
            format!("within {:.0}%", SAME_SPEED * 100.0)
        } else {
            format!("{} ahead by {:.0}%", tc_name(*lead), gap * 100.0)
        };
        let short = if *same {
            format!("Tuned {at} runs alike on {na} and {nb} ({pair} {tuned:.2}).")
        } else {
            format!("Tuned {at} leaves a {pair} ratio of {tuned:.2}.")
        };
        let text = format!(
            "**Toolchain gap at each toolchain's best, {at}**: {pair} = {tuned:.2} tuned ({how}); \
             no published default of both toolchains to compare with."
        );
        return Words { text, short };
    };
    let src = match src {
        [Source::Compare, Source::Compare] => "compare rows",
        [Source::Search, Source::Search] => "measured while searching",
        _ => "one from a compare row, one measured while searching",
    };
    let verdict = match verdict {
        Verdict::NoGap => "no gap at the defaults and none tuned",
        Verdict::Closes => "tuning closes the gap",
        Verdict::Opens => "tuning opens a gap",
        Verdict::Reverses => "tuning reverses the gap",
        Verdict::Shrinks => "the gap shrinks but survives tuning",
        Verdict::Grows => "the gap grows with tuning",
        Verdict::Unchanged => "the gap survives tuning unchanged",
    };
    let timing = if *both_final {
        "final round"
    } else {
        "search timing where no final round"
    };
    Words {
        text: format!(
            "**Toolchain gap before and after tuning, {at}**: {pair} = {dr:.2} at the published defaults ({src}), \
             {tuned:.2} at each toolchain's tuned best ({timing}): {verdict}."
        ),
        short: format!("For {at} {verdict} ({pair} {dr:.2} at the defaults, {tuned:.2} tuned)."),
    }
}

fn tuned_words(
    kernel: &str,
    size: (usize, usize, usize),
    toolchains: &[Tuned],
    search_only: bool,
    has_vendor: bool,
) -> Words {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for t in toolchains {
        let name = tc_name(t.toolchain);
        let Some(b) = &t.best else {
            long.push(format!("{name}: no configuration with a speed"));
            continue;
        };
        let vs = b.vs_vendor.map(|v| format!("{v:.2}x cuBLAS"));
        let timing = if b.final_round {
            ""
        } else {
            " (search timing: no final round)"
        };
        let speed = md::speed(b.gflops);
        let eq = vs.as_ref().map_or(String::new(), |v| format!(" = {v}"));
        let mut l = format!("{name} {speed} GFLOP/s{eq} with `{}`{timing}", b.config);
        let mut inner: Vec<String> = vs.into_iter().collect();
        if let Some(d) = &t.default {
            let gains = t.gain.map_or(String::new(), |u| {
                format!("; tuning gains {:+.0}%", u * 100.0)
            });
            let _ = write!(l, " (published default {}{gains})", describe_default(d));
            match (has_vendor, d.vs_vendor, t.gain) {
                (true, Some(v), _) => inner.push(format!("default {v:.2}x")),
                (_, _, Some(u)) => inner.push(format!("{:+.0}% over the default", u * 100.0)),
                _ => {}
            }
        }
        let inner = if inner.is_empty() {
            String::new()
        } else {
            format!(" ({})", inner.join(", "))
        };
        long.push(l);
        short.push(format!("{name} {speed} GFLOP/s{inner}"));
    }
    let timing = if search_only {
        "final round where there is one, else search timing"
    } else {
        "final round"
    };
    let (size_long, at) = (size_label_long(size), at(kernel, size));
    Words {
        text: format!(
            "**Tuned {kernel}, {size_long}** ({timing}, median GFLOP/s): {}.",
            long.join("; ")
        ),
        short: format!("Tuned {at} reaches {}.", md::join_and(&short)),
    }
}

fn replay_words(at: &str, label: &str, space: usize, rec: &Replays) -> Words {
    let (runs, len, reach) = (rec.runs, rec.tries, rec.reach * 100.0);
    let list = |f: &dyn Fn(&StrategyReplay) -> String| -> Vec<String> {
        rec.strategies.iter().map(f).collect()
    };
    let configs = list(&|n| match (n.configs, n.seconds) {
        (Some(c), Some(sec)) => format!("{} {c:.0} ({} s)", n.strategy, md::secs(sec)),
        (Some(c), None) => format!("{} {c:.0}", n.strategy),
        _ => format!("{} not within {len}", n.strategy),
    });
    let found = list(&|n| format!("{} {:.0}%", n.strategy, n.found * 100.0));
    let need = list(&|n| match n.configs {
        Some(c) => format!("{c:.0} ({})", n.strategy),
        None => format!("more than {len} ({})", n.strategy),
    });
    Words {
        text: format!(
            "**Strategies replayed on {label}'s space, {at}** ({space} configurations measured exhaustively; {runs} replays per strategy, \
             budget {len}): median configurations to reach {reach:.0}% of the best: {}; runs finding the true best within the budget: {}.",
            configs.join(", "),
            found.join(", ")
        ),
        short: format!(
            "Replayed on {label}'s {space}-configuration space of {at}, strategies need a median {} configurations to reach {reach:.0}% of the best.",
            md::join_and(&need)
        ),
    }
}

fn rate_words(at: &str, searches: &[Rate]) -> Words {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for r in searches {
        let label = name(&r.name);
        let Some(rate) = r.rate else {
            long.push(if r.tried == 0 {
                format!("{label}: nothing tried ({})", r.stopped)
            } else {
                format!(
                    "{label}: all {} configurations answered from the store, none measured",
                    r.tried
                )
            });
            continue;
        };
        let more = if r.measured < r.tried {
            format!(", {} more answered from the store", r.tried - r.measured)
        } else {
            String::new()
        };
        long.push(format!(
            "{label}: {rate:.2} configurations/s ({} measured in {} s wall; {} CPU s compiling on {}, {} s on the device, {} s waiting for the compiler{more})",
            r.measured,
            md::secs(r.wall_s),
            md::secs(r.compile_s),
            plural(r.workers, "worker"),
            md::secs(r.device_s),
            md::secs(r.wait_s),
        ));
        short.push(format!("{label} {rate:.2}"));
    }
    let text = format!(
        "**Search rate, {at}** (configurations measured per wall second, compiling included): {}.",
        long.join("; ")
    );
    let short = if short.is_empty() {
        text.clone()
    } else {
        format!(
            "Searching {at} measured {} configurations per second, compiling included.",
            md::join_and(&short)
        )
    };
    Words { text, short }
}
