//! The tuning store: every configuration's outcome, written as soon as it is
//! known, so an interrupted run loses nothing it measured and a rerun measures
//! nothing twice. Two kinds behind one [`Store`]:
//! - a JSON-lines file per device: the first line says which device and which
//!   gemmlab wrote it, every later line is one outcome; a store of another device
//!   or gemmlab version is refused, a corrupt line skipped with a warning;
//! - a database engine ([`sql`]: SQLite, the default, or PostgreSQL), shared by
//!   every process that tunes the same device model: each point is claimed
//!   before it is measured, so processes on several devices and hosts split one
//!   search between them and none measures a point another has.

pub mod sql;
pub mod transfer;

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::{DeviceInfo, KernelResources, Toolchain};
use crate::error::{Error, Result};
use crate::gemm::driver::Status;
use crate::kernel::builtin::{Config, Hints};
use crate::measure::split::Split;
use crate::measure::Stats;
use crate::results::engine::Url;
use crate::util::keys::device_slug;

pub const FORMAT: u32 = 1;

/// The store's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub gemmlab_tune_store: u32,
    pub gemmlab: String,
    pub device: String,
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    pub created_utc: String,
}

/// What identifies one measured configuration on the store's device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    pub toolchain: Toolchain,
    pub driver: Option<String>,
    pub compiler: Option<String>,
    pub kernel: String,
    /// FNV-1a of the kernel's full source: an edited kernel is a new kernel.
    pub source: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The GEMM call where it is not the tutorial's C = A * B in f32 (layout,
    /// transposes, alpha/beta, ld, precision): its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    pub config: Config,
    pub hints: Hints,
}

impl Key {
    /// A canonical string for lookups (BTreeMaps serialise in order).
    pub fn id(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Search (few repetitions, to rank) or final (the full timing method, to report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Search,
    Final,
}

impl Phase {
    /// Its name in records and in an engine's `phase` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Search => "search",
            Phase::Final => "final",
        }
    }
}

/// One configuration's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub key: Key,
    pub phase: Phase,
    pub status: Status,
    pub gflops: Option<f64>,
    pub time: Option<Stats>,
    /// Stopped after the checked run: it was far slower than the fastest checked run so far.
    #[serde(default)]
    pub pruned: bool,
    /// Pruned at the screen (`tune --screen`): its one checked launch, and the
    /// time and GFLOP/s above, were of this K, not of the key's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_k: Option<usize>,
    pub resources: Option<KernelResources>,
    pub occupancy: Option<f64>,
    pub compile_ms: Option<f64>,
    /// Wall seconds this configuration cost the device thread (load, check, time).
    pub device_s: f64,
    /// Those seconds step by step (absent in stores written before it was recorded).
    #[serde(default, skip_serializing_if = "Split::is_empty")]
    pub split: Split,
    /// The `gemmlab tune` run that measured it, where it ran under a supervisor:
    /// a restarted search counts its run's records as its own, not as the store's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Seconds since its search started when the outcome was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    pub strategy: String,
    pub at_utc: String,
}

/// Where the outcomes go.
enum Kind {
    File { path: PathBuf, file: File },
    Sql(Box<sql::SqlStore>),
}

/// How another process (a supervisor recording its child's failure) reaches
/// the same store: a JSON-lines file, or an engine's address and device model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StoreRef {
    File(PathBuf),
    Sql { url: String, device: String },
}

/// An open store.
pub struct Store {
    kind: Kind,
    pub header: Header,
    records: Vec<Record>,
    search: HashMap<String, usize>,
    /// Lines that could not be read, with their numbers.
    pub warnings: Vec<String>,
}

/// A file name for the device: "nvidia-h200.jsonl".
pub fn file_name(device: &DeviceInfo) -> String {
    format!("{}.jsonl", device_slug(&device.name))
}

/// The default `--store`: one SQLite file for every device of the host.
pub const DEFAULT_STORE: &str = "gemmlab-results/tune-store.sqlite";

