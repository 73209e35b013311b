//! Every shell example of the README and the book that runs without a GPU, run as a
//! reader would type it: each ```sh block is one bash script (`set -e`), in a scratch
//! folder holding a copy of `results/`, the repository's specs and suites, and the
//! README's own-kernel files (vadd.*), with `gemmlab` this build's binary.
//!
//! A block's fence says what it needs: ```sh runs here; ```sh,offline needs NVIDIA's
//! NVRTC wheels and clang (`scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas
//! --with-cuda-headers`; skipped visibly without them, a failure under
//! GEMMLAB_REQUIRE_NVRTC=1 as in CI); ```sh,gpu is written for an NVIDIA GPU (its
//! sizes or its toolchain) and is not run; `long` marks a block that takes many
//! minutes on a CPU (the same command as a shorter block before it), run only
//! with GEMMLAB_BOOK_LONG=1. Lines that install or build (`cargo`, `apt-get`,
//! `scripts/...`) are CI's own steps and are passed over here.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gemmlab::backend::nvrtc::{cache, parse_version};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One fenced shell block: where it is, its tags, its lines (continuations joined).
struct Block {
    place: String,
    tags: Vec<String>,
    lines: Vec<String>,
}

fn pages() -> Vec<PathBuf> {
    common::doc_pages()
}

fn blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).expect("a page");
    let name = page
        .strip_prefix(ROOT)
        .unwrap_or(page)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut pending = String::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(info) = l.strip_prefix("```") {
            match open.take() {
                Some(b) => out.push(b),
                None => {
                    let mut words = info.split(',').map(|w| w.trim().to_string());
                    if words.next().as_deref() == Some("sh") {
                        open = Some(Block {
                            place: format!("{name}:{}", i + 1),
                            tags: words.collect(),
                            lines: Vec::new(),
                        });
                    } else if !info.trim().is_empty() {
                        // Another language's block: skip to its end.
                        open = Some(Block {
                            place: String::new(),
                            tags: vec!["not-shell".into()],
                            lines: Vec::new(),
                        });
                    }
                }
            }
            continue;
        }
        if let Some(b) = open.as_mut() {
            match l.strip_suffix('\\') {
                Some(head) => pending.push_str(head),
                None => {
                    pending.push_str(l);
                    b.lines.push(std::mem::take(&mut pending));
                }
            }
        }
    }
    out.retain(|b| !b.tags.iter().any(|t| t == "not-shell"));
    out
}

/// A line that installs or builds: CI runs these as its own steps.
fn is_setup(line: &str) -> bool {
    let words: Vec<&str> = line
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect();
    matches!(
        words.first().copied(),
        Some("cargo" | "apt-get" | "sudo") | Some("scripts/quickstart.sh")
    ) || words.first().is_some_and(|w| w.starts_with("scripts/"))
}

fn offline_tools() -> Result<(), String> {
    let v = parse_version("11.8").expect("a version");
    if cache::find(&v).is_none() {
        return Err(format!(
            "NVRTC 11.8 is not in {} (scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas --with-cuda-headers)",
            cache::describe_dir()
        ));
    }
    if Command::new("clang-19").arg("--version").output().is_err() {
        return Err("clang-19 is not installed".into());
    }
    Ok(())
}

/// The scratch folder a block runs in: results/ copied (examples write into it),
/// specs and suites linked, the README's vadd files written, `gemmlab` on PATH.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gemmlab-book-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let cp = Command::new("cp")
        .args(["-r", &format!("{ROOT}/results"), dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(cp.success(), "copying results/");
    for linked in ["specs", "suites", "kernels-cl", "kernels-cu"] {
        std::os::unix::fs::symlink(Path::new(ROOT).join(linked), dir.join(linked)).unwrap();
    }
    std::os::unix::fs::symlink(common::gemmlab_bin(), dir.join("bin/gemmlab")).unwrap();
    common::write_readme_vadd(&dir);
    dir
}

#[test]
fn every_gpu_free_shell_example_runs() {
    let offline = offline_tools();
    let required = std::env::var("GEMMLAB_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    let (mut ran, mut failed, mut skipped) = (0, Vec::new(), Vec::new());
    for (n, b) in pages().iter().flat_map(|p| blocks(p)).enumerate() {
        if b.tags.iter().any(|t| t == "gpu") {
            skipped.push(format!("{} (written for an NVIDIA GPU)", b.place));
            continue;
        }
        let long_ok = std::env::var("GEMMLAB_BOOK_LONG").is_ok_and(|v| v == "1");
        if b.tags.iter().any(|t| t == "long") && !long_ok {
            skipped.push(format!("{} (long: GEMMLAB_BOOK_LONG=1 runs it)", b.place));
            continue;
        }
        if b.tags.iter().any(|t| t == "offline") {
            if let Err(why) = &offline {
                assert!(!required, "{}: GEMMLAB_REQUIRE_NVRTC=1 but {why}", b.place);
                common::say(&format!("SKIPPED {}: {why}", b.place));
                continue;
            }
        }
        let unknown: Vec<_> = b
            .tags
            .iter()
            .filter(|t| !["gpu", "offline", "long"].contains(&t.as_str()))
            .collect();
        assert!(unknown.is_empty(), "{}: unknown tags {unknown:?}", b.place);
        let script: Vec<String> = b
            .lines
            .iter()
            .filter(|l| !l.trim().is_empty() && !is_setup(l))
            .map(|l| l.replace("./target/release/gemmlab", "gemmlab"))
            .collect();
        if script.is_empty() {
            continue;
        }
        let dir = scratch(&n.to_string());
        let path = format!(
            "{}:{}",
            dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let started = Instant::now();
        let o = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script.join("\n")])
            .current_dir(&dir)
            .env("PATH", path)
            .output()
            .unwrap();
        ran += 1;
        common::say(&format!(
            "{}: {} command(s), {:.1} s, exit {}",
            b.place,
            script.len(),
            started.elapsed().as_secs_f64(),
            o.status.code().unwrap_or(-1)
        ));
        if !o.status.success() {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let tail: String = text
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            failed.push(format!("{}:\n{}\n{tail}", b.place, script.join("\n")));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    common::say(&format!(
        "book examples: {ran} block(s) run, {} not run:\n  {}",
        skipped.len(),
        skipped.join("\n  ")
    ));
    assert!(ran >= 4, "only {ran} runnable example blocks were found");
    assert!(
        failed.is_empty(),
        "examples that failed:\n{}",
        failed.join("\n\n")
    );
}

#[test]
fn fences_are_read_with_their_tags() {
    let dir = std::env::temp_dir().join(format!("gemmlab-book-fences-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("p.md");
    std::fs::write(
        &page,
        "text\n```sh\ngemmlab a \\\n  --b\ncargo build\n```\n```toml\nx = 1\n```\n```sh,gpu\ngemmlab c\n```\n",
    )
    .unwrap();
    let b = blocks(&page);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].lines, vec!["gemmlab a   --b", "cargo build"]);
    assert!(b[0].tags.is_empty());
    assert_eq!(b[1].tags, vec!["gpu"]);
    assert!(is_setup("cargo build"));
    assert!(is_setup("GEMMLAB_REQUIRE_CUDA=1 cargo test"));
    assert!(is_setup("scripts/nvrtc/fetch.sh 11.8"));
    assert!(!is_setup("gemmlab compare --sizes 4096"));
    assert!(!is_setup("L=a,b"));
    let _ = std::fs::remove_dir_all(&dir);
}
