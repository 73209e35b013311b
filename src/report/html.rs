//! `report.html`: the report as one self-contained page for a browser. The
//! Markdown is rendered by pulldown-cmark; around it: a navigation by section,
//! every chart inline (its SVG, or a PNG as a data URI where it has no SVG),
//! headings with the anchors the Markdown's links use, and every table sortable
//! (click a header) and filterable (the box above it). No file beside it is
//! needed and nothing is fetched.

use std::fmt::Write as _;
use std::path::Path;

use pulldown_cmark::{html, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::md;

const STYLE: &str = "
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#222}
nav{position:sticky;top:0;height:100vh;overflow:auto;min-width:16em;max-width:20em;padding:1em;background:#f5f5f7;border-right:1px solid #ddd;font-size:13px}
nav a{display:block;color:#224;text-decoration:none;padding:2px 0}
main{padding:1em 2em;max-width:75em;overflow-x:auto}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 6px}
th{background:#eef;cursor:pointer;position:sticky;top:0}
th[data-dir=asc]::after{content:' \\25b2'}th[data-dir=desc]::after{content:' \\25bc'}
tr:nth-child(even){background:#fafafa}
input.filter{margin-top:.5em;font-size:12px;width:18em}
figure{margin:1em 0}figure svg,figure img{max-width:100%;height:auto}
code{background:#f3f3f3;padding:0 3px}pre{background:#f3f3f3;padding:.5em;overflow-x:auto}
";

const SCRIPT: &str = "
function cellValue(s){const t=s.trim().replace(/[,%x\\u00b1]/g,' ').trim().split(/\\s+/)[0];const n=parseFloat(t);return isNaN(n)?null:n;}
function sortTable(t,i,th){const b=t.tBodies[0];if(!b)return;const asc=th.dataset.dir!=='asc';
 t.querySelectorAll('th').forEach(h=>delete h.dataset.dir);th.dataset.dir=asc?'asc':'desc';
 const rows=Array.from(b.rows);rows.sort((a,c)=>{const x=a.cells[i]?a.cells[i].textContent:'',y=c.cells[i]?c.cells[i].textContent:'';
  const nx=cellValue(x),ny=cellValue(y);let r;
  if(nx!==null&&ny!==null){r=nx-ny;}else if(nx!==null){r=-1;}else if(ny!==null){r=1;}else{r=x.localeCompare(y);}
  return asc?r:-r;});
 rows.forEach(r=>b.appendChild(r));}
document.querySelectorAll('main table').forEach(t=>{
 const f=document.createElement('input');f.className='filter';f.placeholder='filter rows';t.before(f);
 f.addEventListener('input',()=>{const q=f.value.toLowerCase();if(!t.tBodies[0])return;
  Array.from(t.tBodies[0].rows).forEach(r=>{r.style.display=r.textContent.toLowerCase().includes(q)?'':'none';});});
 t.querySelectorAll('th').forEach((th,i)=>th.addEventListener('click',()=>sortTable(t,i,th)));});
// #selftest (the browser test): sort every table by its last column, twice, and say
// in <body data-selftest> whether each came out in order.
if(location.hash==='#selftest'){let ok=0,bad=0;document.querySelectorAll('main table').forEach(t=>{
 const ths=t.querySelectorAll('th');if(!ths.length||!t.tBodies[0])return;const i=ths.length-1,th=ths[i];
 sortTable(t,i,th);const v=Array.from(t.tBodies[0].rows).map(r=>r.cells[i]?cellValue(r.cells[i].textContent):null).filter(x=>x!==null);
 let sorted=true;for(let k=1;k<v.length;k++){if(v[k]<v[k-1])sorted=false;}sorted?ok++:bad++;});
 document.body.dataset.selftest='tables sorted '+ok+', out of order '+bad+', charts '+document.querySelectorAll('main figure svg, main figure img').length;}
";

/// The page for `markdown`, whose charts are under `dir` (the report's folder).
pub fn page(markdown: &str, dir: &Path) -> String {
    let mut nav = String::new();
    let mut events: Vec<Event> = Vec::new();
    let mut heading: Option<(HeadingLevel, String)> = None;
    for e in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match e {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(level)) => {
                let text = heading.take().map(|h| h.1).unwrap_or_default();
                let id = md::anchor(&text);
                if level == HeadingLevel::H2 {
                    let _ = write!(nav, "<a href=\"#{id}\">{}</a>", escape(&text));
                }
                events.push(Event::Html(
                    format!("<{level} id=\"{id}\">{}</{level}>\n", escape(&text)).into(),
                ));
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            _ if heading.is_some() => {}
            Event::Start(Tag::Image {
                dest_url, title, ..
            }) => {
                events.push(Event::Html(figure(&dest_url, &title, dir).into()));
                events.push(Event::Html("<!--".into()));
            }
            Event::End(TagEnd::Image) => events.push(Event::Html("-->".into())),
            e => events.push(e),
        }
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    let title = markdown
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("gemmlab report");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head>\n<body><nav><strong>Sections</strong>{nav}</nav>\n\
         <main>\n{body}</main>\n<script>{SCRIPT}</script></body></html>\n",
        escape(title)
    )
}

/// A chart inline: its SVG (the one beside a PNG where there is one), else the
/// PNG as a data URI; a missing file says so in the page.
fn figure(src: &str, title: &str, dir: &Path) -> String {
    let svg = Path::new(src).with_extension("svg");
    if let Ok(text) = std::fs::read_to_string(dir.join(&svg)) {
        let start = text.find("<svg").unwrap_or(0);
        return format!(
            "<figure title=\"{}\">{}</figure>",
            escape(title),
            &text[start..]
        );
    }
    match std::fs::read(dir.join(src)) {
        Ok(bytes) => format!(
            "<figure><img alt=\"{}\" src=\"data:image/png;base64,{}\"></figure>",
            escape(title),
            base64(&bytes)
        ),
        Err(_) => format!("<figure>(chart {} not found)</figure>", escape(src)),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            match i <= c.len() {
                true => out.push(A[(n >> shift) as usize & 63] as char),
                false => out.push('='),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn headings_get_the_markdowns_anchors_and_charts_go_inline() {
        let dir = std::env::temp_dir().join(format!("gemmlab-html-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("charts")).unwrap();
        std::fs::write(
            dir.join("charts/a.svg"),
            "<?xml?><svg id=\"chart-a\"></svg>",
        )
        .unwrap();
        let md = "# gemmlab report\n\n## Speed: kernels (compare)\n\nSee [the table](#speed-kernels-compare).\n\n![a chart](charts/a.png)\n\n| k | GFLOP/s |\n|---|---:|\n| a | 2 |\n| b | 10 |\n";
        let page = page(md, &dir);
        assert!(page.contains("<h2 id=\"speed-kernels-compare\">"), "{page}");
        assert!(page.contains("<a href=\"#speed-kernels-compare\">"));
        assert!(page.contains("<svg id=\"chart-a\">") && !page.contains("src=\"charts/"));
        assert!(page.contains("<table>") && page.contains("<tbody>"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