impl Store {
    /// Opens the store `--store` names for `device`: an engine's address, or a
    /// folder holding one JSON-lines file per device.
    pub fn open_at(location: &str, device: &DeviceInfo) -> Result<Store> {
        match Url::parse(location) {
            Some(url) => Store::open_sql(&url, device, sql::worker_id()),
            None => Store::open(&Path::new(location).join(file_name(device)), device),
        }
    }

    /// Opens the share of `device`'s model in the store on an engine, as `worker`.
    pub fn open_sql(url: &Url, device: &DeviceInfo, worker: String) -> Result<Store> {
        let mut db = sql::SqlStore::open(url, &device.name, worker)?;
        let (records, warnings) = db.news()?;
        let header = Header {
            gemmlab_tune_store: FORMAT,
            gemmlab: db.gemmlab.clone(),
            device: device.name.clone(),
            pci_bus_id: device.pci_bus_id.clone(),
            created_utc: crate::results::utc_now(),
        };
        Ok(Store::holding(
            Kind::Sql(Box::new(db)),
            header,
            records,
            warnings,
        ))
    }

    /// A store of `kind` holding `records`, indexed.
    fn holding(kind: Kind, header: Header, records: Vec<Record>, warnings: Vec<String>) -> Store {
        let mut store = Store {
            kind,
            header,
            records: Vec::new(),
            search: HashMap::new(),
            warnings,
        };
        for r in records {
            store.index(r);
        }
        store
    }

    /// Opens (or creates) the JSON-lines store at `path` for `device`.
    pub fn open(path: &Path, device: &DeviceInfo) -> Result<Store> {
        let wanted = Header {
            gemmlab_tune_store: FORMAT,
            gemmlab: env!("CARGO_PKG_VERSION").to_string(),
            device: device.name.clone(),
            pci_bus_id: device.pci_bus_id.clone(),
            created_utc: crate::results::utc_now(),
        };
        let io =
            |e: std::io::Error| Error::invalid(format!("tuning store {}: {e}", path.display()));
        let exists = path.exists() && fs::metadata(path).map(|m| m.len() > 0).unwrap_or(false);
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        let header = if exists {
            let reader = BufReader::new(File::open(path).map_err(io)?);
            let mut lines = reader.lines();
            let first = lines.next().transpose().map_err(io)?.unwrap_or_default();
            let header: Header = serde_json::from_str(&first).map_err(|e| {
                Error::invalid(format!(
                    "{} is not a gemmlab tuning store (its first line: {e}); give another --store",
                    path.display()
                ))
            })?;
            refuse_mix(path, &header, &wanted)?;
            for (i, line) in lines.enumerate() {
                let line = match line {
                    Ok(l) => l,
                    Err(e) => {
                        warnings.push(format!(
                            "line {}: unreadable ({e}); the rest of the file is skipped",
                            i + 2
                        ));
                        break;
                    }
                };
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Record>(&line) {
                    Ok(r) => records.push(r),
                    Err(e) => warnings.push(format!("line {}: skipped ({e})", i + 2)),
                }
            }
            header
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::create_dir_all(dir).map_err(io)?;
            }
            wanted.clone()
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if !exists {
            let line = serde_json::to_string(&header).map_err(|e| Error::invalid(e.to_string()))?;
            writeln!(file, "{line}").map_err(io)?;
            file.flush().map_err(io)?;
        } else if !ends_with_newline(path) {
            // A line cut off by an interrupt: start the next one on its own line.
            writeln!(file).map_err(io)?;
        }
        let kind = Kind::File {
            path: path.to_path_buf(),
            file,
        };
        Ok(Store::holding(kind, header, records, warnings))
    }

    fn index(&mut self, r: Record) {
        if r.phase == Phase::Search {
            self.search.insert(r.key.id(), self.records.len());
        }
        self.records.push(r);
    }

