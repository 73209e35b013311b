//! The TrueType font that PNG charts draw their text with, read at run time
//! from the system (no font file ships with gemmlab, and nothing needs
//! fontconfig or font-kit at build time). The text is laid out and
//! rasterized here with ab_glyph: plotters 0.3.7's own ab_glyph text drawing
//! ignores each glyph's left bearing, which scatters the letters. SVG charts
//! need no font file: the viewer draws their text.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ab_glyph::{point, Font, FontArc, PxScale, ScaleFont};

/// The family name the charts ask for (SVG viewers pick their own sans-serif face).
pub const FAMILY: &str = "sans-serif";

/// What to tell the user when no font is found.
pub const INSTALL_HINT: &str =
    "install a TrueType font (Debian/Ubuntu: apt-get install fonts-dejavu-core) or pass --font FILE.ttf";

/// Well-known regular sans-serif fonts, tried in order before any other *.ttf.
const KNOWN: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
];

/// Directories searched for any *.ttf when none of the known files exists.
const DIRS: &[&str] = &[
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/usr/X11R6/lib/X11/fonts",
];

/// A TrueType face (and its bold sibling, if there is one) that lays out
/// and rasterizes chart text.
#[derive(Clone)]
pub struct ChartFont {
    pub path: PathBuf,
    regular: FontArc,
    bold: Option<FontArc>,
}

impl std::fmt::Debug for ChartFont {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChartFont")
            .field("path", &self.path)
            .finish()
    }
}

impl ChartFont {
    fn face(&self, bold: bool) -> &FontArc {
        match (&self.bold, bold) {
            (Some(b), true) => b,
            _ => &self.regular,
        }
    }

    /// plotters' font size is 1.24 x the em size (its SVG backend writes
    /// font-size = size / 1.24); ab_glyph scales by ascent - descent.
    fn scale(face: &FontArc, size: f64) -> PxScale {
        let em = (size / 1.24) as f32;
        let upem = face.units_per_em().unwrap_or(1000.0);
        PxScale::from(em * face.height_unscaled() / upem)
    }

    /// Width and height in pixels of one line of text.
    pub fn measure(&self, size: f64, bold: bool, text: &str) -> (u32, u32) {
        let face = self.face(bold);
        let sf = face.as_scaled(Self::scale(face, size));
        let (_, x) = pen(&sf, text);
        (
            x.ceil().max(0.0) as u32,
            (sf.ascent() - sf.descent()).ceil().max(1.0) as u32,
        )
    }

    /// Calls `put(x, y, coverage)` for every pixel of the text, relative to
    /// the top-left corner of its box (as measured by [`Self::measure`]).
    pub fn rasterize(&self, size: f64, bold: bool, text: &str, mut put: impl FnMut(i32, i32, f32)) {
        let face = self.face(bold);
        let scale = Self::scale(face, size);
        let sf = face.as_scaled(scale);
        for (id, x) in pen(&sf, text).0 {
            let glyph = id.with_scale_and_position(scale, point(x, sf.ascent()));
            if let Some(outline) = face.outline_glyph(glyph) {
                let b = outline.px_bounds();
                outline.draw(|gx, gy, cov| {
                    put(b.min.x as i32 + gx as i32, b.min.y as i32 + gy as i32, cov)
                });
            }
        }
    }
}

/// Each glyph of `text` with the pen's x where it is drawn (kerning applied),
/// and the pen's x after the last: the one layout both measuring and drawing use.
fn pen<F: Font, S: ScaleFont<F>>(sf: &S, text: &str) -> (Vec<(ab_glyph::GlyphId, f32)>, f32) {
    let mut x = 0.0f32;
    let mut prev = None;
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        let id = sf.glyph_id(c);
        if let Some(p) = prev {
            x += sf.kern(p, id);
        }
        out.push((id, x));
        x += sf.h_advance(id);
        prev = Some(id);
    }
    (out, x)
}

/// The font found in this process, if any.
static LOADED: Mutex<Option<ChartFont>> = Mutex::new(None);

/// The font for chart text. `explicit` (--font) is used alone when given;
/// otherwise the environment variable GEMMLAB_FONT, the well-known paths and
/// then any *.ttf under the usual font directories. Returns the font, or why
/// there is none.
pub fn ensure(explicit: Option<&Path>) -> Result<ChartFont, String> {
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = loaded.as_ref() {
        if explicit.is_none_or(|e| e == f.path) {
            return Ok(f.clone());
        }
    }
    let candidates: Vec<PathBuf> = match explicit {
        Some(p) => vec![p.to_path_buf()],
        None => candidates(),
    };
    let mut tried = Vec::new();
    for path in candidates {
        match load(&path) {
            Ok(f) => {
                *loaded = Some(f.clone());
                return Ok(f);
            }
            Err(why) => tried.push(format!("{}: {why}", path.display())),
        }
    }
    Err(match explicit {
        Some(_) => format!("cannot use the font: {}", tried.join("; ")),
        None if tried.is_empty() => format!("no TrueType font found under {}", DIRS.join(", ")),
        None => format!("no usable TrueType font ({})", tried.join("; ")),
    })
}

fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("GEMMLAB_FONT") {
        out.push(PathBuf::from(p));
    }
    out.extend(KNOWN.iter().map(PathBuf::from).filter(|p| p.is_file()));
    if out.is_empty() {
        let mut found = Vec::new();
        for d in DIRS {
            walk(Path::new(d), 0, &mut found);
        }
        // Prefer a regular sans face over bold, italic, mono or symbol fonts.
        found.sort_by_key(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            let odd = [
                "bold", "italic", "oblique", "mono", "symbol", "emoji", "math",
            ]
            .iter()
            .filter(|w| name.contains(*w))
            .count();
            (odd, !name.contains("sans"), name)
        });
        out.extend(found.into_iter().take(8));
    }
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, depth + 1, out);
        } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ttf")) {
            out.push(p);
        }
    }
}

fn load(path: &Path) -> Result<ChartFont, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let regular = FontArc::try_from_vec(bytes)
        .map_err(|_| "not a TrueType/OpenType font ab_glyph can read".to_string())?;
    let bold = bold_sibling(path)
        .and_then(|b| fs::read(b).ok())
        .and_then(|b| FontArc::try_from_vec(b).ok());
    Ok(ChartFont {
        path: path.to_path_buf(),
        regular,
        bold,
    })
}

fn bold_sibling(path: &Path) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_str()?;
    let base = stem.strip_suffix("-Regular").unwrap_or(stem);
    let cand = path.with_file_name(format!("{base}-Bold.ttf"));
    cand.is_file().then_some(cand)
}
