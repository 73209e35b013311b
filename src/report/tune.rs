//! "Tuning (tune)": what `gemmlab tune` found for each kernel, size and toolchain (its final
//! round), how each search got there, how much of each space is near its best, and how the
//! strategies fared when replayed over the spaces searched exhaustively (`analysis::tune`).

use std::fmt::Write as _;

use plotters::style::RGBColor;

use crate::analysis::tune::{
    config_of, At, Group, Hardness, Kind, Published, Rate, SearchName, Source, Tune, Tuned,
    Verdict, NEAR_BEST,
};
use crate::backend::Toolchain;
use crate::error::Result;
use crate::results::{Replays, StrategyReplay};

use super::data::{self, toolchain_name as tc_name};
use super::md::{self, plural, size_label_long};
use super::{color, Ctx, Section, Words, SAME_SPEED, VENDOR_COLOR};
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
    let strategy = or_empty(n.strategy.as_ref(), |s| format!(" {s}"));
    let run = or_empty(n.run, |r| format!(" (run {r})"));
    format!("{}{strategy}{run}", tc_name(n.toolchain))
}

fn at(kernel: &str, size: &At) -> String {
    format!("{kernel} at {}", size.label())
}

/// "M = N = K = 4096", or a spec kernel's "n=4096".
fn at_long(size: &At) -> String {
    match size {
        At::Gemm(s) => size_label_long(*s),
        At::Dims(d) => d.clone(),
    }
}

/// `f` of the value, or "" without one.
fn or_empty<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or(String::new(), f)
}

/// `f` of the value, or "-" without one.
fn or_missing<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or(md::MISSING.into(), f)
}

/// " (a, b)", or "" without items.
fn in_parens(items: &[String]) -> String {
    or_empty((!items.is_empty()).then_some(items), |v| {
        format!(" ({})", v.join(", "))
    })
}

/// A table's header from its columns' names, separated by "|".
fn header(columns: &str) -> Vec<String> {
    columns.split('|').map(String::from).collect()
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
        (
            a.searches.iter().any(|x| x.trace.search.screened() > 0),
            SCREEN,
        ),
        (!a.searches.is_empty(), SEARCHES),
        (a.groups.iter().any(|g| !g.curves.is_empty()), CHARTS),
        (a.searches.iter().any(|x| x.replays.is_some()), REPLAY),
    ];
    s.extend(explained.iter().filter(|e| e.0).map(|e| e.1));
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
        let mut title = format!("{}, {}", g.kernel, at_long(&g.size));
        if a.machines > 1 {
            let _ = write!(title, " on {}", g.machine.join(" + "));
        }
        let _ = writeln!(s, "### {title}\n");
        searches_table(a, g, &mut s);
        rounds(g, &mut s);
        charts(ctx, g, &title, &mut s)?;
        replays(ctx, a, g, &title, &mut s)?;
    }
    Ok(Section::of(TUNING, s, &a.findings))
}

const SEARCH_HEAD: &str = "search|strategy|run|space (after filtering of before)|tried|measured|from store|failed|\
    pruned|wall s|compile CPU s|device s|compile workers|measured / s|best GFLOP/s (search)|stopped";