    /// The store as messages name it: its file, or its engine's address.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::File { path, .. } => path.display().to_string(),
            Kind::Sql(db) => db.url().describe(),
        }
    }

    /// How a supervisor reaches this store.
    pub fn reference(&self) -> StoreRef {
        match &self.kind {
            Kind::File { path, .. } => StoreRef::File(path.clone()),
            Kind::Sql(db) => StoreRef::Sql {
                url: db.url().as_arg(),
                device: db.device.clone(),
            },
        }
    }

    /// Whether other processes may share this store's searches.
    pub fn is_shared(&self) -> bool {
        matches!(self.kind, Kind::Sql(_))
    }

    /// The engine-side store, if this is one.
    pub fn sql(&mut self) -> Option<&mut sql::SqlStore> {
        match &mut self.kind {
            Kind::Sql(db) => Some(db),
            Kind::File { .. } => None,
        }
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The search outcome stored for this key, if any. A shared store that does
    /// not hold it yet reads what other processes wrote since it last looked.
    pub fn lookup(&mut self, key: &Key) -> Option<&Record> {
        let id = key.id();
        if !self.search.contains_key(&id) {
            self.read_news();
        }
        self.search.get(&id).map(|&i| &self.records[i])
    }

    /// Other processes' outcomes since the last look (a shared store only).
    fn read_news(&mut self) {
        let Kind::Sql(db) = &mut self.kind else {
            return;
        };
        match db.news() {
            Ok((records, warnings)) => {
                self.warnings.extend(warnings);
                for r in records {
                    self.index(r);
                }
            }
            Err(e) => self.warnings.push(format!("reading the store: {e}")),
        }
    }

    /// Claims a point before measuring it: false while another live process
    /// holds it (a shared store); always true for a file of its own.
    pub fn claim(&mut self, key: &Key) -> Result<bool> {
        match &mut self.kind {
            Kind::Sql(db) => db.claim(key),
            Kind::File { .. } => Ok(true),
        }
    }

    /// Appends one record, on disk (flushed, or committed) before returning.
    pub fn append(&mut self, r: Record) -> Result<()> {
        match &mut self.kind {
            Kind::File { path, file } => {
                let line = serde_json::to_string(&r).map_err(|e| Error::invalid(e.to_string()))?;
                writeln!(file, "{line}")
                    .and_then(|_| file.flush())
                    .map_err(|e| Error::invalid(format!("tuning store {}: {e}", path.display())))?;
            }
            Kind::Sql(db) => db.append(&r)?,
        }
        self.index(r);
        Ok(())
    }
}

impl StoreRef {
    /// Appends one record without opening the store as a searcher would (a
    /// supervisor recording its dead child's configuration).
    pub fn append(&self, r: &Record) -> Result<()> {
        match self {
            StoreRef::File(path) => append_to(path, r),
            StoreRef::Sql { url, device } => {
                let url = Url::parse(url)
                    .ok_or_else(|| Error::invalid(format!("not a store address: {url}")))?;
                let worker = format!("{}:supervisor", sql::worker_id());
                sql::SqlStore::open(&url, device, worker)?.append(r)
            }
        }
    }
}

/// Appends one record to the store file at `path` without opening it as a store
/// (a supervisor recording its child's failed configuration; the child is gone).
/// A line the child left unfinished is closed first, so this record stays whole.
pub fn append_to(path: &Path, r: &Record) -> Result<()> {
    let line = serde_json::to_string(r).map_err(|e| Error::invalid(e.to_string()))?;
    let newline = if ends_with_newline(path) { "" } else { "\n" };
    OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| writeln!(f, "{newline}{line}").and_then(|_| f.flush()))
        .map_err(|e| Error::io(path, e))
}

fn ends_with_newline(path: &Path) -> bool {
    fs::read(path)
        .map(|b| b.last() == Some(&b'\n'))
        .unwrap_or(true)
}

