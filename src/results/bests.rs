//! The database of bests: per device, the best configuration the tuner found
//! for each kernel, toolchain and size, as CLBlast keeps its tuning database.
//! `compare --tuned` and the benches read it; `tune` writes it; `tune --show`
//! prints it. One JSON file per device, meant to be committed under `results/`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gemm::problem::Precision;

use crate::backend::Toolchain;
use crate::error::{Error, Result};
use crate::kernel::builtin::{Config, Hints};
use crate::results::engine::{Engine, Url};

/// Where `tune` writes and `compare --tuned` reads, unless told otherwise.
pub const DEFAULT_DIR: &str = "results/tuned";

/// One tuned configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub kernel: String,
    pub toolchain: Toolchain,
    pub compiler: Option<String>,
    pub driver: Option<String>,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The precision it was tuned in (f32 in databases older than f64 support).
    #[serde(default)]
    pub precision: Precision,
    /// The call tuned, where not the tutorial's C = A * B (layout, transposes, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    pub config: Config,
    pub hints: Hints,
    /// Median GFLOP/s of the final (full timing method) measurement.
    pub gflops: f64,
    /// Ratio to the vendor BLAS measured in the same run, where there is one.
    pub vs_vendor: Option<f64>,
    /// FNV-1a of the kernel source it was tuned on.
    pub source: String,
    pub strategy: String,
    /// Points the search tried.
    pub tried: usize,
    /// Wall seconds the search took (absent in entries written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_s: Option<f64>,
    /// The configurations the search's space held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<usize>,
    pub gemmlab: String,
    pub tuned_utc: String,
}

/// A search that tried fewer configurations than this is shallow: its entry
/// serves only where no deeper entry of the current source is near.
pub const SHALLOW_TRIED: usize = 20;
/// Near: within this factor of the asked size in every dimension.
pub const NEAR_FACTOR: f64 = 2.0;

impl Best {
    /// Whether its search is too shallow to stand as "the best" on its own.
    /// A search that tried its whole (small) space is not shallow.
    pub fn shallow(&self) -> bool {
        self.tried < SHALLOW_TRIED && self.space.is_none_or(|n| self.tried < n)
    }

    /// Whether it is evidence for `source` (the kernel as it is now): its own
    /// source and a search that is not shallow.
    pub fn trusted(&self, source: Option<&str>) -> bool {
        !self.shallow() && source.is_none_or(|s| s == self.source)
    }

    pub fn size_label(&self) -> String {
        match (self.m == self.n && self.n == self.k, &self.call) {
            (_, Some(c)) if c.split_whitespace().all(|kv| kv.contains('=')) => c.clone(),
            (true, _) => self.m.to_string(),
            (false, _) => format!("{}x{}x{}", self.m, self.n, self.k),
        }
    }

    /// Why it is not trusted for `source`, in words ("tried 1 configuration").
    pub fn doubts(&self, source: Option<&str>) -> Vec<String> {
        let mut d = Vec::new();
        if source.is_some_and(|s| s != self.source) {
            d.push("was tuned on another version of the kernel's source".to_string());
        }
        if self.shallow() {
            d.push(format!(
                "tried {} (shallow: under {SHALLOW_TRIED})",
                crate::util::words::plural(self.tried, "configuration")
            ));
        }
        d
    }

    fn distance(&self, size: (usize, usize, usize)) -> (f64, f64) {
        let l = |x: usize| (x.max(1) as f64).ln();
        let d = [
            (l(self.m) - l(size.0)).abs(),
            (l(self.n) - l(size.1)).abs(),
            (l(self.k) - l(size.2)).abs(),
        ];
        (d.iter().sum(), d.iter().cloned().fold(0.0, f64::max))
    }
}