/// One row per search, and the spaces' notes.
fn searches_table(a: &Tune, g: &Group, s: &mut String) {
    let rows: Vec<Vec<String>> = (g.searches.iter().zip(&g.names))
        .map(|(&i, n)| {
            let (x, t) = (&a.searches[i], &a.searches[i].trace.search);
            vec![
                name(n),
                t.strategy.clone(),
                x.run.to_string(),
                format!("{} of {}", x.trace.space.after, x.trace.space.before),
                t.tried.len().to_string(),
                t.measured().to_string(),
                (t.tried.len() - t.measured()).to_string(),
                x.failed().to_string(),
                t.pruned().to_string(),
                md::secs(t.wall_s),
                md::secs(t.compile_s),
                md::secs(t.device_s),
                t.options.workers.to_string(),
                or_missing(t.rate(), |v| format!("{v:.2}")),
                or_missing(x.best(), |b| md::speed(b.0)),
                t.stopped.clone(),
            ]
        })
        .collect();
    let head = SEARCH_HEAD.replace("GFLOP/s", &g.unit);
    s.push_str(&md::table(&header(&head), &rows));
    if !rows.is_empty() {
        s.push('\n');
    }
    if !g.notes.is_empty() {
        s.push_str("Space notes:\n\n");
        let notes = g.notes.iter().map(|(t, n)| format!("{}: {n}", tc_name(*t)));
        list(s, notes);
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
            let why = match r.failed.is_empty() {
                true => " (the run wrote no final round)",
                false => "",
            };
            let _ = writeln!(
                s,
                "No final-round configuration of {name} has a speed{why}.\n"
            );
        }
        // The table drops the run column (each row's last cell) when all come from one run,
        // and "x cuBLAS" for a spec kernel.
        let spec = matches!(g.size, At::Dims(_));
        let mut head = header(&format!(
            "rank|{}|x cuBLAS|registers|configuration|run",
            g.unit
        ));
        head.truncate(5 + usize::from(r.several_runs));
        let drop = |mut cells: Vec<String>| {
            if spec {
                cells.remove(2);
            }
            cells
        };
        let rows: Vec<Vec<String>> = (r.rows.iter().zip(1..))
            .map(|(f, rank)| {
                let m = f.m;
                let spread = or_empty(m.time, |t| format!(" ±{:.1}%", t.spread_pct()));
                let (speed, by) = (md::speed(f.speed), in_parens(&f.strategies));
                let mut row = vec![
                    rank.to_string(),
                    format!("{speed}{spread}{}", md::throttle_mark(m)),
                    md::ratio(data::vs_vendor(m), Some(1.0)),
                    md::registers(Some(m)),
                    config_of(m),
                    format!("{}{by}", f.run),
                ];
                row.truncate(head.len());
                drop(row)
            })
            .collect();
        if !rows.is_empty() {
            let _ = writeln!(s, "{}", md::table(&drop(head), &rows));
        }
        if !r.failed.is_empty() {
            let what: Vec<String> = (r.failed.iter())
                .map(|m| format!("{} ({})", config_of(m), m.status.label()))
                .collect();
            let what = md::escape(&what.join("; "));
            let _ = writeln!(s, "Without a speed in the final round: {what}.\n");
        }
        if let Some(d) = &r.tuned.default {
            let gain = or_empty(r.tuned.gain, |u| {
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

/// A figure of `panels` side by side, titled "gemm6 at 4096{what} on H200".
fn figure(ctx: &Ctx, g: &Group, what: &str, panels: Vec<Panel>, size: (u32, u32)) -> Figure {
    let (panel_w, panel_h) = size;
    Figure {
        title: format!("{}{what}{}", at(&g.kernel, &g.size), ctx.title_suffix()),
        legend: Vec::new(),
        cols: panels.len(),
        panels,
        panel_w,
        panel_h,
    }
}

/// A panel of fractions of a best, from 0 to `hi` on x, with a reference line at `reach`.
fn fraction_panel(hi: f64, x: &str, y: &str, reach: f64) -> Panel {
    let mut panel = Panel::new("", XAxis::Linear { lo: 0.0, hi }, x, y);
    panel.y_max = Some(1.08);
    let label = format!("{:.0}% of the best", reach * 100.0);
    let (y, color) = (reach, VENDOR_COLOR);
    panel.refs.push(RefLine { label, y, color });
    panel
}

/// Best so far against configurations and seconds; the spread of each space.
fn charts(ctx: &mut Ctx, g: &Group, title: &str, s: &mut String) -> Result<()> {
    if let Some(fig) = progress_figure(ctx, g) {
        let alt = format!(
            "{title}: best {} so far against configurations tried and seconds",
            g.unit
        );
        let stem = format!("tune-progress-{}", g.stem);
        s.push_str(&ctx.chart(&fig, &stem, &alt)?);
    }
    let x = "rank / configurations tried";
    let y = format!("{} / the toolchain's best", g.unit);
    let panel = fraction_panel(1.0, x, &y, NEAR_BEST);
    let mut fig = figure(ctx, g, ": the tried space by rank", vec![panel], (860, 400));
    for x in g.spread.iter().filter(|x| !x.speeds.is_empty()) {
        let (t, n) = (x.toolchain, x.tried.max(1) as f64);
        let style = Style::new(format!("{} ({} tried)", tc_name(t), x.tried), color(t));
        let style = styled(style, x.speeds.len());
        let points = (x.speeds.iter().zip(1..)).map(|(v, i)| (i as f64 / n, Some(v / x.best)));
        let points = points.collect();
        fig.legend.push(style.clone());
        fig.panels[0].lines.push(Line { style, points });
    }
    if fig.legend.is_empty() {
        return Ok(());
    }
    let unit = &g.unit;
    let alt = format!("{title}: tried configurations' {unit} as a fraction of the best, by rank");
    let stem = format!("tune-spread-{}", g.stem);
    s.push_str(&ctx.chart(&fig, &stem, &alt)?);
    Ok(())
}

fn progress_figure(ctx: &Ctx, g: &Group) -> Option<Figure> {
    let most = g.curves.iter().map(|c| c.points.len()).max()? as f64;
    let longest = g.curves.iter().filter_map(|c| c.points.last().map(|p| p.1));
    let longest = longest.filter(|v| v.is_finite()).fold(0.0, f64::max);
    let hi = if longest > 0.0 { longest } else { 1.0 };
    let y = &format!("best {} so far", g.unit);
    let x = XAxis::Linear { lo: 0.0, hi: most };
    let by_count = Panel::new("against configurations tried", x, "configurations tried", y);
    let x = XAxis::Linear { lo: 0.0, hi };
    let by_time = Panel::new("against seconds", x, "seconds since the search started", y);
    let panels = vec![by_count, by_time];
    let what = format!(": best {} so far", g.unit);
    let mut fig = figure(ctx, g, &what, panels, (560, 380));
    for c in &g.curves {
        let style = Style::new(name(&c.name), shade(color(c.name.toolchain), c.nth));
        let style = styled(style, c.points.len());
        let style = if c.nth > 0 { style.dashed() } else { style };
        let by_count = c.points.iter().map(|p| (p.0 as f64, p.2));
        let by_time = c.points.iter().map(|p| (p.1, p.2));
        let lines = [by_count.collect(), by_time.collect()];
        for (panel, points) in fig.panels.iter_mut().zip(lines) {
            let style = style.clone();
            panel.lines.push(Line { style, points });
        }
        fig.legend.push(style);
    }
    if let Some(v) = g.vendor {
        for panel in &mut fig.panels {
            let (label, color) = (format!("cuBLAS {}", md::speed(v)), VENDOR_COLOR);
            panel.refs.push(RefLine { label, y: v, color });
        }
        let style = Style::new("cuBLAS (final round)", VENDOR_COLOR).dashed();
        fig.legend.push(style);
    }
    // Both panels share the y axis: up to the highest line or cuBLAS.
    let top = fig.panels.iter().map(Panel::data_max).fold(0.0, f64::max) * 1.08;
    for panel in &mut fig.panels {
        panel.y_max = Some(if top > 0.0 { top } else { 1.0 });
    }
    Some(fig)
}

/// The strategies replayed over each complete search, from its replay record:
/// a chart of the median best so far and a table per strategy.
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
        let Some(rec) = &r.record else {
            let dir = ctx.data.runs[a.searches[r.search].run - 1].dir.display();
            let _ = writeln!(s, "{label}: no replay record; `gemmlab tune --replay-only {dir}` writes it from the search's trace.\n");
            continue;
        };
        if let Some(why) = &rec.error {
            let _ = writeln!(s, "{label}: no replay: {}.\n", md::escape(why));
            continue;
        }
        let (len, reach) = (rec.tries, rec.reach * 100.0);
        let x = "configurations tried";
        let panel = fraction_panel(len as f64, x, "best so far / the space's best", rec.reach);
        let what = format!(", {label}: strategies replayed");
        let mut fig = figure(ctx, g, &what, vec![panel], (900, 420));
        for (n, c) in rec.strategies.iter().zip(STRATEGY_COLORS.iter().cycle()) {
            let band = (n.q1.iter().zip(&n.q3).zip(1..)).map(|((q1, q3), k)| (k as f64, *q1, *q3));
            let median = n.median.iter().zip(1..).map(|(v, k)| (k as f64, Some(*v)));
            let (color, points) = (*c, band.collect());
            fig.panels[0].bands.push(Band { color, points });
            let (style, points) = (styled(Style::new(&n.strategy, *c), len), median.collect());
            fig.legend.push(style.clone());
            fig.panels[0].lines.push(Line { style, points });
        }
        let alt = format!("{title}{what}, median best so far against configurations");
        s.push_str(&ctx.chart(&fig, &r.stem, &alt)?);
        let to = format!("to {reach:.0}% (median)");
        let head = [
            "strategy".into(),
            format!("configurations {to}"),
            format!("seconds {to}"),
            format!("runs reaching {reach:.0}%"),
            "runs finding the best".into(),
            format!("median at {len} configurations"),
        ];
        let rows: Vec<Vec<String>> = (rec.strategies.iter())
            .map(|n| {
                vec![
                    n.strategy.clone(),
                    (n.configs).map_or("not reached".into(), |c| format!("{c:.0}")),
                    or_missing(n.seconds, md::secs),
                    format!("{} of {}", n.reached, rec.runs),
                    format!("{:.0}%", n.found * 100.0),
                    md::pct(n.median.last().copied()),
                ]
            })
            .collect();
        let _ = writeln!(s, "{}", md::table(&head, &rows));
    }
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
        } => tuned_words(kernel, size, toolchains, *search_only, *has_vendor),
        Kind::ToolchainGap {
            kernel,
            size,
            toolchains,
            tuned,
            lead,
            gap,
            same,
            both_final,
            default,
        } => {
            let at = at(kernel, size);
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
            let timing = match both_final {
                true => "final round",
                false => "search timing where no final round",
            };
            Words {
                text: format!(
                    "**Toolchain gap before and after tuning, {at}**: {pair} = {dr:.2} at the published defaults ({src}), \
                     {tuned:.2} at each toolchain's tuned best ({timing}): {verdict}."
                ),
                short: format!("For {at} {verdict} ({pair} {dr:.2} at the defaults, {tuned:.2} tuned)."),
            }
        }
        Kind::HowHard {
            kernel,
            size,
            unit,
            near_best,
            toolchains,
            harder,
        } => hard_words(
            &at(kernel, size),
            unit,
            near_best * 100.0,
            toolchains,
            harder,
        ),
        Kind::Replayed {
            kernel,
            size,
            search,
            space,
            replays,
        } => replay_words(&at(kernel, size), &name(search), *space, replays),
        Kind::SearchRate {
            kernel,
            size,
            searches,
        } => rate_words(&at(kernel, size), searches),
    }
}

