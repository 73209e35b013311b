//! The plot layer: charts as SVG and PNG, drawn with plotters from a small description
//! ([`Figure`]): a title, a legend and a grid of panels holding grouped bars,
//! lines over a log2, linear or categorical x axis, shaded bands, and
//! reference lines.

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, EmptyElement, PathElement};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

use crate::error::{Error, Result};

pub mod fonts;

use fonts::{ChartFont, FAMILY};

/// How a series looks, and its name in the legend.
#[derive(Debug, Clone)]
pub struct Style {
    pub name: String,
    pub color: RGBColor,
    pub dashed: bool,
    /// Shown in the legend as a line (line charts) rather than a box (bars).
    pub line: bool,
    /// Lines mark each point with a dot; off for long curves.
    pub markers: bool,
}

impl Style {
    pub fn new(name: impl Into<String>, color: RGBColor) -> Style {
        Style {
            name: name.into(),
            color,
            dashed: false,
            line: false,
            markers: true,
        }
    }

    /// A line drawn without a dot at each point (curves of many points).
    pub fn plain(mut self) -> Style {
        self.line = true;
        self.markers = false;
        self
    }

    pub fn line(mut self) -> Style {
        self.line = true;
        self
    }

    pub fn dashed(mut self) -> Style {
        self.dashed = true;
        self
    }
}

#[derive(Debug, Clone)]
pub enum XAxis {
    /// Positive values placed on a log2 scale, each one a tick.
    Log2(Vec<f64>),
    /// Evenly spaced categories; data x is the category index.
    Categories(Vec<String>),
    /// A linear scale from `lo` to `hi`, ticks at round numbers.
    Linear { lo: f64, hi: f64 },
}

/// A line; missing points break it.
#[derive(Debug, Clone)]
pub struct Line {
    pub style: Style,
    pub points: Vec<(f64, Option<f64>)>,
}

/// Grouped bars: `values[category][series]`, with an optional note above each bar.
#[derive(Debug, Clone)]
pub struct Bars {
    pub styles: Vec<Style>,
    pub values: Vec<Vec<Option<f64>>>,
    pub notes: Vec<Vec<Option<String>>>,
}

/// A shaded area between two curves (a quartile range): `(x, low, high)`.
#[derive(Debug, Clone)]
pub struct Band {
    pub color: RGBColor,
    pub points: Vec<(f64, f64, f64)>,
}

/// A horizontal reference line with a label at its right end.
#[derive(Debug, Clone)]
pub struct RefLine {
    pub label: String,
    pub y: f64,
    pub color: RGBColor,
}

#[derive(Debug, Clone)]
pub struct Panel {
    pub title: String,
    pub x: XAxis,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub bars: Option<Bars>,
    /// Drawn under the lines.
    pub bands: Vec<Band>,
    pub refs: Vec<RefLine>,
    /// Shared y maximum (small multiples); None: from the data.
    pub y_max: Option<f64>,
    /// Whole-number y labels (counts, bytes).
    pub integer_y: bool,
    /// A log10 y axis (a roofline), from a power of ten below the smallest value
    /// to one above the largest; lines, bands and reference lines only (bars
    /// start at zero).
    pub log_y: bool,
}

impl Panel {
    pub fn new(title: impl Into<String>, x: XAxis, x_label: &str, y_label: &str) -> Panel {
        Panel {
            title: title.into(),
            x,
            x_label: x_label.into(),
            y_label: y_label.into(),
            lines: Vec::new(),
            bars: None,
            bands: Vec::new(),
            refs: Vec::new(),
            y_max: None,
            integer_y: false,
            log_y: false,
        }
    }

    /// The smallest positive value drawn by lines, bands and reference lines.
    fn data_min_positive(&self) -> f64 {
        let lines = (self.lines.iter()).flat_map(|l| l.points.iter().filter_map(|p| p.1));
        let bands = (self.bands.iter()).flat_map(|b| b.points.iter().flat_map(|p| [p.1, p.2]));
        let refs = self.refs.iter().map(|r| r.y);
        (lines.chain(bands).chain(refs))
            .filter(|y| y.is_finite() && *y > 0.0)
            .fold(f64::INFINITY, f64::min)
    }