/// The entry a lookup chose and, where it passed over a nearer one or serves
/// without evidence, why ("the 8192 entry tried 1 configuration; the 4096 entry
/// (2,362 tried) serves").
#[derive(Debug, Clone)]
pub struct Served<'a> {
    pub entry: &'a Best,
    pub why: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Database {
    pub device: String,
    pub entries: Vec<Best>,
    /// Where the GEMM routine switches from the direct to the indirect kernel,
    /// per toolchain and precision (`gemmlab crossover`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crossovers: Vec<Crossover>,
    /// The routine's choice per tuned call (`gemmlab tune --suite`): the kernel and
    /// configuration that ran the whole call fastest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routine: Vec<RoutineEntry>,
}

/// The GEMM routine's kernel for one call shape, layout and transposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutineEntry {
    pub toolchain: Toolchain,
    pub precision: Precision,
    /// Layout and transposes: "col NN".
    pub call: String,
    pub class: crate::gemm::shape::ShapeClass,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub kernel: String,
    pub config: Config,
    /// The kernel computes f32 from TF32 tensor-core products (3xTF32): the routine
    /// takes this entry only where FP32 emulation is allowed. A call keeps one
    /// entry of each kind.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// The switches and register cap the kernel is compiled with (published: none
    /// set, as in databases written before the routine searched them).
    #[serde(default, skip_serializing_if = "Hints::is_published")]
    pub hints: Hints,
    /// Median time of the whole call (packing, kernels, unpacking).
    pub routine_ns: f64,
    /// The vendor BLAS's median time for the same call in the same run, where there is one.
    pub vendor_ns: Option<f64>,
    /// Every kernel tried for this call and its median routine time.
    pub candidates: Vec<(String, f64)>,
    pub compiler: Option<String>,
    pub gemmlab: String,
    pub tuned_utc: String,
}

impl RoutineEntry {
    /// Whether `other` is the choice for the same call: toolchain, precision,
    /// layout and transposes, shape, and FP32 or emulated (a call keeps one of each).
    pub fn same_slot(&self, other: &RoutineEntry) -> bool {
        self.toolchain == other.toolchain
            && self.precision == other.precision
            && self.call == other.call
            && self.emulated == other.emulated
            && (self.m, self.n, self.k) == (other.m, other.n, other.k)
    }
}

/// The measured crossover of the routine's two kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    pub toolchain: Toolchain,
    pub precision: Precision,
    pub compiler: Option<String>,
    /// The smallest cube edge from which the indirect kernel is as fast or faster.
    pub min_indirect: usize,
    /// Median routine time of each kernel (pre + kernel + post) at each edge measured.
    pub measured: Vec<CrossoverPoint>,
    pub gemmlab: String,
    pub measured_utc: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossoverPoint {
    pub size: usize,
    pub direct_ns: Option<f64>,
    pub indirect_ns: Option<f64>,
}

/// What a lookup asks for: a kernel on a toolchain at a size and precision, and
/// the fingerprint of its source as it is now (None: any source will do).
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    pub kernel: &'a str,
    pub toolchain: Toolchain,
    pub precision: Precision,
    pub size: (usize, usize, usize),
    pub source: Option<String>,
}

/// The database file of a device: "results/tuned/nvidia-h200.json".
pub fn path_for(dir: &Path, device: &str) -> PathBuf {
    dir.join(format!("{}.json", crate::util::keys::device_slug(device)))
}

/// A database engine's address where `dir` is one (`sqlite:...`, `*.sqlite`,
/// `postgres://...`): the databases of bests then live in its `bests` table,
/// one document per device, beside the tuning store.
pub fn engine_url(dir: &Path) -> Option<Url> {
    dir.to_str().and_then(Url::parse)
}

impl Database {
    fn empty(device: &str) -> Database {
        Database {
            crossovers: Vec::new(),
            device: device.to_string(),
            entries: Vec::new(),
            routine: Vec::new(),
        }
    }

