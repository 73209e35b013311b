//! The committed reports against their committed data: each regenerates to
//! the findings committed beside it (kinds and numbers, not words), and no
//! finding of the reports as they were before the analysis model
//! (`tests/fixtures/report/findings-before/`) is lost. Needs no GPU.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use gemmlab::report::{generate, Options};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every committed report: the directory holding `report.md`, under results/.
fn committed_reports() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut subs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        subs.sort();
        for p in subs {
            if p.is_dir() {
                if p.join("report.md").is_file() {
                    out.push(p.clone());
                }
                walk(&p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(ROOT).join("results"), &mut out);
    out
}

/// The `--from` directories of the command a report says regenerates it.
fn sources(report: &Path) -> Vec<PathBuf> {
    let md = fs::read_to_string(report.join("report.md")).unwrap();
    let cmd = md
        .lines()
        .skip_while(|l| !l.starts_with("```sh"))
        .nth(1)
        .unwrap_or_else(|| panic!("{}: no command", report.display()));
    let words: Vec<&str> = cmd.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[0] == "--from")
        .map(|w| Path::new(ROOT).join(w[1]))
        .collect()
}

/// Regenerates a report into a temporary directory of the calling test's own
/// (`who`: the tests run in parallel and must not share one); returns its
/// findings.json and its report.md.
fn regenerate(report: &Path, who: &str) -> (Vec<Value>, String) {
    regenerate_with(report, who, false)
}

fn regenerate_with(report: &Path, who: &str, png: bool) -> (Vec<Value>, String) {
    let rel = report.strip_prefix(ROOT).unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("committed-{who}"))
        .join(rel.to_string_lossy().replace('/', "_"));
    let _ = fs::remove_dir_all(&out);
    generate(&Options {
        from: sources(report),
        out: out.clone(),
        png,
        font: None,
        size: None,
    })
    .unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    (read_findings(&out.join("findings.json")), md)
}

fn read_findings(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match serde_json::from_str(&text).unwrap() {
        Value::Array(a) => a,
        v => panic!("{}: not a list: {v}", path.display()),
    }
}

/// A finding without its words: what it compared and its numbers.
fn data_of(f: &Value) -> Value {
    let mut f = f.clone();
    if let Value::Object(m) = &mut f {
        for words in ["text", "short", "topic_name"] {
            m.remove(words);
        }
    }
    f
}

#[test]
fn every_committed_report_regenerates_to_its_committed_findings() {
    let reports = committed_reports();
    assert!(reports.len() >= 6, "{reports:?}");
    for r in reports {
        let committed = read_findings(&r.join("findings.json"));
        let (now, md) = regenerate(&r, "same");
        says_its_findings(&r, &now, &md);
        assert_eq!(
            committed.len(),
            now.len(),
            "{}: number of findings",
            r.display()
        );
        for (c, n) in committed.iter().zip(&now) {
            assert_eq!(data_of(c), data_of(n), "{}", r.display());
        }
        // Every finding is typed: a kind of its section, never words alone.
        for f in &now {
            let kind = f["kind"].as_str().unwrap_or_default();
            assert!(!kind.is_empty() && kind != "legacy", "{}: {f}", r.display());
        }
    }
}

/// The Markdown says what findings.json holds, from the one renderer: the
/// summary lists the findings marked `in_summary`, as their `summary_item`, by their short
/// words and link; "All findings" lists every finding's full words under its
/// section's heading, linked to its chart or its section.
fn says_its_findings(report: &Path, findings: &[Value], md: &str) {
    let r = report.display();
    let (summary_at, all_at) = (md.find("## Summary\n"), md.find("\n## All findings\n"));
    let (Some(summary_at), Some(all_at)) = (summary_at, all_at) else {
        panic!("{r}: no summary or no full list");
    };
    let all = &md[all_at..];
    let all = &all[..all[1..].find("\n## ").map_or(all.len(), |i| i + 1)];
    let items: Vec<&str> = (md[summary_at..all_at].lines())
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let chosen: Vec<&Value> = findings
        .iter()
        .filter(|f| f["in_summary"] == true)
        .collect();
    assert_eq!(items.len(), chosen.len(), "{r}: summary items");
    let link = |f: &Value| {
        let table = format!("[table](#{})", f["anchor"].as_str().unwrap_or_default());
        match f["chart_svg"].as_str() {
            Some(svg) => format!("[chart]({}), {table}", gemmlab::report::md::link(svg)),
            None => table,
        }
    };
    // The summary orders them by its rule (`summary_item`); findings.json keeps the sections'.
    for (i, item) in items.iter().enumerate() {
        let f = chosen.iter().find(|f| f["summary_item"] == i + 1);
        let f = f.unwrap_or_else(|| panic!("{r}: no finding is summary item {}", i + 1));
        let want = format!("{}. {} {}", i + 1, f["short"].as_str().unwrap(), link(f));
        assert_eq!(*item, want, "{r}: summary item {}", i + 1);
    }
    for f in findings {
        let heading = format!("**[{}](#", f["section"].as_str().unwrap());
        let under = all
            .find(&heading)
            .unwrap_or_else(|| panic!("{r}: no {heading}"));
        let line = format!("- {} {}\n", f["text"].as_str().unwrap(), link(f));
        let block = &all[under + heading.len()..];
        let block = &block[..block.find("\n**[").unwrap_or(block.len())];
        assert!(
            block.contains(&line),
            "{r}: not listed under its section: {line}"
        );
    }
}