    /// The largest value drawn (bars, lines, reference lines).
    pub fn data_max(&self) -> f64 {
        let mut m: f64 = 0.0;
        for l in &self.lines {
            for (_, y) in &l.points {
                if let Some(y) = y.filter(|y| y.is_finite()) {
                    m = m.max(y);
                }
            }
        }
        for b in &self.bands {
            for (_, lo, hi) in &b.points {
                for v in [lo, hi].into_iter().filter(|v| v.is_finite()) {
                    m = m.max(*v);
                }
            }
        }
        if let Some(b) = &self.bars {
            for row in &b.values {
                for v in row.iter().flatten().filter(|v| v.is_finite()) {
                    m = m.max(*v);
                }
            }
        }
        for r in &self.refs {
            if r.y.is_finite() {
                m = m.max(r.y);
            }
        }
        m
    }
}

#[derive(Debug, Clone)]
pub struct Figure {
    pub title: String,
    pub legend: Vec<Style>,
    pub panels: Vec<Panel>,
    pub cols: usize,
    pub panel_w: u32,
    pub panel_h: u32,
}

/// The files written for one figure.
#[derive(Debug, Clone)]
pub struct Written {
    pub svg: PathBuf,
    pub png: Option<PathBuf>,
}

const TITLE_H: u32 = 40;
const LEGEND_ROW_H: u32 = 26;

fn font(size: u32) -> FontDesc<'static> {
    (FAMILY, size).into_font()
}

fn drawing_err<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> Error + '_ {
    move |e| Error::Data {
        path: path.to_path_buf(),
        message: format!("drawing the chart failed: {e}"),
    }
}

/// Writes `<dir>/<stem>.svg` and, with `png` and a font, `<dir>/<stem>.png`.
/// Without a font, the SVG's text is laid out from an estimate of its width
/// (its viewer draws the text) and no PNG is written.
pub fn write(
    fig: &Figure,
    dir: &Path,
    stem: &str,
    font: Option<&ChartFont>,
    png: bool,
) -> Result<Written> {
    let cols = fig.cols.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let w = fig.panel_w * cols as u32;
    let legend_rows = legend_rows(&fig.legend, w);
    let h = TITLE_H + legend_rows * LEGEND_ROW_H + fig.panel_h * rows as u32;

    let svg = dir.join(format!("{stem}.svg"));
    {
        let backend = TextBackend {
            inner: SVGBackend::new(&svg, (w, h)),
            font: font.cloned(),
            raster: false,
        };
        render(backend.into_drawing_area(), fig, legend_rows).map_err(drawing_err(&svg))?;
    }
    let png = if let (Some(font), true) = (font, png) {
        let path = dir.join(format!("{stem}.png"));
        {
            let backend = TextBackend {
                inner: BitMapBackend::new(&path, (w, h)),
                font: Some(font.clone()),
                raster: true,
            };
            render(backend.into_drawing_area(), fig, legend_rows).map_err(drawing_err(&path))?;
        }
        Some(path)
    } else {
        None
    };
    Ok(Written { svg, png })
}

/// Legend entries take about this many pixels (sample + text + gap); the
/// estimate only decides how many rows the legend gets.
fn legend_entry_w(s: &Style) -> u32 {
    40 + 8 * s.name.chars().count() as u32
}

fn legend_rows(legend: &[Style], w: u32) -> u32 {
    if legend.is_empty() {
        return 0;
    }
    let mut rows = 1;
    let mut x = 0;
    for s in legend {
        let ew = legend_entry_w(s);
        if x > 0 && x + ew > w.saturating_sub(40) {
            rows += 1;
            x = 0;
        }
        x += ew;
    }
    rows
}

type DrawResult = std::result::Result<(), String>;

