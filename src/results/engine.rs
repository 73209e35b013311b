//! The database engines under the tuning store and the database of bests:
//! SQLite (embedded, one file, many processes of one host, crash-safe in WAL
//! mode) and PostgreSQL (several hosts). One schema for both, created and
//! upgraded by numbered migrations; one small interface (statements with `$n`
//! parameters, rows of [`Value`]s, transactions) so the code above names no engine.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where a store lives: `sqlite:PATH` (or a path ending .sqlite, .sqlite3, .db)
/// or `postgres://user@host/db` (`postgresql://` too).
#[derive(Debug, Clone, PartialEq)]
pub enum Url {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Url {
    /// An engine's address, or None where `s` names a plain folder or file.
    pub fn parse(s: &str) -> Option<Url> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Some(Url::Postgres(s.to_string()));
        }
        if let Some(p) = s.strip_prefix("sqlite:") {
            return Some(Url::Sqlite(PathBuf::from(p.trim_start_matches("//"))));
        }
        let ext = Path::new(s).extension().and_then(|e| e.to_str());
        matches!(ext, Some("sqlite" | "sqlite3" | "db")).then(|| Url::Sqlite(PathBuf::from(s)))
    }

    /// Said in messages and written into results: the password never.
    pub fn describe(&self) -> String {
        match self {
            Url::Sqlite(p) => format!("sqlite:{}", p.display()),
            Url::Postgres(u) => redact(u),
        }
    }

    /// How another process reaches the same store (the password kept).
    pub fn as_arg(&self) -> String {
        match self {
            Url::Sqlite(p) => format!("sqlite:{}", p.display()),
            Url::Postgres(u) => u.clone(),
        }
    }
}

/// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`.
fn redact(u: &str) -> String {
    let Some((scheme, rest)) = u.split_once("://") else {
        return u.to_string();
    };
    match rest.split_once('@') {
        Some((cred, host)) if cred.contains(':') => {
            let user = cred.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        _ => u.to_string(),
    }
}

/// A value in or out of a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Real(r) => Some(*r as i64),
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(r) => Some(*r),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// An open connection, its schema up to date.
pub struct Engine {
    conn: Conn,
    url: Url,
}

/// The schema, one migration per version; each runs once, in a transaction,
/// and `gemmlab_schema` says how far a database has come. `{id}` is the
/// engine's auto-numbered key, `{real}` its 8-byte float.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE tune_records (id {id}, device TEXT NOT NULL, gemmlab TEXT NOT NULL, \
     key_id TEXT NOT NULL, phase TEXT NOT NULL, record TEXT NOT NULL, worker TEXT NOT NULL, \
     at_utc TEXT NOT NULL)",
    "CREATE INDEX tune_records_by_key ON tune_records (device, gemmlab, key_id)",
    "CREATE TABLE tune_claims (device TEXT NOT NULL, gemmlab TEXT NOT NULL, key_id TEXT NOT NULL, \
     worker TEXT NOT NULL, expires {real} NOT NULL, PRIMARY KEY (device, gemmlab, key_id))",
    "CREATE TABLE tune_jobs (id {id}, gemmlab TEXT NOT NULL, args TEXT NOT NULL, \
     created_utc TEXT NOT NULL, created_by TEXT NOT NULL)",
    "CREATE TABLE tune_jobs_done (job BIGINT NOT NULL, device TEXT NOT NULL, \
     gemmlab TEXT NOT NULL, worker TEXT NOT NULL, exit_code BIGINT NOT NULL, \
     done_utc TEXT NOT NULL, PRIMARY KEY (job, device, gemmlab))",
    "CREATE TABLE workers (worker TEXT PRIMARY KEY, host TEXT NOT NULL, device TEXT NOT NULL, \
     job BIGINT, state TEXT NOT NULL, seen {real} NOT NULL)",
    "CREATE TABLE bests (device TEXT PRIMARY KEY, db TEXT NOT NULL, updated_utc TEXT NOT NULL)",
]];

/// The schema version this gemmlab writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

