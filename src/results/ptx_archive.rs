//! The PTX a run keeps (`--keep-ptx`). While the run goes, each listing is a
//! file of its own under RUN/ptx/ (an interrupted run keeps what it wrote);
//! when the run finishes they are packed into one compressed archive,
//! RUN/ptx.tar.gz, so a results folder holds one file instead of hundreds.
//! `gemmlab ptx --from` and `gemmlab report` read listings from either place.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::error::{Error, Result};

/// The folder listings are written to during a run, relative to the run.
pub const DIR: &str = "ptx";
/// The archive they are packed into, relative to the run.
pub const ARCHIVE: &str = "ptx.tar.gz";

/// Packs RUN/ptx/* into RUN/ptx.tar.gz (keeping the members of an archive
/// already there) and removes the folder. Members are sorted and carry no
/// time stamps, so the same listings always give the same archive.
/// Returns the archive's path, or None when the run kept no PTX.
pub fn pack(run: &Path) -> Result<Option<PathBuf>> {
    let dir = run.join(DIR);
    if !dir.is_dir() {
        return Ok(None);
    }
    let archive = run.join(ARCHIVE);
    let mut members = if archive.exists() {
        read_archive(&archive)?
    } else {
        BTreeMap::new()
    };
    for entry in fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
        let path = entry.map_err(|e| Error::io(&dir, e))?.path();
        if path.is_file() {
            let text = fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            members.insert(format!("{DIR}/{name}"), text);
        }
    }
    let tmp = run.join(format!("{ARCHIVE}.part"));
    let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::best()));
    for (name, text) in &members {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes())
            .map_err(|e| Error::io(&tmp, e))?;
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .map_err(|e| Error::io(&tmp, e))?;
    fs::rename(&tmp, &archive).map_err(|e| Error::io(&archive, e))?;
    fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(Some(archive))
}

fn read_archive(path: &Path) -> Result<BTreeMap<String, String>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut tar = tar::Archive::new(GzDecoder::new(file));
    let mut out = BTreeMap::new();
    let bad = |e: std::io::Error| Error::Data {
        path: path.to_path_buf(),
        message: format!("not a readable PTX archive: {e}"),
    };
    for entry in tar.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let name = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        let mut text = String::new();
        entry.read_to_string(&mut text).map_err(bad)?;
        out.insert(name, text);
    }
    Ok(out)
}

/// Every PTX listing of one run, from its archive and its folder.
#[derive(Debug, Default)]
pub struct PtxStore {
    listings: BTreeMap<String, String>,
}

impl PtxStore {
    /// An empty store when the run kept no PTX.
    pub fn open(run: &Path) -> Result<PtxStore> {
        let archive = run.join(ARCHIVE);
        let mut listings = if archive.exists() {
            read_archive(&archive)?
        } else {
            BTreeMap::new()
        };
        let dir = run.join(DIR);
        if let Ok(entries) = fs::read_dir(&dir) {
            for path in entries.flatten().map(|e| e.path()) {
                if let (true, Some(name)) = (path.is_file(), path.file_name()) {
                    let text = fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
                    listings.insert(format!("{DIR}/{}", name.to_string_lossy()), text);
                }
            }
        }
        Ok(PtxStore { listings })
    }

    /// A listing by the path a measurement records (`ptx_file`).
    pub fn get(&self, ptx_file: &str) -> Option<&str> {
        self.listings.get(ptx_file).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.listings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.listings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_reads_back_and_is_reproducible() {
        let run = std::env::temp_dir().join(format!("gemmlab-ptx-archive-{}", std::process::id()));
        let _ = fs::remove_dir_all(&run);
        fs::create_dir_all(run.join(DIR)).unwrap();
        fs::write(
            run.join(DIR).join("gemm6-cuda-1.ptx"),
            ".version 8.0\nfma.rn.f32 %f1, %f2, %f3, %f4;\n",
        )
        .unwrap();
        fs::write(run.join(DIR).join("gemm6-opencl-2.ptx"), ".version 8.0\n").unwrap();
        assert_eq!(
            PtxStore::open(&run).unwrap().len(),
            2,
            "loose files are read"
        );
        let archive = pack(&run).unwrap().unwrap();
        assert!(!run.join(DIR).exists(), "the folder is gone once packed");
        let first = fs::read(&archive).unwrap();
        let store = PtxStore::open(&run).unwrap();
        assert_eq!(store.len(), 2);
        assert!(store
            .get("ptx/gemm6-cuda-1.ptx")
            .unwrap()
            .contains("fma.rn.f32"));
        // A later run into the same folder adds to the archive, and packing the
        // same listings again gives the same bytes.
        fs::create_dir_all(run.join(DIR)).unwrap();
        fs::write(run.join(DIR).join("gemm6-opencl-2.ptx"), ".version 8.0\n").unwrap();
        pack(&run).unwrap();
        assert_eq!(fs::read(&archive).unwrap(), first);
        assert_eq!(pack(&run).unwrap(), None, "nothing to pack");
        fs::write(&archive, b"not gzip").unwrap();
        let e = PtxStore::open(&run).unwrap_err().to_string();
        assert!(e.contains("not a readable PTX archive"), "{e}");
        let _ = fs::remove_dir_all(&run);
    }
}