fn s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fig: &Figure,
    legend_rows: u32,
) -> DrawResult {
    root.fill(&WHITE).map_err(s)?;
    let (w, _) = root.dim_in_pixel();
    let (title, rest) = root.split_vertically(TITLE_H);
    title
        .draw(&Text::new(
            fig.title.clone(),
            (w as i32 / 2, 12),
            font(20)
                .style(FontStyle::Bold)
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(s)?;
    let (legend, grid) = rest.split_vertically(legend_rows * LEGEND_ROW_H);
    if legend_rows > 0 {
        draw_legend(&legend, &fig.legend, w)?;
    }
    let cols = fig.cols.max(1);
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let areas = grid.split_evenly((rows, cols));
    for (panel, area) in fig.panels.iter().zip(areas.iter()) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(s)
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    legend: &[Style],
    w: u32,
) -> DrawResult {
    // Lay out rows with measured text widths, then centre each row.
    let style = font(14).color(&BLACK);
    let mut rows: Vec<Vec<(&Style, u32)>> = vec![Vec::new()];
    let mut x = 0;
    for s in legend {
        let tw = area
            .estimate_text_size(&s.name, &style)
            .map(|(tw, _)| tw)
            .unwrap_or(8 * s.name.len() as u32);
        let ew = 34 + tw + 22;
        if x > 0 && x + ew > w.saturating_sub(40) {
            rows.push(Vec::new());
            x = 0;
        }
        if let Some(r) = rows.last_mut() {
            r.push((s, ew));
        }
        x += ew;
    }
    for (ri, row) in rows.iter().enumerate() {
        let total: u32 = row.iter().map(|(_, ew)| ew).sum();
        let mut x = (w.saturating_sub(total) / 2) as i32;
        let y = (ri as u32 * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32;
        for (st, ew) in row {
            let line_style = stroke(st.color, 3);
            if st.dashed {
                area.draw(&DashedPathElement::new(
                    vec![(x, y), (x + 28, y)],
                    6,
                    4,
                    line_style,
                ))
                .map_err(s)?;
            } else if st.line {
                area.draw(&PathElement::new(vec![(x, y), (x + 28, y)], line_style))
                    .map_err(s)?;
                if st.markers {
                    area.draw(&Circle::new((x + 14, y), 3, st.color.filled()))
                        .map_err(s)?;
                }
            } else {
                area.draw(&Rectangle::new(
                    [(x, y - 6), (x + 28, y + 6)],
                    st.color.filled(),
                ))
                .map_err(s)?;
            }
            area.draw(&Text::new(
                st.name.clone(),
                (x + 34, y),
                style.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(s)?;
            x += *ew as i32;
        }
    }
    Ok(())
}

fn nice_max(v: f64, integer: bool) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return if integer { 4.0 } else { 1.0 };
    }
    let m = v * 1.12;
    if integer {
        m.max(4.0).ceil()
    } else {
        m
    }
}

fn fmt_y(v: f64, max: f64, integer: bool) -> String {
    if integer || max >= 20.0 {
        format!("{v:.0}")
    } else if max >= 2.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<KeyAxis, RangedCoordf64>>;

/// Where a data y value is drawn: itself, or its log10 on a log axis; never
/// above the axis's top.
struct YScale {
    log: bool,
    lo: f64,
    max: f64,
}

impl YScale {
    fn of(p: &Panel) -> YScale {
        if !p.log_y {
            let max = (p.y_max).unwrap_or_else(|| nice_max(p.data_max(), p.integer_y));
            return YScale {
                log: false,
                lo: 0.0,
                max,
            };
        }
        let (small, large) = (p.data_min_positive(), p.data_max());
        let (lo, hi) = match small.is_finite() && large > 0.0 {
            true => (small.log10().floor(), (large * 1.12).log10().ceil()),
            false => (0.0, 1.0),
        };
        // At least three decades, so that the labels fall on powers of ten.
        let hi = hi.max(lo + 3.0);
        YScale {
            log: true,
            lo,
            max: hi,
        }
    }

    fn at(&self, y: f64) -> f64 {
        match self.log {
            true => y.max(f64::MIN_POSITIVE).log10().max(self.lo),
            false => y,
        }
        .min(self.max)
    }

    fn label(&self, v: f64, integer: bool) -> String {
        match self.log {
            true => fmt_power_of_ten(v),
            false => fmt_y(v, self.max, integer),
        }
    }
}

/// 10^v as a label: 0.1, 1, 10, 1k, 10k, 1M.
fn fmt_power_of_ten(v: f64) -> String {
    let x = 10f64.powf(v);
    let (x, unit) = match x {
        x if x >= 1e6 => (x / 1e6, "M"),
        x if x >= 1e3 => (x / 1e3, "k"),
        x => (x, ""),
    };
    let digits = if x >= 1.0 {
        0
    } else {
        (-x.log10().floor()) as usize
    };
    format!("{x:.digits$}{unit}")
}

/// A log2 tick label: a whole number, or 1/N below one.
fn fmt_log2(v: f64) -> String {
    let x = v.exp2();
    match x < 1.0 {
        true => format!("1/{:.0}", 1.0 / x),
        false => format!("{x:.0}"),
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> DrawResult {
    let y = YScale::of(p);
    let (x0, x1, keys) = x_range(&p.x);
    let x_step = match &p.x {
        XAxis::Linear { .. } => tick_step(x0, x1),
        _ => 1.0,
    };
    let x_fmt = |v: &f64| -> String {
        match &p.x {
            XAxis::Log2(_) => fmt_log2(*v),
            XAxis::Linear { .. } => fmt_tick(*v, x_step),
            XAxis::Categories(c) => {
                let i = v.round();
                if i >= 0.0 && (i as usize) < c.len() && (v - i).abs() < 1e-6 {
                    c[i as usize].clone()
                } else {
                    String::new()
                }
            }
        }
    };
    let mut builder = ChartBuilder::on(area);
    if !p.title.is_empty() {
        builder.caption(&p.title, font(16).color(&BLACK));
    }
    let mut chart = builder
        .margin(8)
        .margin_right(18)
        .x_label_area_size(if p.x_label.is_empty() { 28 } else { 48 })
        .y_label_area_size(if p.y_label.is_empty() { 52 } else { 72 })
        .build_cartesian_2d(
            KeyAxis {
                lo: x0,
                hi: x1,
                keys,
            },
            y.lo..y.max,
        )
        .map_err(s)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .y_labels(6)
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| y.label(*v, p.integer_y))
        .label_style(font(13).color(&BLACK))
        .axis_desc_style(font(14).color(&BLACK))
        .draw()
        .map_err(s)?;

    if let Some(b) = p.bars.as_ref().filter(|_| !y.log) {
        draw_bars(&mut chart, b, y.max)?;
    }
    for b in &p.bands {
        draw_band(&mut chart, b, &p.x, &y)?;
    }
    let shown = |r: &&RefLine| r.y.is_finite() && (y.log || r.y <= y.max);
    for r in p.refs.iter().filter(shown) {
        draw_ref(&mut chart, r, y.at(r.y), x0, x1)?;
    }
    for l in &p.lines {
        draw_line(&mut chart, l, &p.x, &y)?;
    }
    Ok(())
}

/// The x range and the key points of an axis, in drawing coordinates.
fn x_range(x: &XAxis) -> (f64, f64, Vec<f64>) {
    match x {
        XAxis::Log2(vals) => {
            let l: Vec<f64> = vals
                .iter()
                .filter(|v| **v > 0.0 && v.is_finite())
                .map(|v| v.log2())
                .collect();
            let lo = l.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if lo.is_finite() && hi.is_finite() {
                let pad = ((hi - lo) * 0.08).max(0.3);
                (lo - pad, hi + pad, l)
            } else {
                (0.0, 1.0, Vec::new())
            }
        }
        XAxis::Categories(c) => (
            -0.5,
            c.len().max(1) as f64 - 0.5,
            (0..c.len()).map(|i| i as f64).collect(),
        ),
        XAxis::Linear { lo, hi } => {
            let (lo, hi) = linear_range(*lo, *hi);
            (lo, hi, round_ticks(lo, hi))
        }
    }
}

/// A data x value in drawing coordinates (log2 on a log2 axis).
fn xmap(axis: &XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Log2(_) => x.log2(),
        XAxis::Categories(_) | XAxis::Linear { .. } => x,
    }
}

fn draw_bars<DB: DrawingBackend>(chart: &mut Plot<DB>, b: &Bars, y_max: f64) -> DrawResult {
    let n = b.styles.len().max(1) as f64;
    let bw = 0.8 / n;
    let note_style = font(12)
        .color(&RGBColor(40, 40, 40))
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for (ci, row) in b.values.iter().enumerate() {
        for (si, v) in row.iter().enumerate() {
            let xa = ci as f64 - 0.4 + si as f64 * bw + bw * 0.06;
            let xb = ci as f64 - 0.4 + (si + 1) as f64 * bw - bw * 0.06;
            let color = b.styles.get(si).map_or(BLACK, |st| st.color);
            let top = v
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(|v| v.min(y_max));
            if let Some(top) = top {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(xa, 0.0), (xb, top)],
                        color.filled(),
                    )))
                    .map_err(s)?;
            }
            let note = b
                .notes
                .get(ci)
                .and_then(|r| r.get(si))
                .and_then(|n| n.clone());
            if let Some(note) = note {
                let at = ((xa + xb) / 2.0, top.unwrap_or(0.0));
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(at) + Text::new(note, (0, -3), note_style.clone()),
                    ))
                    .map_err(s)?;
            }
        }
    }
    Ok(())
}