/// (section, topic, in the summary's reach, weight to 1e-6) -> how many.
type Census = BTreeMap<(String, String, bool, i64), usize>;

/// The section a finding of the reports before the model is under now: the
/// intended differences. The throttling finding had no section (its heading
/// was missing from "All findings").
fn section_now(section: &str, topic: &str) -> String {
    match (section, topic) {
        ("", "clocks") => "Clocks and throttling".into(),
        _ => section.into(),
    }
}

/// Sections that gained findings since, by report: the intended additions. Users'
/// searches (spec kernels) are shown in the tuning section since 2026-11-30.
fn added_since(report: &str, section: &str) -> bool {
    matches!(
        (report, section),
        ("results/h200/report-specs", "Tuning (tune)")
    )
}

fn census<'a>(findings: impl Iterator<Item = &'a Value>) -> Census {
    let mut c = Census::new();
    for f in findings {
        let topic = f["topic"].as_str().unwrap_or_default();
        let key = (
            section_now(f["section"].as_str().unwrap_or_default(), topic),
            topic.to_string(),
            f["headline"].as_bool().unwrap_or(false),
            (f["weight"].as_f64().unwrap_or(f64::NAN) * 1e6).round() as i64,
        );
        *c.entry(key).or_default() += 1;
    }
    c
}

#[test]
fn no_finding_of_the_reports_before_the_analysis_model_is_lost() {
    let dir = Path::new(ROOT).join("tests/fixtures/report/findings-before");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(files.len() >= 6);
    for f in files {
        let before: Value = serde_json::from_str(&fs::read_to_string(&f).unwrap()).unwrap();
        let report = Path::new(ROOT).join(before["report"].as_str().unwrap());
        let Value::Array(old) = &before["findings"] else {
            panic!("{}", f.display())
        };
        let (now, _) = regenerate(&report, "lost");
        let name = before["report"].as_str().unwrap();
        let kept = now.iter().filter(|f| {
            let section = f["section"].as_str().unwrap_or_default();
            !added_since(name.trim_end_matches('/'), section)
        });
        let (old, now) = (census(old.iter()), census(kept));
        let lost: Vec<_> = old
            .iter()
            .filter(|(k, n)| now.get(*k).copied().unwrap_or(0) < **n)
            .collect();
        assert!(lost.is_empty(), "{}: lost {lost:#?}", report.display());
        assert_eq!(old, now, "{}: findings added or changed", report.display());
    }
}

/// A committed report is what its committed data gives now, word for word (but
/// for the line naming the commit that generated it): a change to the analysis
/// or the rendering that moves a report fails here until the report is
/// regenerated with the command it names.
#[test]
fn every_committed_report_is_what_its_data_gives_now() {
    let font = gemmlab::plot::fonts::ensure(None).is_ok();
    let generated = |md: &str| -> String {
        md.lines()
            .map(|l| match l.starts_with("Generated by gemmlab") {
                true => l.split_once(" from ").map_or("", |(_, rest)| rest),
                false => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut stale = Vec::new();
    for r in committed_reports() {
        let png = r.join("charts").read_dir().is_ok_and(|d| {
            d.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "png"))
        });
        if png && !font {
            eprintln!("{}: has PNG charts and this machine has no font: not compared (install fonts-dejavu-core)", r.display());
            continue;
        }
        let (_, now) = regenerate_with(&r, "words", png);
        let rel = r.strip_prefix(ROOT).unwrap().to_string_lossy().to_string();
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("committed-words")
            .join(rel.replace('/', "_"));
        let now = now
            .replace(&tmp.to_string_lossy().to_string(), &rel)
            .replace(&format!("{ROOT}/results/"), "results/");
        let committed = fs::read_to_string(r.join("report.md")).unwrap();
        if generated(&now) != generated(&committed) {
            stale.push(rel);
        }
    }
    assert!(
        stale.is_empty(),
        "these committed reports differ from what their data gives now; regenerate each with the command its report.md names: {stale:?}"
    );
}