    /// The device's database in an engine, None when it has none yet.
    fn load_engine(e: &mut Engine, device: &str) -> Result<Option<Database>> {
        let rows = e.query("SELECT db FROM bests WHERE device = $1", &[device.into()])?;
        let Some(text) = rows.first().and_then(|r| r[0].text().map(str::to_string)) else {
            return Ok(None);
        };
        let mut db: Database = serde_json::from_str(&text).map_err(|err| {
            let at = e.url().describe();
            Error::invalid(format!(
                "the database of bests of {device} in {at} does not read: {err}"
            ))
        })?;
        db.complete_configs();
        Ok(Some(db))
    }

    /// Writes this database into an engine. `merge`: into what is there now, in
    /// one transaction, each entry offered as a tune offers it (so processes
    /// tuning at once keep each other's bests); else it replaces what is there.
    fn save_engine(&self, url: &Url, merge: bool) -> Result<PathBuf> {
        let mut e = Engine::open(url)?;
        e.transaction(|e| {
            let mut out = self.clone();
            if merge {
                if let Some(mut there) = Self::load_engine(e, &self.device)? {
                    for b in &self.entries {
                        there.offer(b.clone());
                    }
                    for r in &self.routine {
                        there.set_routine(r.clone());
                    }
                    for x in &self.crossovers {
                        there.set_crossover(x.clone());
                    }
                    out = there;
                }
            }
            let text = serde_json::to_string(&out).map_err(|e| Error::invalid(e.to_string()))?;
            let (device, now) = (self.device.as_str(), crate::results::utc_now());
            e.execute("DELETE FROM bests WHERE device = $1", &[device.into()])?;
            e.execute(
                "INSERT INTO bests (device, db, updated_utc) VALUES ($1, $2, $3)",
                &[device.into(), text.into(), now.into()],
            )?;
            Ok(())
        })?;
        Ok(PathBuf::from(url.describe()))
    }

    /// The device's database, empty when there is none yet.
    pub fn load(dir: &Path, device: &str) -> Result<Database> {
        if let Some(url) = engine_url(dir) {
            let found = Self::load_engine(&mut Engine::open(&url)?, device)?;
            return Ok(found.unwrap_or_else(|| Self::empty(device)));
        }
        let path = path_for(dir, device);
        if !path.exists() {
            return Ok(Self::empty(device));
        }
        Self::read(&path)
    }