impl Engine {
    /// Connects (creating an SQLite file and its folder where missing) and
    /// brings the schema up to date.
    pub fn open(url: &Url) -> Result<Engine> {
        let err = |e: String| Error::invalid(format!("store {}: {e}", url.describe()));
        let conn = match url {
            Url::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                }
                let c = rusqlite::Connection::open(path).map_err(|e| err(e.to_string()))?;
                // WAL: readers beside one writer, many processes; FULL: a commit is on disk.
                c.busy_timeout(std::time::Duration::from_secs(60))
                    .and_then(|_| c.pragma_update(None, "journal_mode", "WAL"))
                    .and_then(|_| c.pragma_update(None, "synchronous", "FULL"))
                    .map_err(|e| err(e.to_string()))?;
                Conn::Sqlite(c)
            }
            Url::Postgres(u) => {
                let c = postgres::Client::connect(u, postgres::NoTls).map_err(|e| {
                    err(format!(
                        "{e} (is the server running, and the database created?)"
                    ))
                })?;
                Conn::Postgres(Box::new(c))
            }
        };
        let mut engine = Engine {
            conn,
            url: url.clone(),
        };
        engine.migrate()?;
        Ok(engine)
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Runs `f` in one transaction: committed if it returns Ok, rolled back if not.
    /// SQLite's is taken for writing at once (BEGIN IMMEDIATE), so two processes'
    /// read-then-write transactions never deadlock.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        let begin = match self.conn {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(_) => "BEGIN",
        };
        self.batch(begin)?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            Conn::Postgres(c) => c.batch_execute(sql).map_err(|e| e.to_string()),
        };
        r.map_err(|e| self.error(sql, e))
    }

    fn error(&self, sql: &str, e: String) -> Error {
        let head: String = sql.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        Error::invalid(format!("store {}: {head} ...: {e}", self.url.describe()))
    }

    /// The engine's own clock in Unix seconds (leases are timed by it, so hosts'
    /// clocks need not agree).
    pub fn now_sql(&self) -> &'static str {
        match self.conn {
            Conn::Sqlite(_) => "((julianday('now') - 2440587.5) * 86400.0)",
            Conn::Postgres(_) => "EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION",
        }
    }

    /// Runs a statement; the number of rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => {
                let sql = sqlite_params(sql);
                let p = rusqlite::params_from_iter(params.iter().map(SqliteValue));
                c.execute(&sql, p)
                    .map(|n| n as u64)
                    .map_err(|e| e.to_string())
            }
            Conn::Postgres(c) => {
                let p = pg_params(params);
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    p.iter().map(|b| b.as_ref() as _).collect();
                c.execute(sql, &refs).map_err(|e| e.to_string())
            }
        };
        r.map_err(|e| self.error(sql, e))
    }

    /// Runs a query; its rows.
    pub fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let r = match &mut self.conn {
            Conn::Sqlite(c) => sqlite_query(c, sql, params),
            Conn::Postgres(c) => pg_query(c, sql, params),
        };
        r.map_err(|e| self.error(sql, e))
    }

    fn migrate(&mut self) -> Result<()> {
        self.batch("CREATE TABLE IF NOT EXISTS gemmlab_schema (version BIGINT NOT NULL)")?;
        let (id, real) = match self.conn {
            Conn::Sqlite(_) => ("INTEGER PRIMARY KEY AUTOINCREMENT", "DOUBLE PRECISION"),
            Conn::Postgres(_) => ("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION"),
        };
        let pg = matches!(self.conn, Conn::Postgres(_));
        self.transaction(|e| {
            if pg {
                // One migrating process at a time across hosts.
                e.batch("SELECT pg_advisory_xact_lock(8042026)")?;
            }
            let rows = e.query("SELECT MAX(version) FROM gemmlab_schema", &[])?;
            let have = rows.first().and_then(|r| r[0].int()).unwrap_or(0);
            if have > SCHEMA_VERSION {
                return Err(Error::invalid(format!(
                    "store {} has schema version {have}; this gemmlab knows up to {SCHEMA_VERSION}: use a newer gemmlab",
                    e.url.describe()
                )));
            }
            for (i, steps) in MIGRATIONS.iter().enumerate().skip(have as usize) {
                for s in steps.iter() {
                    e.batch(&s.replace("{id}", id).replace("{real}", real))?;
                }
                let v = i as i64 + 1;
                e.execute("INSERT INTO gemmlab_schema (version) VALUES ($1)", &[v.into()])?;
            }
            Ok(())
        })
    }
}

/// `$1` -> `?1`: SQLite numbers `$NAME` parameters by first appearance, `?N` by N.
fn sqlite_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

struct SqliteValue<'a>(&'a Value);

impl rusqlite::ToSql for SqliteValue<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value as V};
        Ok(ToSqlOutput::Owned(match self.0 {
            Value::Null => V::Null,
            Value::Int(i) => V::Integer(*i),
            Value::Real(r) => V::Real(*r),
            Value::Text(s) => V::Text(s.clone()),
        }))
    }
}

fn sqlite_query(
    c: &rusqlite::Connection,
    sql: &str,
    params: &[Value],
) -> std::result::Result<Vec<Vec<Value>>, String> {
    use rusqlite::types::ValueRef;
    let mut st = c.prepare(&sqlite_params(sql)).map_err(|e| e.to_string())?;
    let n = st.column_count();
    let p = rusqlite::params_from_iter(params.iter().map(SqliteValue));
    let rows = st.query_map(p, |row| {
        (0..n)
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
                })
            })
            .collect::<rusqlite::Result<Vec<Value>>>()
    });
    let rows = rows.map_err(|e| e.to_string())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| e.to_string())
}