/// One polygon per run of finite points: the upper edge left to right, then
/// the lower edge back.
fn draw_band<DB: DrawingBackend>(
    chart: &mut Plot<DB>,
    b: &Band,
    axis: &XAxis,
    y: &YScale,
) -> DrawResult {
    let mut runs: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
    for &(x, lo, hi) in &b.points {
        if x.is_finite() && lo.is_finite() && hi.is_finite() {
            if let Some(r) = runs.last_mut() {
                r.push((xmap(axis, x), y.at(lo), y.at(hi)));
            }
        } else if runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(Vec::new());
        }
    }
    for run in runs.iter().filter(|r| r.len() > 1) {
        let mut poly: Vec<(f64, f64)> = run.iter().map(|&(x, _, hi)| (x, hi)).collect();
        poly.extend(run.iter().rev().map(|&(x, lo, _)| (x, lo)));
        chart
            .draw_series(std::iter::once(Polygon::new(
                poly,
                b.color.mix(0.18).filled(),
            )))
            .map_err(s)?;
    }
    Ok(())
}

/// A reference line drawn at `at` (the axis's coordinate of its value).
fn draw_ref<DB: DrawingBackend>(
    chart: &mut Plot<DB>,
    r: &RefLine,
    at: f64,
    x0: f64,
    x1: f64,
) -> DrawResult {
    chart
        .draw_series(std::iter::once(DashedPathElement::new(
            vec![(x0, at), (x1, at)],
            8,
            5,
            stroke(r.color, 2),
        )))
        .map_err(s)?;
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x1, at))
                + Text::new(
                    r.label.clone(),
                    (-4, -4),
                    font(13)
                        .color(&r.color)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                ),
        ))
        .map_err(s)?;
    Ok(())
}

