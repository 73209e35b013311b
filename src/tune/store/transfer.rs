//! Moving outcomes between the two kinds of store: JSON-lines files (committed
//! results, earlier runs) into an engine, and an engine's rows back out as one
//! JSON-lines file per device model, the format earlier gemmlabs read; the same
//! for the databases of bests (one JSON file per device).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::results::bests::Database;
use crate::results::engine::{Engine, Url};

use super::{Header, Record, FORMAT};

/// What an import or export moved.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Moved {
    pub files: usize,
    pub records: usize,
    /// Outcomes the target already held (same device model, version, key and phase).
    pub skipped: usize,
    pub databases: usize,
    /// Lines that did not read, with their file and line.
    pub warnings: Vec<String>,
}

/// The JSON-lines store files in `from`: the file itself, or the `.jsonl` files in the folder.
fn store_files(from: &Path) -> Result<Vec<PathBuf>> {
    if from.is_file() {
        return Ok(vec![from.to_path_buf()]);
    }
    let entries = std::fs::read_dir(from).map_err(|e| Error::io(from, e))?;
    let mut files: Vec<PathBuf> = (entries.flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Imports JSON-lines tuning stores (a file or a folder of them) into an engine.
/// Each file's header names its device model and gemmlab version; an outcome
/// the engine holds already is skipped, so importing twice adds nothing.
pub fn import_store(from: &Path, url: &Url) -> Result<Moved> {
    let mut e = Engine::open(url)?;
    let mut moved = Moved::default();
    for path in store_files(from)? {
        let (header, records, warnings) = read_store_file(&path)?;
        moved.files += 1;
        moved.warnings.extend(warnings);
        let have = keys_held(&mut e, &header)?;
        let worker = format!("import:{}", path.display());
        let fresh: Vec<&Record> = (records.iter())
            .filter(|r| !have.contains(&(r.key.id(), r.phase.as_str().to_string())))
            .collect();
        moved.skipped += records.len() - fresh.len();
        e.transaction(|e| {
            for r in &fresh {
                let text = serde_json::to_string(r).map_err(|x| Error::invalid(x.to_string()))?;
                e.execute(
                    "INSERT INTO tune_records (device, gemmlab, key_id, phase, record, worker, at_utc) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[header.device.as_str().into(), header.gemmlab.as_str().into(), r.key.id().into(), r.phase.as_str().into(), text.into(), worker.as_str().into(), r.at_utc.as_str().into()],
                )?;
            }
            Ok(())
        })?;
        moved.records += fresh.len();
    }
    Ok(moved)
}

fn keys_held(e: &mut Engine, h: &Header) -> Result<HashSet<(String, String)>> {
    let rows = e.query(
        "SELECT key_id, phase FROM tune_records WHERE device = $1 AND gemmlab = $2",
        &[h.device.as_str().into(), h.gemmlab.as_str().into()],
    )?;
    Ok((rows.iter())
        .map(|r| {
            let t = |i: usize| r[i].text().unwrap_or("").to_string();
            (t(0), t(1))
        })
        .collect())
}

/// A JSON-lines store's header and records; unreadable lines as warnings.
fn read_store_file(path: &Path) -> Result<(Header, Vec<Record>, Vec<String>)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut lines = BufReader::new(file).lines();
    let first = lines.next().transpose().map_err(|e| Error::io(path, e))?;
    let header: Header = serde_json::from_str(first.as_deref().unwrap_or("")).map_err(|e| {
        Error::invalid(format!(
            "{} is not a gemmlab tuning store (line 1: {e})",
            path.display()
        ))
    })?;
    let (mut records, mut warnings) = (Vec::new(), Vec::new());
    for (i, line) in lines.enumerate() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(&line) {
            Ok(r) => records.push(r),
            Err(e) => warnings.push(format!("{}:{}: skipped ({e})", path.display(), i + 2)),
        }
    }
    Ok((header, records, warnings))
}

