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

const INTRO: &str = "`gemmlab tune` searched each kernel's space (parameters, hint switches, register caps) on each toolchain, \
    timing each configuration briefly (one far slower than the best so far is pruned after its checked run), then re-measured \
    each toolchain's fastest with the full timing method, interleaved: the final round. Tuned bests and top tables quote the final \
    round (median GFLOP/s ± the IQR as % of the median; \"x cuBLAS\" against cuBLAS in the same run), search tables and charts \
    the search timing; a published default comes from a compare row of the same device, else from its point in a search.\n\n";

const SCREEN: &str = "Searches with a screen (`tune --screen`) first ran each configuration once, checked, with K cut short, \
    and pruned one far slower than the best so far at that launch (a speed of the shorter K).\n\n";

const SEARCHES: &str =
    "\"run\" numbers result directories as in Environment; \"measured / s\" counts configurations \
    measured in this run (not answered from the store) per wall second, compiling included.\n\n";

const CHARTS: &str = "Progress charts: the best verified GFLOP/s so far against configurations tried (in the order the strategy \
    learnt their outcomes) and against seconds. Spread charts: every configuration a toolchain tried, fastest first, as a fraction \
    of its best against rank / configurations tried: a curve crosses 90% at the share near the best and ends early by the share that failed.\n\n";

const REPLAY: &str = "A search that tried its whole space lets each strategy be replayed over its outcomes in seeded runs, without a device. \
    This is a replay over measured outcomes, not new measurements: a configuration scores its search-timing GFLOP/s and costs its \
    device seconds plus its compile time over the compile workers, so the seconds approximate the tuner's overlapped wall time. \
    Replay charts: the median over the runs of the best so far as a fraction of the space's best, the band the quartiles.\n\n";

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