fn draw_line<DB: DrawingBackend>(
    chart: &mut Plot<DB>,
    l: &Line,
    axis: &XAxis,
    scale: &YScale,
) -> DrawResult {
    let stroke = stroke(l.style.color, 2);
    let mut segment: Vec<(f64, f64)> = Vec::new();
    let mut segments = Vec::new();
    for (x, y) in &l.points {
        match y.filter(|y| y.is_finite()) {
            Some(y) if x.is_finite() => segment.push((xmap(axis, *x), scale.at(y))),
            _ => {
                if !segment.is_empty() {
                    segments.push(std::mem::take(&mut segment));
                }
            }
        }
    }
    if !segment.is_empty() {
        segments.push(segment);
    }
    for seg in &segments {
        if seg.len() > 1 {
            if l.style.dashed {
                chart
                    .draw_series(std::iter::once(DashedPathElement::new(
                        seg.clone(),
                        7,
                        5,
                        stroke,
                    )))
                    .map_err(s)?;
            } else {
                chart
                    .draw_series(std::iter::once(PathElement::new(seg.clone(), stroke)))
                    .map_err(s)?;
            }
        }
        if l.style.markers || seg.len() == 1 {
            chart
                .draw_series(
                    seg.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, l.style.color.filled())),
                )
                .map_err(s)?;
        }
    }
    Ok(())
}

