//! The tuning store on a database engine (SQLite or PostgreSQL): outcomes are
//! rows keyed by device model, gemmlab version and configuration, so several
//! processes, on one host or many, share one search. A point is measured by
//! the process that claims it: a claim is a lease that its holder renews while
//! it lives (a heartbeat thread on its own connection) and that any other
//! process may take over once it has expired (its holder died).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::results::engine::{Engine, Url, Value};

use super::{Key, Record};

/// Seconds a claim lasts unless renewed; the heartbeat renews every quarter of it.
pub const DEFAULT_LEASE_S: f64 = 60.0;

/// A claim whose point has its outcome: it never expires, so a process that
/// looked for the outcome just before it was written cannot claim the point
/// just after (a claim row that went away would let it).
const DONE: f64 = 1e18;

/// This process's name in claims and rows: the name its starter gave
/// (`host:device`, [`crate::tune::fleet::WORKER_NAME_ENV`]) or the host, then
/// the process id; a restarted process is a new worker.
pub fn worker_id() -> String {
    let name = std::env::var(crate::tune::fleet::WORKER_NAME_ENV)
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(crate::util::process::hostname);
    format!("{name}:{}", std::process::id())
}

/// One device model's share of a store on an engine.
pub struct SqlStore {
    engine: Engine,
    pub device: String,
    pub gemmlab: String,
    pub worker: String,
    pub lease_s: f64,
    /// The highest row id read so far: later rows are other processes' news.
    last_id: i64,
    heartbeat: Option<Heartbeat>,
}

impl SqlStore {
    pub fn open(url: &Url, device: &str, worker: String) -> Result<SqlStore> {
        Ok(SqlStore {
            engine: Engine::open(url)?,
            device: device.to_string(),
            gemmlab: env!("CARGO_PKG_VERSION").to_string(),
            worker,
            lease_s: DEFAULT_LEASE_S,
            last_id: 0,
            heartbeat: None,
        })
    }

    pub fn url(&self) -> &Url {
        self.engine.url()
    }

    /// Records other processes wrote since the last call (all of them the first
    /// time), in order;
    /// rows that do not parse are returned as warnings.
    pub fn news(&mut self) -> Result<(Vec<Record>, Vec<String>)> {
        let rows = self.engine.query(
            "SELECT id, record FROM tune_records WHERE device = $1 AND gemmlab = $2 AND id > $3 AND worker <> $4 ORDER BY id",
            &[self.device.clone().into(), self.gemmlab.clone().into(), self.last_id.into(), self.worker.clone().into()],
        )?;
        let (mut out, mut warnings) = (Vec::new(), Vec::new());
        for r in rows {
            let id = r[0].int().unwrap_or(self.last_id);
            self.last_id = self.last_id.max(id);
            match serde_json::from_str::<Record>(r[1].text().unwrap_or("")) {
                Ok(rec) => out.push(rec),
                Err(e) => warnings.push(format!("row {id}: skipped ({e})")),
            }
        }
        Ok((out, warnings))
    }

    /// Writes one outcome and marks its claim done, in one transaction.
    pub fn append(&mut self, r: &Record) -> Result<()> {
        let text = serde_json::to_string(r).map_err(|e| Error::invalid(e.to_string()))?;
        let (device, gemmlab, worker) = (&self.device, &self.gemmlab, &self.worker);
        let key_id = r.key.id();
        let phase: Value = r.phase.as_str().into();
        self.engine.transaction(|e| {
            e.execute(
                "INSERT INTO tune_records (device, gemmlab, key_id, phase, record, worker, at_utc) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[device.as_str().into(), gemmlab.as_str().into(), key_id.as_str().into(), phase, text.into(), worker.as_str().into(), r.at_utc.as_str().into()],
            )?;
            e.execute(
                "INSERT INTO tune_claims (device, gemmlab, key_id, worker, expires) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (device, gemmlab, key_id) DO UPDATE SET expires = excluded.expires",
                &[device.as_str().into(), gemmlab.as_str().into(), key_id.as_str().into(), worker.as_str().into(), DONE.into()],
            )?;
            Ok(())
        })
    }

    /// Claims a point for this process: true when it is ours to measure (free,
    /// expired, or already ours), false while another live process holds it.
    pub fn claim(&mut self, key: &Key) -> Result<bool> {
        let now = self.engine.now_sql();
        let sql = format!(
            "INSERT INTO tune_claims (device, gemmlab, key_id, worker, expires) VALUES ($1, $2, $3, $4, {now} + $5) \
             ON CONFLICT (device, gemmlab, key_id) DO UPDATE SET worker = excluded.worker, expires = excluded.expires \
             WHERE tune_claims.expires < {DONE:e} AND (tune_claims.expires < {now} OR tune_claims.worker = excluded.worker)"
        );
        let n = self.engine.execute(
            &sql,
            &[
                self.device.clone().into(),
                self.gemmlab.clone().into(),
                key.id().into(),
                self.worker.clone().into(),
                self.lease_s.into(),
            ],
        )?;
        if n > 0 && self.heartbeat.is_none() {
            self.heartbeat = Some(Heartbeat::start(self)?);
        }
        Ok(n > 0)
    }