    pub fn read(path: &Path) -> Result<Database> {
        let text = fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("tuning database {}: {e}", path.display())))?;
        let mut db: Database = serde_json::from_str(&text).map_err(|e| {
            Error::invalid(format!(
                "{} is not a gemmlab tuning database: {e}",
                path.display()
            ))
        })?;
        db.complete_configs();
        Ok(db)
    }

    /// A parameter added to a kernel after an entry was written takes its default,
    /// which is the kernel the entry was measured with, so the entry stays usable.
    /// (A value the kernel no longer allows still fails its validation.)
    fn complete_configs(&mut self) {
        let complete = |kernel: &str, c: &mut Config| {
            if let Ok(spec) = crate::kernel::builtin::find(kernel) {
                for (name, v) in spec.defaults().0 {
                    c.0.entry(name).or_insert(v);
                }
            }
        };
        for e in &mut self.entries {
            complete(&e.kernel, &mut e.config);
        }
        for e in &mut self.routine {
            complete(&e.kernel, &mut e.config);
        }
    }

    /// Every database in `dir`, by file name (in an engine: every device's).
    pub fn all(dir: &Path) -> Result<Vec<(PathBuf, Database)>> {
        let mut out = Vec::new();
        if let Some(url) = engine_url(dir) {
            let mut e = Engine::open(&url)?;
            let rows = e.query("SELECT device FROM bests ORDER BY device", &[])?;
            for r in rows {
                let device = r[0].text().unwrap_or("").to_string();
                if let Some(db) = Self::load_engine(&mut e, &device)? {
                    out.push((PathBuf::from(format!("{} ({device})", url.describe())), db));
                }
            }
            return Ok(out);
        }
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(_) => return Ok(out),
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for p in paths {
            let db = Self::read(&p)?;
            out.push((p, db));
        }
        Ok(out)
    }

    /// Saves the device's database into `dir` (a folder of JSON files, or an
    /// engine, where it is merged with what other processes saved meanwhile).
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        match engine_url(dir) {
            Some(url) => self.save_engine(&url, true),
            None => self.save_to(&path_for(dir, &self.device)),
        }
    }

    /// Writes the database to `path` exactly (in an engine: replaces the device's).
    pub fn save_to(&self, path: &Path) -> Result<PathBuf> {
        if let Some(url) = engine_url(path) {
            return self.save_engine(&url, false);
        }
        let path = path.to_path_buf();
        let io =
            |e: std::io::Error| Error::invalid(format!("tuning database {}: {e}", path.display()));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::invalid(e.to_string()))?;
        // Written whole then renamed: an interrupt never leaves half a database.
        let tmp = path.with_extension("json.tmp");
        fs::write(&tmp, text + "\n").map_err(io)?;
        fs::rename(&tmp, &path).map_err(io)?;
        Ok(path)
    }

    /// Adds or replaces the entry of the same kernel, toolchain and size.
    /// Keeps `best` unless the database already holds a faster result for the same
    /// kernel source, toolchain, precision, call and size (by the ratio to the vendor
    /// BLAS each was measured with, else by GFLOP/s): a short search, such as one call
    /// of `tune --suite`, does not replace a long one's better configuration. A result
    /// for another source (the kernel changed) is always replaced. Returns whether
    /// `best` was kept.
    pub fn offer(&mut self, best: Best) -> bool {
        self.offer_said(best).0
    }

    /// [`offer`](Self::offer), with what became of the offer in words.
    ///
    /// - Same source: kept where faster than the entry held, else declined (a
    ///   shallower, slower search never replaces a deeper one).
    /// - Another source than the entry held (the kernel changed): it replaces that
    ///   entry only with a search of comparable depth (at least half as many
    ///   configurations tried); else both are kept, and lookups prefer whichever
    ///   is evidence for the kernel as it is then.
    pub fn offer_said(&mut self, best: Best) -> (bool, String) {
        let slot = |e: &Best| {
            e.kernel == best.kernel
                && e.toolchain == best.toolchain
                && e.precision == best.precision
                && e.call == best.call
                && (e.m, e.n, e.k) == (best.m, best.n, best.k)
        };
        let better = |old: &Best| match (best.vs_vendor, old.vs_vendor) {
            (Some(new), Some(old)) => new > old,
            _ => best.gflops > old.gflops,
        };
        let what = format!(
            "{} {} at {}",
            best.kernel,
            best.toolchain,
            best.size_label()
        );
        if let Some(old) = self
            .entries
            .iter()
            .find(|e| slot(e) && e.source == best.source)
        {
            if !better(old) {
                let said = format!(
                    "{what}: kept the entry held ({:.1} GFLOP/s, {} tried); the offer ({:.1} GFLOP/s, {} tried) is not faster",
                    old.gflops, old.tried, best.gflops, best.tried
                );
                return (false, said);
            }
            self.entries
                .retain(|e| !(slot(e) && e.source == best.source));
            self.insert(best);
            return (true, format!("{what}: replaced by a faster configuration"));
        }
        let deeper_old = self
            .entries
            .iter()
            .filter(|e| slot(e))
            .any(|e| best.tried * 2 < e.tried);
        if deeper_old {
            let said = format!(
                "{what}: kept beside the entry of the earlier source, whose search was deeper; lookups take the one for the source as it is"
            );
            self.insert(best);
            return (true, said);
        }
        self.entries.retain(|e| !slot(e));
        self.insert(best);
        (true, format!("{what}: recorded"))
    }

    fn insert(&mut self, best: Best) {
        self.entries.push(best);
        self.sort();
    }

    pub fn upsert(&mut self, best: Best) {
        self.entries.retain(|e| {
            !(e.kernel == best.kernel
                && e.toolchain == best.toolchain
                && e.precision == best.precision
                && e.call == best.call
                && (e.m, e.n, e.k) == (best.m, best.n, best.k))
        });
        self.insert(best);
    }

    fn sort(&mut self) {
        self.entries.sort_by(|a, b| {
            (
                &a.kernel,
                a.toolchain,
                a.precision.define(),
                a.m,
                a.n,
                a.k,
                &a.call,
            )
                .cmp(&(
                    &b.kernel,
                    b.toolchain,
                    b.precision.define(),
                    b.m,
                    b.n,
                    b.k,
                    &b.call,
                ))
        });
    }

    /// The routine's crossover for a toolchain and precision, where measured.
    pub fn crossover(&self, toolchain: Toolchain, precision: Precision) -> Option<&Crossover> {
        self.crossovers
            .iter()
            .find(|x| x.toolchain == toolchain && x.precision == precision)
    }

    /// Keeps the routine's choice for one call, replacing an earlier one of the same slot.
    pub fn set_routine(&mut self, r: RoutineEntry) {
        self.routine.retain(|e| !e.same_slot(&r));
        self.routine.push(r);
    }

    /// The routine's entries of one toolchain and precision.
    pub fn routine_for(&self, toolchain: Toolchain, precision: Precision) -> Vec<RoutineEntry> {
        self.routine
            .iter()
            .filter(|e| e.toolchain == toolchain && e.precision == precision)
            .cloned()
            .collect()
    }

    /// Refuses a database written on another device: its configurations and
    /// choices were measured there.
    pub fn check_device(&self, path: &Path, device: &str) -> Result<()> {
        if self.device == device {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{} is the database of {}, not of {device}: its tuned configurations and choices were measured there (tune this device, or give --db a folder or file of its own)",
            path.display(),
            self.device
        )))
    }

    pub fn set_crossover(&mut self, x: Crossover) {
        self.crossovers
            .retain(|e| !(e.toolchain == x.toolchain && e.precision == x.precision));
        self.crossovers.push(x);
    }

    /// The entry for a kernel and toolchain tuned at the size nearest to `size`
    /// (by the distance of log M, log N, log K): a configuration tuned at 4096
    /// serves 5000, as CLBlast's database serves sizes it was not tuned at.
    pub fn lookup(
        &self,
        kernel: &str,
        toolchain: Toolchain,
        size: (usize, usize, usize),
    ) -> Option<&Best> {
        self.lookup_in(kernel, toolchain, Precision::F32, size)
    }

    /// `lookup` among the entries tuned in `precision` (plain calls first).
    pub fn lookup_in(
        &self,
        kernel: &str,
        toolchain: Toolchain,
        precision: Precision,
        size: (usize, usize, usize),
    ) -> Option<&Best> {
        let ask = Ask {
            kernel,
            toolchain,
            precision,
            size,
            source: None,
        };
        self.lookup_ranked(&ask, |_| true).map(|s| s.entry)
    }

    /// The entry that serves `ask`, ranked by evidence before distance: the nearest
    /// entry where it is trusted (the current source, a search that is not
    /// shallow); else the nearest trusted entry within [`NEAR_FACTOR`] of the size
    /// in every dimension, saying why the nearer one was passed over; else the
    /// nearest, saying what it lacks. `accept` filters (a configuration the kernel
    /// still validates, a call kind).
    pub fn lookup_ranked(&self, ask: &Ask, accept: impl Fn(&Best) -> bool) -> Option<Served<'_>> {
        let source = ask.source.as_deref();
        let by_distance = |a: &&Best, b: &&Best| {
            let (da, db) = (a.distance(ask.size).0, b.distance(ask.size).0);
            // Equally near: the trusted, then the deeper search.
            da.total_cmp(&db)
                .then(b.trusted(source).cmp(&a.trusted(source)))
                .then(b.tried.cmp(&a.tried))
        };
        let mut all: Vec<&Best> = (self.entries.iter())
            .filter(|e| e.kernel == ask.kernel && e.toolchain == ask.toolchain)
            .filter(|e| e.precision == ask.precision && accept(e))
            .collect();
        all.sort_by(by_distance);
        let nearest = *all.first()?;
        if nearest.trusted(source) {
            return Some(Served {
                entry: nearest,
                why: None,
            });
        }
        let near = NEAR_FACTOR.ln() + 1e-9;
        let doubts = nearest.doubts(source).join(" and ");
        // Evidence, best first: trusted; a deep search on another source; shallow.
        let level = |e: &Best| match (e.trusted(source), e.shallow()) {
            (true, _) => 2,
            (false, false) => 1,
            (false, true) => 0,
        };
        let better = (level(nearest) + 1..=2)
            .rev()
            .find_map(|lv| (all.iter()).find(|e| level(e) == lv && e.distance(ask.size).1 <= near));
        if let Some(t) = better {
            let stale = match t.trusted(source) {
                true => "",
                false => ", on another version of the source",
            };
            let why = format!(
                "the {} entry {doubts}; the {} entry ({} tried{stale}) serves",
                nearest.size_label(),
                t.size_label(),
                t.tried
            );
            return Some(Served {
                entry: t,
                why: Some(why),
            });
        }
        let why = format!(
            "the {} entry {doubts}, and no entry with better evidence is within {NEAR_FACTOR}x of the size: it serves, unproven",
            nearest.size_label()
        );
        Some(Served {
            entry: nearest,
            why: Some(why),
        })
    }

    /// The entry of a user kernel (a spec) on a toolchain tuned at `dims`, else at
    /// the nearest size it was tuned at (log distance over the dimensions both name).
    pub fn lookup_dims(
        &self,
        kernel: &str,
        toolchain: Toolchain,
        dims: &std::collections::BTreeMap<String, i64>,
    ) -> Option<&Best> {
        let parse = |tag: &str| -> std::collections::BTreeMap<String, i64> {
            tag.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
                .collect()
        };
        let l = |x: i64| (x.max(1) as f64).ln();
        self.entries
            .iter()
            .filter(|e| e.kernel == kernel && e.toolchain == toolchain && e.call.is_some())
            .min_by(|a, b| {
                let d = |e: &Best| {
                    let at = parse(e.call.as_deref().unwrap_or_default());
                    dims.iter()
                        .map(|(k, v)| at.get(k).map_or(100.0, |w| (l(*w) - l(*v)).abs()))
                        .sum::<f64>()
                };
                d(a).partial_cmp(&d(b)).unwrap_or(std::cmp::Ordering::Equal)
            })
    }

    /// A table of every entry, for `tune --show`.
    pub fn table(&self) -> String {
        let mut out = format!("{}\n", self.device);
        out += &format!(
            "  {:<7} {:<7} {:<16} {:>10} {:>8}  {}\n",
            "kernel", "tc", "size", "GFLOP/s", "xBLAS", "configuration"
        );
        for e in &self.entries {
            let hints = e.hints.describe(true);
            out += &format!(
                "  {:<7} {:<7} {:<16} {:>10.1} {:>8}  {}{}\n",
                e.kernel,
                e.toolchain.as_str(),
                match (&e.call, e.m) {
                    // A spec's size is its dims; its rate is in its own unit.
                    (Some(dims), 0) => dims.clone(),
                    _ => format!("{}x{}x{}", e.m, e.n, e.k),
                },
                e.gflops,
                e.vs_vendor.map_or("-".into(), |v| format!("{v:.2}")),
                e.config.describe(),
                if hints == "published" {
                    String::new()
                } else {
                    format!(" ({hints})")
                }
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(kernel: &str, size: usize, g: f64) -> Best {
        Best {
            kernel: kernel.into(),
            toolchain: Toolchain::Cuda,
            compiler: None,
            driver: None,
            m: size,
            n: size,
            k: size,
            precision: Precision::F32,
            call: None,
            config: Config([("TS".to_string(), 16)].into_iter().collect()),
            hints: Hints::default(),
            gflops: g,
            vs_vendor: Some(0.5),
            source: "0".into(),
            strategy: "anneal".into(),
            tried: 10,
            search_s: None,
            space: None,
            gemmlab: "x".into(),
            tuned_utc: "now".into(),
        }
    }

    fn empty() -> Database {
        Database {
            crossovers: Vec::new(),
            device: "NVIDIA H200".into(),
            entries: vec![],
            routine: vec![],
        }
    }

    fn ask(size: usize, source: Option<&str>) -> Ask<'static> {
        Ask {
            kernel: "xgemm",
            toolchain: Toolchain::Cuda,
            precision: Precision::F32,
            size: (size, size, size),
            source: source.map(str::to_string),
        }
    }

    fn searched(size: usize, tried: usize, source: &str, g: f64) -> Best {
        Best {
            tried,
            source: source.into(),
            ..best("xgemm", size, g)
        }
    }

    #[test]
    fn a_shallow_or_stale_entry_gives_way_to_a_trusted_one_near_it() {
        let mut db = empty();
        db.upsert(searched(4096, 2362, "s1", 100.0));
        db.upsert(searched(8192, 1, "s1", 40.0));
        let s = db.lookup_ranked(&ask(8192, Some("s1")), |_| true).unwrap();
        assert_eq!(s.entry.m, 4096);
        let why = s.why.unwrap();
        assert!(
            why.contains("the 8192 entry tried 1 configuration")
                && why.contains("the 4096 entry (2362 tried) serves"),
            "{why}"
        );
        // At its own size a trusted entry serves without a word.
        let s = db.lookup_ranked(&ask(4096, Some("s1")), |_| true).unwrap();
        assert!(s.entry.m == 4096 && s.why.is_none());
        // Another source: the nearer deep entry is stale, the trusted one serves.
        db.upsert(searched(8192, 900, "s0", 120.0));
        let s = db.lookup_ranked(&ask(8192, Some("s1")), |_| true).unwrap();
        assert_eq!((s.entry.m, s.entry.source.as_str()), (4096, "s1"));
        assert!(s
            .why
            .unwrap()
            .contains("another version of the kernel's source"));
        // Every entry stale: the deep search still serves before the one-point one.
        let mut stale = empty();
        stale.upsert(searched(4096, 2362, "s0", 100.0));
        stale.upsert(searched(8192, 1, "s0", 40.0));
        let s = stale
            .lookup_ranked(&ask(8192, Some("s1")), |_| true)
            .unwrap();
        assert_eq!(s.entry.m, 4096);
        assert!(s
            .why
            .unwrap()
            .contains("(2362 tried, on another version of the source) serves"));
        // Nothing trusted within 2x: the nearest serves, and says it is unproven.
        let s = db.lookup_ranked(&ask(32768, Some("s1")), |_| true).unwrap();
        assert_eq!(s.entry.m, 8192);
        assert!(s.why.unwrap().contains("unproven"));
        // A search that tried its whole small space is not shallow.
        let whole = Best {
            space: Some(6),
            ..searched(8192, 6, "s1", 50.0)
        };
        assert!(!whole.shallow());
    }

    #[test]
    fn a_shallower_slower_offer_never_replaces_a_deeper_entry() {
        let mut db = empty();
        assert!(db.offer(searched(8192, 2362, "s1", 100.0)));
        let (kept, said) = db.offer_said(searched(8192, 1, "s1", 90.0));
        assert!(!kept && said.contains("not faster"), "{said}");
        assert_eq!(db.entries[0].tried, 2362);
        // A new source with a far shallower search is kept beside the old entry.
        let (kept, said) = db.offer_said(searched(8192, 5, "s2", 95.0));
        assert!(kept && said.contains("kept beside"), "{said}");
        assert_eq!(db.entries.len(), 2);
        // A new source with a comparable search replaces it.
        assert!(db.offer(searched(8192, 1500, "s3", 80.0)));
        assert_eq!(db.entries.len(), 1);
        assert_eq!(db.entries[0].source, "s3");
    }

    #[test]
    fn an_offer_slower_than_the_held_result_is_declined() {
        let mut db = Database {
            crossovers: Vec::new(),
            device: "NVIDIA H200".into(),
            entries: vec![],
            routine: vec![],
        };
        let with_ratio = |g: f64, r: Option<f64>| Best {
            vs_vendor: r,
            ..best("simt", 4096, g)
        };
        assert!(db.offer(with_ratio(40.0, Some(0.95))));
        // Slower by the ratio to cuBLAS, though its own run's GFLOP/s are higher.
        assert!(!db.offer(with_ratio(41.0, Some(0.90))));
        assert!(db.offer(with_ratio(39.0, Some(0.97))));
        assert_eq!(db.entries.len(), 1);
        assert_eq!(db.entries[0].vs_vendor, Some(0.97));
        // Without ratios, by GFLOP/s.
        assert!(!db.offer(with_ratio(38.0, None)));
        assert!(db.offer(with_ratio(45.0, None)));
        // Another source: the held result is of a kernel that changed.
        let changed = Best {
            source: "1".into(),
            ..with_ratio(10.0, Some(0.2))
        };
        assert!(db.offer(changed));
        assert_eq!(db.entries[0].source, "1");
    }

    #[test]
    fn upsert_replaces_and_lookup_takes_the_nearest_size() {
        let mut db = Database {
            crossovers: Vec::new(),
            device: "NVIDIA H200".into(),
            entries: vec![],
            routine: vec![],
        };
        db.upsert(best("gemm6", 4096, 1.0));
        db.upsert(best("gemm6", 8192, 2.0));
        db.upsert(best("gemm6", 4096, 3.0));
        assert_eq!(db.entries.len(), 2);
        assert_eq!(
            db.lookup("gemm6", Toolchain::Cuda, (5000, 5000, 5000))
                .map(|b| b.gflops),
            Some(3.0)
        );
        assert_eq!(
            db.lookup("gemm6", Toolchain::Cuda, (7000, 7000, 7000))
                .map(|b| b.gflops),
            Some(2.0)
        );
        assert!(db
            .lookup("gemm6", Toolchain::OpenCl, (4096, 4096, 4096))
            .is_none());
        let dir = std::env::temp_dir().join(format!("gemmlab-db-{}", std::process::id()));
        let path = db.save(&dir).unwrap();
        assert!(path.ends_with("nvidia-h200.json"));
        // Read back with the parameters the entries leave out at their defaults.
        let mut completed = db.clone();
        completed.complete_configs();
        let defaults = crate::kernel::builtin::find("gemm6").unwrap().defaults();
        assert!(defaults
            .0
            .keys()
            .all(|k| completed.entries[0].config.0.contains_key(k)));
        assert_eq!(
            completed.entries[0].config.get("TS"),
            16,
            "what the entry says stays"
        );
        assert_eq!(Database::load(&dir, "NVIDIA H200").unwrap(), completed);
        assert_eq!(Database::all(&dir).unwrap().len(), 1);
        assert!(db.table().contains("gemm6"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_routine_entry_keeps_its_hints_and_older_entries_read_as_published() {
        let older = r#"{"toolchain":"cuda","precision":"f32","call":"col NN","class":"square",
            "m":64,"n":64,"k":64,"kernel":"simt","config":{"BM":64},"routine_ns":1.0,
            "vendor_ns":null,"candidates":[],"compiler":null,"gemmlab":"x","tuned_utc":"now"}"#;
        let mut e: RoutineEntry = serde_json::from_str(older).unwrap();
        assert!(e.hints.is_published());
        assert!(!serde_json::to_string(&e).unwrap().contains("hints"));
        e.hints = Hints::default().with_switch("ASYNC_COPY", true);
        e.hints.max_registers = Some(128);
        let back: RoutineEntry = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
}