fn stroke(c: RGBColor, width: u32) -> ShapeStyle {
    ShapeStyle {
        color: c.to_rgba(),
        filled: false,
        stroke_width: width,
    }
}

/// A linear axis's range: finite, ordered and not empty.
fn linear_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo + 1.0 };
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
}

/// A round tick spacing (1, 2 or 5 times a power of ten) giving about six ticks.
fn tick_step(lo: f64, hi: f64) -> f64 {
    let raw = (hi - lo) / 6.0;
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The multiples of the tick step between `lo` and `hi`.
fn round_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let step = tick_step(lo, hi);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A tick label with as many decimals as the step needs.
fn fmt_tick(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// A linear axis whose ticks are exactly the given values (sizes, categories).
#[derive(Debug, Clone)]
struct KeyAxis {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl Ranged for KeyAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        if span <= 0.0 || !v.is_finite() {
            return limit.0;
        }
        let f = (v - self.lo) / span;
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.keys.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A backend that lays out text with the chart font (or, without one, from
/// an estimate of its width) and, for bitmaps, draws it with that font.
/// SVG text is left to the viewer: the file names the font family.
struct TextBackend<B: DrawingBackend> {
    inner: B,
    font: Option<ChartFont>,
    /// Draw text pixels here (bitmaps) instead of handing it to the backend (SVG).
    raster: bool,
}

impl<B: DrawingBackend> TextBackend<B> {
    fn measure<T: BackendTextStyle>(&self, text: &str, style: &T) -> (u32, u32) {
        match &self.font {
            Some(f) => f.measure(style.size(), is_bold(style), text),
            None => {
                // About the advance of a sans-serif face: 0.55 em per character.
                let em = style.size() / 1.24;
                (
                    (em * 0.55 * text.chars().count() as f64).ceil() as u32,
                    (em * 1.16).ceil() as u32,
                )
            }
        }
    }
}

fn is_bold<T: BackendTextStyle>(style: &T) -> bool {
    matches!(style.style(), plotters_backend::FontStyle::Bold)
}

impl<B: DrawingBackend> DrawingBackend for TextBackend<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        let font = match (&self.font, self.raster) {
            (Some(f), true) => f.clone(),
            // Bitmaps without a font are never drawn (no PNG then); SVG text is the viewer's.
            _ => return self.inner.draw_text(text, style, pos),
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let (w, h) = font.measure(style.size(), is_bold(style), text);
        let (w, h) = (w as i32, h as i32);
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0,
            HPos::Center => -w / 2,
            HPos::Right => -w,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0,
            VPos::Center => -h / 2,
            VPos::Bottom => -h,
        };
        let trans = style.transform();
        let mut pixels = Vec::new();
        font.rasterize(style.size(), is_bold(style), text, |x, y, cov| {
            if cov > 0.0 {
                pixels.push((x, y, cov));
            }
        });
        for (x, y, cov) in pixels {
            let (tx, ty) = trans.transform(x + dx, y + dy);
            self.inner.draw_pixel(
                (pos.0 + tx, pos.1 + ty),
                BackendColor {
                    alpha: color.alpha * f64::from(cov.min(1.0)),
                    rgb: color.rgb,
                },
            )?;
        }
        Ok(())
    }

    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        Ok(self.measure(text, style))
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> std::result::Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gemmlab-charts-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn svg_without_a_font_file() {
        let mut p = Panel::new(
            "k",
            XAxis::Categories(vec!["a".into(), "b".into()]),
            "x",
            "GFLOP/s",
        );
        p.bars = Some(Bars {
            styles: vec![Style::new("cuda", RED), Style::new("opencl", BLUE)],
            values: vec![vec![Some(1.0), None], vec![Some(2.0), Some(3.0)]],
            notes: vec![vec![None, Some("n/a".into())], vec![None, None]],
        });
        p.refs.push(RefLine {
            label: "ref".into(),
            y: 2.5,
            color: BLACK,
        });
        let fig = Figure {
            title: "t".into(),
            legend: vec![Style::new("cuda", RED), Style::new("ref", BLACK).dashed()],
            panels: vec![p],
            cols: 1,
            panel_w: 400,
            panel_h: 300,
        };
        let d = temp("nofont");
        let w = write(&fig, &d, "bars", None, true).unwrap();
        let text = std::fs::read_to_string(&w.svg).unwrap();
        assert!(text.starts_with("<svg"));
        assert!(text.contains("n/a"), "the note of a bar without a value");
        assert!(w.png.is_none());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn linear_axis_ticks_and_bands() {
        let t = round_ticks(0.0, 1.0);
        assert_eq!(t.len(), 6);
        assert!((t[3] - 0.6).abs() < 1e-12, "{t:?}");
        assert_eq!(round_ticks(0.0, 48.0), vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(fmt_tick(0.6000000000000001, 0.2), "0.6");
        assert_eq!(fmt_tick(40.0, 10.0), "40");
        assert_eq!(
            linear_range(3.0, 3.0),
            (3.0, 4.0),
            "an empty range is widened"
        );
        let mut p = Panel::new("", XAxis::Linear { lo: 0.0, hi: 50.0 }, "tried", "fraction");
        p.bands.push(Band {
            color: RED,
            points: vec![
                (1.0, 0.2, 0.4),
                (2.0, f64::NAN, 0.5),
                (3.0, 0.3, 0.6),
                (4.0, 0.5, 0.9),
            ],
        });
        p.lines.push(Line {
            style: Style::new("median", RED).plain(),
            points: (1..=50)
                .map(|i| (i as f64, Some(i as f64 / 50.0)))
                .collect(),
        });
        assert_eq!(p.data_max(), 1.0);
        let fig = Figure {
            title: "t".into(),
            legend: vec![Style::new("median", RED).plain()],
            panels: vec![p],
            cols: 1,
            panel_w: 400,
            panel_h: 300,
        };
        let d = temp("linear");
        let w = write(&fig, &d, "linear", None, false).unwrap();
        let text = std::fs::read_to_string(&w.svg).unwrap();
        assert!(text.contains("<polygon"), "the band is drawn");
        assert!(!text.contains("<circle"), "a plain line has no dots");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn log2_lines_with_gaps() {
        let mut p = Panel::new("k", XAxis::Log2(vec![1024.0, 4096.0]), "N", "GFLOP/s");
        p.lines.push(Line {
            style: Style::new("cuda", RED),
            points: vec![
                (1024.0, Some(1.0)),
                (2048.0, None),
                (4096.0, Some(f64::NAN)),
            ],
        });
        let fig = Figure {
            title: "t".into(),
            legend: Vec::new(),
            panels: vec![p, Panel::new("empty", XAxis::Log2(Vec::new()), "", "")],
            cols: 2,
            panel_w: 300,
            panel_h: 200,
        };
        let d = temp("lines");
        assert!(write(&fig, &d, "lines", None, true).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }
}