    /// Who holds a point's claim and for how many more seconds, if anyone does.
    pub fn holder(&mut self, key: &Key) -> Result<Option<(String, f64)>> {
        let now = self.engine.now_sql();
        let rows = self.engine.query(
            &format!("SELECT worker, expires - {now} FROM tune_claims WHERE device = $1 AND gemmlab = $2 AND key_id = $3 AND expires < {DONE:e}"),
            &[self.device.clone().into(), self.gemmlab.clone().into(), key.id().into()],
        )?;
        Ok(rows.first().map(|r| {
            let who = r[0].text().unwrap_or("").to_string();
            (who, r[1].real().unwrap_or(0.0))
        }))
    }

    /// Every outcome of a key in the store, by whichever worker (for tests and
    /// `gemmlab store status`): (worker, phase).
    pub fn writers(&mut self) -> Result<Vec<(String, String, String)>> {
        let rows = self.engine.query(
            "SELECT key_id, phase, worker FROM tune_records WHERE device = $1 AND gemmlab = $2 ORDER BY id",
            &[self.device.clone().into(), self.gemmlab.clone().into()],
        )?;
        Ok((rows.iter())
            .map(|r| {
                let t = |i: usize| r[i].text().unwrap_or("").to_string();
                (t(0), t(1), t(2))
            })
            .collect())
    }
}

impl Drop for SqlStore {
    fn drop(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.stop();
        }
        // Claims left (a search stopped for time) are freed at once rather than
        // at their lease's end.
        let _ = self.engine.execute(
            &format!("DELETE FROM tune_claims WHERE worker = $1 AND expires < {DONE:e}"),
            &[self.worker.clone().into()],
        );
    }
}

/// Renews this process's claims while it lives, on a connection of its own.
struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(s: &SqlStore) -> Result<Heartbeat> {
        let mut engine = Engine::open(s.url())?;
        let (worker, lease) = (s.worker.clone(), s.lease_s);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let every = Duration::from_secs_f64((lease / 4.0).max(0.05));
        let thread = std::thread::spawn(move || {
            let now = engine.now_sql();
            let sql = format!(
                "UPDATE tune_claims SET expires = {now} + $1 WHERE worker = $2 AND expires < {DONE:e}"
            );
            while !flag.load(Ordering::Relaxed) {
                // A renewal that fails is tried again next beat; the lease has slack.
                let _ = engine.execute(&sql, &[lease.into(), worker.as_str().into()]);
                let until = std::time::Instant::now() + every;
                while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        Ok(Heartbeat {
            stop,
            thread: Some(thread),
        })
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::results::engine::tests::engines;

    fn model(m: &str) -> String {
        format!("{m} {}", std::process::id())
    }

    #[test]
    fn a_claim_is_one_process_s_until_its_lease_runs_out() {
        for url in engines("claims") {
            let key = crate::tune::store::tests::sample().key;
            let (ma, mb) = (model("GPU A"), model("GPU B"));
            let mut a = SqlStore::open(&url, &ma, "a".into()).unwrap();
            let mut b = SqlStore::open(&url, &ma, "b".into()).unwrap();
            let mut other_model = SqlStore::open(&url, &mb, "c".into()).unwrap();
            assert!(a.claim(&key).unwrap());
            assert!(a.claim(&key).unwrap(), "a claim of its own is renewed");
            assert!(!b.claim(&key).unwrap(), "held by a live process");
            assert!(
                other_model.claim(&key).unwrap(),
                "another device model measures it too"
            );
            assert_eq!(b.holder(&key).unwrap().map(|h| h.0), Some("a".to_string()));
            // a dies: its heartbeat stops and its lease runs out.
            if let Some(h) = a.heartbeat.take() {
                h.stop();
            }
            let mut e = Engine::open(&url).unwrap();
            e.execute(
                "UPDATE tune_claims SET expires = 0 WHERE worker = 'a' AND device = $1",
                &[ma.as_str().into()],
            )
            .unwrap();
            assert!(b.claim(&key).unwrap(), "an expired claim is taken over");
            let mut r = crate::tune::store::tests::sample();
            r.run = Some("b".into());
            b.append(&r).unwrap();
            assert!(
                b.holder(&key).unwrap().is_none(),
                "an outcome ends the claim"
            );
            // One that looked for the outcome just before it was written cannot
            // claim the point just after.
            let mut late = SqlStore::open(&url, &ma, "late".into()).unwrap();
            assert!(
                !late.claim(&key).unwrap(),
                "a point with its outcome is not claimed"
            );
            let (news, warnings) = a.news().unwrap();
            assert!(warnings.is_empty());
            assert_eq!(news, vec![r], "{}", url.describe());
            assert!(a.news().unwrap().0.is_empty(), "news once");
            std::mem::forget(a);
        }
    }

    #[test]
    fn the_heartbeat_keeps_a_claim_alive_past_its_lease() {
        for url in engines("beat") {
            let key = crate::tune::store::tests::sample().key;
            let m = model("GPU H");
            let mut a = SqlStore::open(&url, &m, "a".into()).unwrap();
            a.lease_s = 1.0;
            let mut b = SqlStore::open(&url, &m, "b".into()).unwrap();
            assert!(a.claim(&key).unwrap());
            std::thread::sleep(Duration::from_millis(2500));
            assert!(!b.claim(&key).unwrap(), "renewed by a's heartbeat");
            drop(a);
            assert!(b.claim(&key).unwrap(), "freed when a ends");
        }
    }
}