fn refuse_mix(path: &Path, have: &Header, want: &Header) -> Result<()> {
    if have.gemmlab_tune_store != want.gemmlab_tune_store {
        return Err(Error::invalid(format!(
            "{} is a tuning store of format {}, this gemmlab writes format {}; give another --store",
            path.display(),
            have.gemmlab_tune_store,
            want.gemmlab_tune_store
        )));
    }
    let other_device = have.device != want.device
        || matches!((&have.pci_bus_id, &want.pci_bus_id), (Some(a), Some(b)) if a != b);
    if other_device {
        return Err(Error::invalid(format!(
            "{} holds measurements of {} ({}), not of {} ({}): one store per device, never mixed; give another --store",
            path.display(),
            have.device,
            have.pci_bus_id.as_deref().unwrap_or("bus id unknown"),
            want.device,
            want.pci_bus_id.as_deref().unwrap_or("bus id unknown")
        )));
    }
    if have.gemmlab != want.gemmlab {
        return Err(Error::invalid(format!(
            "{} was written by gemmlab {}, this is gemmlab {}: its kernels or timing may differ, so the two are not mixed; give another --store",
            path.display(),
            have.gemmlab,
            want.gemmlab
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::DeviceKind;
    use crate::util::keys::fnv1a;

    fn device(name: &str) -> DeviceInfo {
        DeviceInfo::new(
            Toolchain::OpenCl,
            "opencl:0:0",
            name,
            "v",
            "p",
            DeviceKind::Cpu,
        )
    }

    /// A record for other modules' tests.
    pub(crate) fn sample() -> Record {
        record(8)
    }

    fn record(ts: i64) -> Record {
        Record {
            key: Key {
                call: None,
                toolchain: Toolchain::OpenCl,
                driver: Some("1".into()),
                compiler: None,
                kernel: "gemm2".into(),
                source: fnv1a("src"),
                m: 64,
                n: 64,
                k: 64,
                config: Config([("TS".to_string(), ts)].into_iter().collect()),
                hints: Hints::default(),
            },
            phase: Phase::Search,
            status: Status::Ok,
            gflops: Some(ts as f64),
            time: None,
            pruned: false,
            screen_k: None,
            resources: None,
            occupancy: None,
            compile_ms: Some(1.0),
            device_s: 0.01,
            split: Default::default(),
            run: None,
            elapsed_s: None,
            strategy: "exhaustive".into(),
            at_utc: "now".into(),
        }
    }

    #[test]
    fn appends_survive_reopening_and_corrupt_lines_are_skipped() {
        let dir = std::env::temp_dir().join(format!("gemmlab-store-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("x.jsonl");
        let d = device("Some GPU");
        let mut s = Store::open(&path, &d).unwrap();
        s.append(record(8)).unwrap();
        s.append(record(16)).unwrap();
        drop(s);
        // A line cut off mid-write, then garbage.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        write!(f, "{{\"key\": {{\"toolchain\"").unwrap();
        drop(f);
        let mut s = Store::open(&path, &d).unwrap();
        assert_eq!(s.records().len(), 2);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert_eq!(s.lookup(&record(16).key).and_then(|r| r.gflops), Some(16.0));
        assert!(s.lookup(&record(32).key).is_none());
        s.append(record(32)).unwrap();
        drop(s);
        let mut s = Store::open(&path, &d).unwrap();
        assert_eq!(s.records().len(), 3);
        assert!(s.lookup(&record(32).key).is_some());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn another_device_or_version_is_refused() {
        let dir = std::env::temp_dir().join(format!("gemmlab-store-mix-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("x.jsonl");
        drop(Store::open(&path, &device("GPU A")).unwrap());
        let e = Store::open(&path, &device("GPU B"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("GPU A") && e.contains("GPU B") && e.contains("never mixed"),
            "{e}"
        );
        let text = fs::read_to_string(&path)
            .unwrap()
            .replace(env!("CARGO_PKG_VERSION"), "0.0.0-old");
        fs::write(&path, text).unwrap();
        let e = Store::open(&path, &device("GPU A"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("0.0.0-old"), "{e}");
        fs::write(&path, "not json\n").unwrap();
        let e = Store::open(&path, &device("GPU A"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a gemmlab tuning store"), "{e}");
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(file_name(&device("NVIDIA H200")), "nvidia-h200.jsonl");
    }
}