fn hard_words(
    at: &str,
    unit: &str,
    pct: f64,
    tcs: &[Hardness],
    harder: &Option<[Toolchain; 2]>,
) -> Words {
    let (long, short): (Vec<String>, Vec<String>) = (tcs.iter())
        .map(|x| {
            let whole = if x.whole_space { "the whole space" } else { "a sample of the space" };
            let (t, share, best, by) = (tc_name(x.toolchain), x.share * 100.0, md::speed(x.best), x.strategies.join(" and "));
            let long = format!(
                "{t}: {} of {} configurations tried ({share:.0}%) within {pct:.0}% of its best {best} {unit}, {} failed (searched by {by}; {whole})",
                x.near, x.tried, x.failed
            );
            (long, format!("{share:.0}% of {t}'s {}", x.tried))
        })
        .unzip();
    let mut text = format!("**How hard to tune, {at}**: {}.", long.join("; "));
    if let Some([hard, easy]) = harder {
        let (hard, easy) = (tc_name(*hard), tc_name(*easy));
        let _ = write!(text, " Fewer of {hard}'s configurations are near its best than {easy}'s: {hard} is the harder to tune.");
    }
    let short = md::join_and(&short);
    let short = format!(
        "For {at}, {short} tried configurations are within {pct:.0}% of the toolchain's best."
    );
    Words { text, short }
}