/// Exports every device model's outcomes in an engine as JSON-lines stores in
/// `to` (one file per model and gemmlab version), in the order they were written.
pub fn export_store(url: &Url, to: &Path) -> Result<Moved> {
    let mut e = Engine::open(url)?;
    std::fs::create_dir_all(to).map_err(|x| Error::io(to, x))?;
    let groups = e.query(
        "SELECT DISTINCT device, gemmlab FROM tune_records ORDER BY device, gemmlab",
        &[],
    )?;
    let mut moved = Moved::default();
    let own = env!("CARGO_PKG_VERSION");
    for g in groups {
        let (device, gemmlab) = (g[0].text().unwrap_or(""), g[1].text().unwrap_or(""));
        let slug = crate::util::keys::device_slug(device);
        let name = match gemmlab == own {
            true => format!("{slug}.jsonl"),
            false => format!("{slug}-gemmlab-{gemmlab}.jsonl"),
        };
        let path = to.join(name);
        let header = Header {
            gemmlab_tune_store: FORMAT,
            gemmlab: gemmlab.to_string(),
            device: device.to_string(),
            pci_bus_id: None,
            created_utc: crate::results::utc_now(),
        };
        let rows = e.query(
            "SELECT record FROM tune_records WHERE device = $1 AND gemmlab = $2 ORDER BY id",
            &[device.into(), gemmlab.into()],
        )?;
        let mut f = File::create(&path).map_err(|x| Error::io(&path, x))?;
        let mut text = serde_json::to_string(&header).map_err(|x| Error::invalid(x.to_string()))?;
        text.push('\n');
        for r in &rows {
            text.push_str(r[0].text().unwrap_or(""));
            text.push('\n');
        }
        f.write_all(text.as_bytes())
            .map_err(|x| Error::io(&path, x))?;
        moved.files += 1;
        moved.records += rows.len();
    }
    Ok(moved)
}

/// Every database of bests in a folder of JSON files into an engine (merged with
/// what it holds, entry by entry, as a tune offers its bests).
pub fn import_bests(from: &Path, url: &Url) -> Result<Moved> {
    let target = PathBuf::from(url.as_arg());
    let mut moved = Moved::default();
    for (_, db) in Database::all(from)? {
        db.save(&target)?;
        moved.databases += 1;
        moved.records += db.entries.len();
    }
    Ok(moved)
}

/// Every device's database of bests in an engine as JSON files in `to`.
pub fn export_bests(url: &Url, to: &Path) -> Result<Moved> {
    let mut moved = Moved::default();
    for (_, db) in Database::all(&PathBuf::from(url.as_arg()))? {
        db.save(to)?;
        moved.databases += 1;
        moved.records += db.entries.len();
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{DeviceInfo, DeviceKind, Toolchain};
    use crate::tune::store::Store;

    #[test]
    fn a_file_store_goes_in_once_and_comes_back_out_the_same() {
        let dir = std::env::temp_dir().join(format!("gemmlab-transfer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = DeviceInfo::new(
            Toolchain::OpenCl,
            "opencl:0:0",
            "GPU A",
            "v",
            "p",
            DeviceKind::Gpu,
        );
        let file = dir.join("files").join(crate::tune::store::file_name(&d));
        let mut s = Store::open(&file, &d).unwrap();
        let mut r = crate::tune::store::tests::sample();
        s.append(r.clone()).unwrap();
        r.key.config.0.insert("TS".into(), 32);
        s.append(r).unwrap();
        drop(s);
        let url = Url::Sqlite(dir.join("s.sqlite"));
        let m = import_store(&dir.join("files"), &url).unwrap();
        assert_eq!((m.files, m.records, m.skipped), (1, 2, 0));
        let again = import_store(&file, &url).unwrap();
        assert_eq!((again.records, again.skipped), (0, 2));
        let mut shared = Store::open_sql(&url, &d, "reader".into()).unwrap();
        assert_eq!(shared.records().len(), 2);
        let key = crate::tune::store::tests::sample().key;
        assert!(shared.lookup(&key).is_some());
        let out = export_store(&url, &dir.join("out")).unwrap();
        assert_eq!((out.files, out.records), (1, 2));
        let back = Store::open(&dir.join("out").join("gpu-a.jsonl"), &d).unwrap();
        let original = Store::open(&file, &d).unwrap();
        assert_eq!(back.records(), original.records());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
