//! `gemmlab nvrtc`: the NVRTC libraries gemmlab can compile with, their versions
//! and the architectures each supports: the one on the loader path and every
//! wheel in the cache (`scripts/nvrtc/fetch.sh` fills it).

use std::sync::Arc;

use gemmlab::backend::nvrtc::{cache, Nvrtc, Origin};
use gemmlab::Result;

struct Row {
    /// What `--nvrtc` takes to pick it.
    select: String,
    nvrtc: std::result::Result<Arc<Nvrtc>, String>,
    ptxas: Option<std::path::PathBuf>,
}

pub fn run(json: bool) -> Result<()> {
    let mut rows: Vec<Row> = Vec::new();
    let loader = Nvrtc::on_loader_path();
    if let Some(n) = &loader {
        let name = match n.origin() {
            Origin::LoaderPath(name) => name.clone(),
            _ => n.path().display().to_string(),
        };
        rows.push(Row {
            select: format!("(default, loader path: {name})"),
            nvrtc: Ok(n.clone()),
            ptxas: None,
        });
    }
    for c in cache::cached() {
        rows.push(Row {
            select: c.version.clone(),
            nvrtc: c.open().map_err(|e| e.to_string()),
            ptxas: c.ptxas.clone(),
        });
    }
    let default = Nvrtc::default_library();
    if json {
        return print_json(&rows, &default);
    }
    print_text(&rows, &default);
    Ok(())
}

/// `nvrtc --json`: every library with its version, path and architectures.
fn print_json(rows: &[Row], default: &std::result::Result<Arc<Nvrtc>, String>) -> Result<()> {
    {
        let list: Vec<_> = rows
            .iter()
            .map(|r| match &r.nvrtc {
                Ok(n) => serde_json::json!({
                    "select": r.select,
                    "version": n.label(),
                    "path": n.path(),
                    "supported_archs": n.supported_archs().map(|a| a.iter().map(|x| format!("sm_{x}")).collect::<Vec<_>>()),
                    "ptxas": r.ptxas,
                    "default": default.as_ref().is_ok_and(|d| Arc::ptr_eq(d, n)),
                }),
                Err(e) => serde_json::json!({"select": r.select, "error": e}),
            })
            .collect();
        let doc = serde_json::json!({
            "cache": cache::dir(),
            "nvrtc": list,
            "default_error": default.as_ref().err(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_else(|e| e.to_string())
        );
        Ok(())
    }
}

/// `nvrtc`: every library, how to select it, and which is the default.
fn print_text(rows: &[Row], default: &std::result::Result<Arc<Nvrtc>, String>) {
    println!("NVRTC cache: {}", cache::describe_dir());
    if rows.is_empty() {
        println!("  no NVRTC found: none on the loader path and none cached");
    }
    for r in rows {
        match &r.nvrtc {
            Ok(n) => {
                let is_default = default.as_ref().is_ok_and(|d| Arc::ptr_eq(d, n));
                let (select, wheel) = if r.select.starts_with('(') {
                    (n.path().display().to_string(), String::new())
                } else {
                    // "11.8.89" is picked by --nvrtc 11.8 (the newest cached 11.8.x).
                    let short: Vec<&str> = r.select.split('.').take(2).collect();
                    (short.join("."), format!(" (wheel {})", r.select))
                };
                println!(
                    "  --nvrtc {select:<6} {}{wheel}{}",
                    n.label(),
                    if is_default { "  [default]" } else { "" }
                );
                if r.select.starts_with('(') {
                    println!("      {}", r.select.trim_matches(['(', ')']));
                } else {
                    println!("      {}", n.path().display());
                }
                println!("      archs: {}", n.archs_text());
                if let Some(p) = &r.ptxas {
                    println!("      ptxas: {}", p.display());
                }
            }
            Err(e) => println!("  {}: cannot be loaded: {e}", r.select),
        }
    }
    if let Err(e) = &default {
        println!("default: {e}");
    }
    println!("fetch more: scripts/nvrtc/fetch.sh [11.8] [12] [13] [--with-ptxas]");
}