/// A bulleted list.
fn list(s: &mut String, items: impl Iterator<Item = String>) {
    for i in items {
        let _ = writeln!(s, "- {}", md::escape(&i));
    }
    s.push('\n');
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
        list(&mut s, a.unreadable.iter().map(|u| md::short_reason(u)));
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

/// A cell of a table of `T`s.
type Cell<'f, T> = &'f dyn Fn(&T) -> String;

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
    let rows: Vec<Vec<String>> = (g.searches.iter().zip(&g.names))
        .map(|(&i, n)| COLUMNS.iter().map(|c| c.1(&a.searches[i], n)).collect())
        .collect();
    let head: Vec<String> = COLUMNS.iter().map(|c| c.0.to_string()).collect();
    s.push_str(&md::table(&head, &rows));
    if !rows.is_empty() {
        s.push('\n');
    }
    if !g.notes.is_empty() {
        s.push_str("Space notes:\n\n");
        list(
            s,
            g.notes.iter().map(|(t, n)| format!("{}: {n}", tc_name(*t))),
        );
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
        let rows: Vec<Vec<String>> = (r.rows.iter().zip(1..))
            .map(|(f, rank)| {
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
                match (r.several_runs, f.strategies.is_empty()) {
                    (true, true) => row.push(f.run.to_string()),
                    (true, false) => row.push(format!("{} ({})", f.run, f.strategies.join(", "))),
                    _ => {}
                }
                row
            })
            .collect();
        if !rows.is_empty() {
            let _ = writeln!(s, "{}", md::table(&head, &rows));
        }
        if !r.failed.is_empty() {
            let what: Vec<String> = (r.failed.iter())
                .map(|m| format!("{} ({})", config_of(m), m.status.label()))
                .collect();
            let _ = writeln!(
                s,
                "Without a speed in the final round: {}.\n",
                md::escape(&what.join("; "))
            );
        }
        if let Some(d) = &r.tuned.default {
            let gain = (r.tuned.gain).map_or(String::new(), |u| {
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
    let dense = points > 40;
    if dense {
        style.plain()
    } else {
        style.line()
    }
}

/// A figure of one panel of fractions of a best, from 0 to `hi` on x, with a
/// reference line at `reach`, titled "gemm6 at 4096{what} on H200".
fn fraction_figure(
    ctx: &Ctx,
    g: &Group,
    what: &str,
    (hi, x, y, reach): (f64, &str, &str, f64),
) -> Figure {
    let mut panel = Panel::new("", XAxis::Linear { lo: 0.0, hi }, x, y);
    panel.y_max = Some(1.08);
    panel.refs.push(RefLine {
        label: format!("{:.0}% of the best", reach * 100.0),
        y: reach,
        color: VENDOR_COLOR,
    });
    figure(ctx, g, what, Vec::new(), vec![panel])
}

/// A figure of `panels` side by side (one: wide), titled "gemm6 at 4096{what} on H200".
fn figure(ctx: &Ctx, g: &Group, what: &str, legend: Vec<Style>, panels: Vec<Panel>) -> Figure {
    let ((panel_w, panel_h), cols) = (
        if panels.len() == 1 {
            (860, 400)
        } else {
            (560, 380)
        },
        panels.len(),
    );
    Figure {
        title: format!("{}{what}{}", at(&g.kernel, g.size), ctx.title_suffix()),
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
    let axes = (
        1.0,
        "rank / configurations tried",
        "GFLOP/s / the toolchain's best",
        NEAR_BEST,
    );
    let mut fig = fraction_figure(ctx, g, ": the tried space by rank", axes);
    for x in g.spread.iter().filter(|x| !x.speeds.is_empty()) {
        let (t, n) = (x.toolchain, x.tried.max(1) as f64);
        let style = Style::new(format!("{} ({} tried)", tc_name(t), x.tried), color(t));
        let style = styled(style, x.speeds.len());
        let points = x
            .speeds
            .iter()
            .zip(1..)
            .map(|(v, i)| (i as f64 / n, Some(v / x.best)));
        let points = points.collect();
        fig.legend.push(style.clone());
        fig.panels[0].lines.push(Line { style, points });
    }
    if fig.legend.is_empty() {
        return Ok(());
    }
    let alt = format!("{title}: tried configurations' GFLOP/s as a fraction of the best, by rank");
    let stem = format!("tune-spread-{}", g.stem);
    s.push_str(&ctx.chart(&fig, &stem, &alt)?.markdown);
    Ok(())
}

fn progress_figure(ctx: &Ctx, g: &Group) -> Option<Figure> {
    let most = g.curves.iter().map(|c| c.points.len()).max()? as f64;
    let longest = g.curves.iter().filter_map(|c| c.points.last().map(|p| p.1));
    let longest = longest.filter(|v| v.is_finite()).fold(0.0, f64::max);
    let y = "best GFLOP/s so far";
    let x = XAxis::Linear { lo: 0.0, hi: most };
    let by_count = Panel::new("against configurations tried", x, "configurations tried", y);
    let hi = if longest > 0.0 { longest } else { 1.0 };
    let x = XAxis::Linear { lo: 0.0, hi };
    let by_time = Panel::new("against seconds", x, "seconds since the search started", y);
    let mut fig = figure(
        ctx,
        g,
        ": best GFLOP/s so far",
        Vec::new(),
        vec![by_count, by_time],
    );
    for c in &g.curves {
        let style = Style::new(name(&c.name), shade(color(c.name.toolchain), c.nth));
        let style = styled(style, c.points.len());
        let style = if c.nth > 0 { style.dashed() } else { style };
        for (i, panel) in fig.panels.iter_mut().enumerate() {
            let points = c
                .points
                .iter()
                .map(|p| (if i == 1 { p.1 } else { p.0 as f64 }, p.2));
            let (style, points) = (style.clone(), points.collect());
            panel.lines.push(Line { style, points });
        }
        fig.legend.push(style);
    }
    let top = fig.panels.iter().map(Panel::data_max).fold(0.0, f64::max);
    if let Some(v) = g.vendor {
        for panel in &mut fig.panels {
            let (label, color) = (format!("cuBLAS {}", md::speed(v)), VENDOR_COLOR);
            panel.refs.push(RefLine { label, y: v, color });
        }
        fig.legend
            .push(Style::new("cuBLAS (final round)", VENDOR_COLOR).dashed());
    }
    let y_max = top.max(g.vendor.unwrap_or(0.0)) * 1.08;
    for panel in &mut fig.panels {
        panel.y_max = Some(if y_max > 0.0 { y_max } else { 1.0 });
    }
    Some(fig)
}

/// The strategies replayed over each complete search, from its replay record.
fn replays(ctx: &mut Ctx, a: &Tune, g: &Group, title: &str, s: &mut String) -> Result<()> {
    if g.replays.is_empty() {
        return Ok(());
    }
    s.push_str("#### Strategies replayed over the measured space\n\n");
    if let Some(rec) = g.replays.iter().find_map(|r| r.record.as_ref()) {
        let (runs, budget) = (rec.runs, rec.budget);
        let _ = writeln!(s, "{runs} seeded runs per strategy, each trying at most {budget} configurations (or the whole space if smaller).\n");
    }
    for r in &g.replays {
        let label = name(&r.name);
        match &r.record {
            None => {
                let dir = ctx.data.runs[a.searches[r.search].run - 1].dir.display();
                let _ = writeln!(s, "{label}: no replay record; `gemmlab tune --replay-only {dir}` writes it from the search's trace.\n");
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
    let (len, reach) = (rec.tries, rec.reach * 100.0);
    let axes = (
        len as f64,
        "configurations tried",
        "best so far / the space's best",
        rec.reach,
    );
    let mut fig = fraction_figure(ctx, g, &format!(", {label}: strategies replayed"), axes);
    (fig.panel_w, fig.panel_h) = (900, 420);
    for (n, c) in rec.strategies.iter().zip(STRATEGY_COLORS.iter().cycle()) {
        let band =
            n.q1.iter()
                .zip(&n.q3)
                .zip(1..)
                .map(|((q1, q3), k)| (k as f64, *q1, *q3));
        let median = n.median.iter().zip(1..).map(|(v, k)| (k as f64, Some(*v)));
        let style = styled(Style::new(n.strategy.clone(), *c), len);
        fig.panels[0].bands.push(Band {
            color: *c,
            points: band.collect(),
        });
        let points = median.collect();
        fig.legend.push(style.clone());
        fig.panels[0].lines.push(Line { style, points });
    }
    let alt =
        format!("{title}, {label}: strategies replayed, median best so far against configurations");
    s.push_str(&ctx.chart(&fig, &r.stem, &alt)?.markdown);
    let cols: [(String, Cell<StrategyReplay>); 6] = [
        ("strategy".into(), &|n| n.strategy.clone()),
        (format!("configurations to {reach:.0}% (median)"), &|n| {
            n.configs
                .map_or("not reached".into(), |c| format!("{c:.0}"))
        }),
        (format!("seconds to {reach:.0}% (median)"), &|n| {
            n.seconds.map_or(md::MISSING.into(), md::secs)
        }),
        (format!("runs reaching {reach:.0}%"), &|n| {
            format!("{} of {}", n.reached, rec.runs)
        }),
        ("runs finding the best".into(), &|n| {
            format!("{:.0}%", n.found * 100.0)
        }),
        (format!("median at {len} configurations"), &|n| {
            md::pct(n.median.last().copied())
        }),
    ];
    let cols: Vec<(&str, _)> = cols.iter().map(|(h, f)| (h.as_str(), f)).collect();
    let _ = writeln!(s, "{}", md::table_of(&cols, &rec.strategies));
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
    let long: Vec<String> = (toolchains.iter())
        .map(|x| {
            let whole = if x.whole_space { "the whole space" } else { "a sample of the space" };
            let (t, share, best, by) = (tc_name(x.toolchain), x.share * 100.0, md::speed(x.best), x.strategies.join(" and "));
            format!(
                "{t}: {} of {} configurations tried ({share:.0}%) within {pct:.0}% of its best {best} GFLOP/s, {} failed (searched by {by}; {whole})",
                x.near, x.tried, x.failed
            )
        })
        .collect();
    let short: Vec<String> = (toolchains.iter())
        .map(|x| {
            let (share, t, tried) = (x.share * 100.0, tc_name(x.toolchain), x.tried);
            format!("{share:.0}% of {t}'s {tried}")
        })
        .collect();
    let mut text = format!("**How hard to tune, {at}**: {}.", long.join("; "));
    if let Some([hard, easy]) = harder {
        let (hard, easy) = (tc_name(*hard), tc_name(*easy));
        let _ = write!(text, " Fewer of {hard}'s configurations are near its best than {easy}'s: {hard} is the harder to tune.");
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
        let (how, short) = match same {
            true => (
                format!("within {:.0}%", SAME_SPEED * 100.0),
                format!("Tuned {at} runs alike on {na} and {nb} ({pair} {tuned:.2})."),
            ),
            false => (
                format!("{} ahead by {:.0}%", tc_name(*lead), gap * 100.0),
                format!("Tuned {at} leaves a {pair} ratio of {tuned:.2}."),
            ),
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
        let (speed, eq) = (
            md::speed(b.gflops),
            vs.as_ref().map_or(String::new(), |v| format!(" = {v}")),
        );
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
    let timing = match search_only {
        true => "final round where there is one, else search timing",
        false => "final round",
    };
    let (size_long, at) = (size_label_long(size), at(kernel, size));
    let (long, short) = (long.join("; "), md::join_and(&short));
    Words {
        text: format!("**Tuned {kernel}, {size_long}** ({timing}, median GFLOP/s): {long}."),
        short: format!("Tuned {at} reaches {short}."),
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
    let (configs, found, need) = (configs.join(", "), found.join(", "), md::join_and(&need));
    Words {
        text: format!(
            "**Strategies replayed on {label}'s space, {at}** ({space} configurations measured exhaustively; {runs} replays per strategy, \
             budget {len}): median configurations to reach {reach:.0}% of the best: {configs}; runs finding the true best within the budget: {found}."
        ),
        short: format!("Replayed on {label}'s {space}-configuration space of {at}, strategies need a median {need} configurations to reach {reach:.0}% of the best."),
    }
}

fn rate_words(at: &str, searches: &[Rate]) -> Words {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for r in searches {
        let label = name(&r.name);
        let Some(rate) = r.rate else {
            long.push(match r.tried {
                0 => format!("{label}: nothing tried ({})", r.stopped),
                n => format!(
                    "{label}: all {n} configurations answered from the store, none measured"
                ),
            });
            continue;
        };
        let more = match r.measured < r.tried {
            true => format!(", {} more answered from the store", r.tried - r.measured),
            false => String::new(),
        };
        let (wall, compile, device, wait) = (
            md::secs(r.wall_s),
            md::secs(r.compile_s),
            md::secs(r.device_s),
            md::secs(r.wait_s),
        );
        let workers = plural(r.workers, "worker");
        long.push(format!(
            "{label}: {rate:.2} configurations/s ({} measured in {wall} s wall; {compile} CPU s compiling on {workers}, {device} s on the device, {wait} s waiting for the compiler{more})",
            r.measured
        ));
        short.push(format!("{label} {rate:.2}"));
    }
    let (long, rates) = (long.join("; "), md::join_and(&short));
    let text = format!("**Search rate, {at}** (configurations measured per wall second, compiling included): {long}.");
    let short = match short.is_empty() {
        true => text.clone(),
        false => format!(
            "Searching {at} measured {rates} configurations per second, compiling included."
        ),
    };
    Words { text, short }
}