type PgParam = Box<dyn postgres::types::ToSql + Sync>;

fn pg_params(params: &[Value]) -> Vec<PgParam> {
    (params.iter())
        .map(|v| -> PgParam {
            match v {
                Value::Null => Box::new(Option::<String>::None),
                Value::Int(i) => Box::new(*i),
                Value::Real(r) => Box::new(*r),
                Value::Text(s) => Box::new(s.clone()),
            }
        })
        .collect()
}

fn pg_query(
    c: &mut postgres::Client,
    sql: &str,
    params: &[Value],
) -> std::result::Result<Vec<Vec<Value>>, String> {
    use postgres::types::Type;
    let p = pg_params(params);
    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
        p.iter().map(|b| b.as_ref() as _).collect();
    let rows = c.query(sql, &refs).map_err(|e| e.to_string())?;
    let cell = |row: &postgres::Row, i: usize| -> std::result::Result<Value, String> {
        let t = row.columns()[i].type_().clone();
        let e = |e: postgres::Error| e.to_string();
        Ok(match t {
            Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(e)?.into(),
            Type::INT4 => (row.try_get::<_, Option<i32>>(i).map_err(e)?)
                .map(i64::from)
                .into(),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map_err(e)?.into(),
            Type::NUMERIC => {
                return Err(format!("column {i}: NUMERIC is not read; cast it"));
            }
            _ => row.try_get::<_, Option<String>>(i).map_err(e)?.into(),
        })
    };
    (rows.iter())
        .map(|row| (0..row.len()).map(|i| cell(row, i)).collect())
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The engines the store's tests run on: a fresh SQLite file, and the
    /// PostgreSQL database GEMMLAB_TEST_POSTGRES names where it is set. Device
    /// models carry the process id, so runs sharing one server never meet.
    pub(crate) fn engines(name: &str) -> Vec<Url> {
        let dir = std::env::temp_dir().join(format!("gemmlab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut out = vec![Url::Sqlite(dir.join("s.sqlite"))];
        match std::env::var("GEMMLAB_TEST_POSTGRES") {
            Ok(u) => out.extend(Url::parse(&u)),
            Err(_) => eprintln!("{name}: SQLite only (GEMMLAB_TEST_POSTGRES is not set)"),
        }
        out
    }

    #[test]
    fn urls_name_their_engine_and_hide_passwords() {
        assert_eq!(
            Url::parse("sqlite:/tmp/a"),
            Some(Url::Sqlite("/tmp/a".into()))
        );
        assert_eq!(
            Url::parse("x/store.sqlite"),
            Some(Url::Sqlite("x/store.sqlite".into()))
        );
        assert_eq!(Url::parse("gemmlab-results/tune-store"), None);
        let pg = Url::parse("postgres://me:secret@db.lab/tune").unwrap();
        assert_eq!(pg.describe(), "postgres://me:***@db.lab/tune");
        assert!(pg.as_arg().contains("secret"));
        assert_eq!(sqlite_params("a = $1 AND b < $12"), "a = ?1 AND b < ?12");
    }

    #[test]
    fn engines_migrate_once_and_roll_back_failures() {
        for url in engines("engine") {
            let mut e = Engine::open(&url).unwrap();
            drop(Engine::open(&url).unwrap());
            let v = e
                .query("SELECT COUNT(*), MAX(version) FROM gemmlab_schema", &[])
                .unwrap();
            assert_eq!(v[0], vec![Value::Int(1), Value::Int(SCHEMA_VERSION)]);
            let (a, b) = (
                format!("A {}", std::process::id()),
                format!("B {}", std::process::id()),
            );
            let put = "INSERT INTO bests (device, db, updated_utc) VALUES ($1, $2, $3)";
            let r: Result<()> = e.transaction(|e| {
                e.execute(put, &[a.as_str().into(), "{}".into(), "now".into()])?;
                Err(Error::invalid("stop"))
            });
            assert!(r.is_err());
            let held = "SELECT device, db FROM bests WHERE device = $1";
            assert!(e.query(held, &[a.as_str().into()]).unwrap().is_empty());
            e.execute(put, &[b.as_str().into(), "{}".into(), "now".into()])
                .unwrap();
            let rows = e.query(held, &[b.as_str().into()]).unwrap();
            assert_eq!(rows[0][1], Value::Text("{}".into()), "{}", url.describe());
            let now = e.now_sql();
            let t = e.query(&format!("SELECT {now}"), &[]).unwrap()[0][0]
                .real()
                .unwrap();
            assert!(t > 1.7e9, "{t}");
            e.execute("DELETE FROM bests WHERE device = $1", &[b.as_str().into()])
                .unwrap();
        }
    }
}
