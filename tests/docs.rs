//! The README and the book under docs/ as a newcomer meets them: the README stays a
//! short guide, every relative link of both resolves (to a file, and to a heading
//! where it names one), and the README's own-kernel example (three files copied
//! out of it) is read and runs checked on the OpenCL device.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn pages() -> Vec<PathBuf> {
    common::doc_pages()
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let mut fenced = false;
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && l.starts_with('#') {
            out.push(anchor(l));
        }
    }
    out
}

#[test]
fn the_readme_is_a_short_guide() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines: the guide is at most 300; the rest goes to docs/"
    );
    for must in [
        "## Quick start",
        "scripts/quickstart.sh",
        "cargo test --features cuda",
        "docs/src/SUMMARY.md",
    ] {
        assert!(text.contains(must), "README.md lacks {must}");
    }
}

#[test]
fn every_relative_link_resolves() {
    let link = |s: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find("](") {
            let tail = &rest[i + 2..];
            let Some(j) = tail.find(')') else { break };
            out.push(tail[..j].to_string());
            rest = &tail[j..];
        }
        out
    };
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut fenced = false;
        for l in text.lines() {
            if l.starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            for target in link(l) {
                if target.starts_with("http")
                    || target.starts_with("mailto:")
                    || target.contains(' ')
                {
                    continue;
                }
                let (file, frag) = target.split_once('#').unwrap_or((&target, ""));
                let path = match file.is_empty() {
                    true => page.clone(),
                    false => page.parent().unwrap().join(file),
                };
                let ok = path.exists()
                    && (frag.is_empty()
                        || path.extension().is_none_or(|x| x != "md")
                        || anchors(&path).iter().any(|a| a == frag));
                if !ok {
                    broken.push(format!("{}: {target}", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readmes_own_kernel_runs_checked() {
    let dir = std::env::temp_dir().join(format!("gemmlab-readme-vadd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    common::write_readme_vadd(&dir);
    let spec = dir.join("vadd.toml");
    let spec = spec.to_str().unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(common::gemmlab_bin())
            .args(args)
            .output()
            .unwrap();
        let t = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{args:?}: {t}");
        t
    };
    let t = run(&["spec", "--check", spec]);
    assert!(t.contains("parameters: 1 (5 combinations)"), "{t}");
    let dev = std::env::var("GEMMLAB_TEST_DEVICE").unwrap_or_else(|_| "opencl".into());
    let out = dir.join("out");
    let t = run(&[
        "compare",
        "--spec",
        spec,
        "--device",
        &dev,
        "--sizes",
        "n=100000",
        "--reps",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(t.contains("ok (poison only)"), "{t}");
}