fn tuned_words(kernel: &str, size: &At, tcs: &[Tuned], search_only: bool, vendor: bool) -> Words {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for t in tcs {
        let name = tc_name(t.toolchain);
        let Some(b) = &t.best else {
            long.push(format!("{name}: no configuration with a speed"));
            continue;
        };
        let timing = match b.final_round {
            true => "",
            false => " (search timing: no final round)",
        };
        let vs = b.vs_vendor.map(|v| format!("{v:.2}x cuBLAS"));
        let (speed, eq) = (
            md::speed(b.gflops),
            or_empty(vs.as_ref(), |v| format!(" = {v}")),
        );
        let mut l = format!("{name} {speed} GFLOP/s{eq} with `{}`{timing}", b.config);
        let mut inner: Vec<String> = vs.into_iter().collect();
        if let Some(d) = &t.default {
            let gains = or_empty(t.gain, |u| format!("; tuning gains {:+.0}%", u * 100.0));
            let _ = write!(l, " (published default {}{gains})", describe_default(d));
            match (vendor, d.vs_vendor, t.gain) {
                (true, Some(v), _) => inner.push(format!("default {v:.2}x")),
                (_, _, Some(u)) => inner.push(format!("{:+.0}% over the default", u * 100.0)),
                _ => {}
            }
        }
        long.push(l);
        short.push(format!("{name} {speed} GFLOP/s{}", in_parens(&inner)));
    }
    let timing = match search_only {
        true => "final round where there is one, else search timing",
        false => "final round",
    };
    let (size_long, at) = (at_long(size), at(kernel, size));
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
        let more = (r.measured < r.tried).then_some(r.tried - r.measured);
        let more = or_empty(more, |n| format!(", {n} more answered from the store"));
        let [wall, compile, device, wait] =
            [r.wall_s, r.compile_s, r.device_s, r.wait_s].map(md::secs);
        let (measured, workers) = (r.measured, plural(r.workers, "worker"));
        long.push(format!("{label}: {rate:.2} configurations/s ({measured} measured in {wall} s wall; {compile} CPU s compiling on {workers}, {device} s on the device, {wait} s waiting for the compiler{more})"));
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
