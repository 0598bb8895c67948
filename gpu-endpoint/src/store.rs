//! Measured points and calibrations in SQLite (WAL). Every point is its own committed transaction, so a
//! `kill -9` mid-job loses no point that was reported. The schema is versioned with `PRAGMA user_version`
//! and upgraded by the ordered [`MIGRATIONS`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use roofline_core::Precision;
use roofline_core::wire::{CalibrationResult, DeleteResultsQuery, ResultsQuery, RooflinePoint, StoredResult};
use rusqlite::{Connection, OptionalExtension, params};

use crate::protocol::unix_now;

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "roofline.sqlite3";

/// Schema migrations; index `i` upgrades `user_version` `i` → `i + 1`.
pub const MIGRATIONS: &[&str] = &["CREATE TABLE points (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT,
        device TEXT NOT NULL,
        backend TEXT NOT NULL,
        precision TEXT NOT NULL,
        shape TEXT NOT NULL,
        hardware_key TEXT,
        point_json TEXT NOT NULL,
        predicted_json TEXT,
        created_unix_s REAL NOT NULL
    );
    CREATE INDEX points_created ON points(created_unix_s);
    CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        device TEXT NOT NULL,
        spec_key TEXT NOT NULL,
        result_json TEXT NOT NULL,
        created_unix_s REAL NOT NULL
    );"];

/// Store errors (SQLite or JSON).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A stored row did not decode.
    #[error("stored JSON did not decode: {0}")]
    Json(#[from] serde_json::Error),
    /// The database is newer than this binary.
    #[error("database schema version {0} is newer than this binary's {1}")]
    TooNew(i64, i64),
    /// The data directory could not be created.
    #[error("cannot create data directory {0}: {1}")]
    Dir(PathBuf, std::io::Error),
}

/// The store.
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// The default data directory (`$XDG_DATA_HOME/roofline` or the platform equivalent).
#[must_use]
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("roofline")
}

impl Store {
    /// Opens (creating and migrating) the database in `data_dir`.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Dir(data_dir.to_owned(), e))?;
        let path = data_dir.join(DB_FILE);
        let mut conn = Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&mut conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// Path of the database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Commits one measured point; returns its row id.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn insert_point(
        &self,
        job_id: Option<&str>,
        hardware_key: Option<&str>,
        point: &RooflinePoint,
        predicted: Option<&RooflinePoint>,
    ) -> Result<i64, StoreError> {
        let (device, backend) = point
            .measurement
            .as_ref()
            .map_or((String::new(), String::new()), |m| {
                (m.device_name.clone(), m.backend.name().to_owned())
            });
        let point_json = serde_json::to_string(point)?;
        let predicted_json = predicted.map(serde_json::to_string).transpose()?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO points (job_id, device, backend, precision, shape, hardware_key, point_json, predicted_json, created_unix_s)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                job_id,
                device,
                backend,
                point.precision.name(),
                point.shape,
                hardware_key,
                point_json,
                predicted_json,
                unix_now()
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// Commits a calibration; returns its row id.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn insert_calibration(&self, device: &str, result: &CalibrationResult) -> Result<i64, StoreError> {
        let json = serde_json::to_string(result)?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO calibrations (device, spec_key, result_json, created_unix_s) VALUES (?1, ?2, ?3, ?4)",
            params![device, result.spec.key, json, unix_now()],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// The latest calibration, if any.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn latest_calibration(&self) -> Result<Option<CalibrationResult>, StoreError> {
        let json: Option<String> = self
            .conn()
            .query_row(
                "SELECT result_json FROM calibrations ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    /// Stored points, newest first, filtered.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn results(&self, query: &ResultsQuery) -> Result<Vec<StoredResult>, StoreError> {
        let limit = i64::from(query.limit.unwrap_or(100).min(1000));
        let device = query.device.as_ref().map(|d| format!("%{}%", d.to_lowercase()));
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, job_id, device, point_json, predicted_json, created_unix_s FROM points
             WHERE (?1 IS NULL OR lower(device) LIKE ?1)
               AND (?2 IS NULL OR precision = ?2)
               AND (?3 IS NULL OR shape = ?3)
               AND (?4 IS NULL OR created_unix_s >= ?4)
             ORDER BY id DESC LIMIT ?5",
        )?;
        let rows = stmt.query_map(
            params![
                device,
                query.precision.map(Precision::name),
                query.shape,
                query.since,
                limit
            ],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, f64>(5)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (id, job_id, device, point_json, predicted_json, created_unix_s) = row?;
            out.push(StoredResult {
                id,
                job_id,
                device,
                point: serde_json::from_str(&point_json)?,
                predicted: predicted_json.map(|p| serde_json::from_str(&p)).transpose()?,
                created_unix_s,
            });
        }
        Ok(out)
    }

    /// Deletes the stored points that match every given filter (all of them with no filter; the route
    /// requires `all=true` for that). Returns how many were deleted.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn delete_results(&self, query: &DeleteResultsQuery) -> Result<u64, StoreError> {
        let device = query.device.as_ref().map(|d| format!("%{}%", d.to_lowercase()));
        let deleted = self.conn().execute(
            "DELETE FROM points
             WHERE (?1 IS NULL OR lower(device) LIKE ?1)
               AND (?2 IS NULL OR precision = ?2)
               AND (?3 IS NULL OR created_unix_s >= ?3)",
            params![device, query.precision.map(Precision::name), query.since],
        )?;
        Ok(deleted as u64)
    }

    /// Number of stored points.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn count_points(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT count(*) FROM points", [], |r| r.get(0))?)
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let latest = MIGRATIONS.len() as i64;
    if version > latest {
        return Err(StoreError::TooNew(version, latest));
    }
    for (idx, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(version).unwrap_or(0))
    {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", idx as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_versioned_and_reopening_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn();
        let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }

    fn point(device: &str, precision: roofline_core::Precision) -> RooflinePoint {
        let op = roofline_core::Operator::matmul(1, 64, 64, precision.into()).unwrap();
        let measurement = roofline_core::wire::Measurement {
            backend: roofline_core::wire::BackendKind::Cpu,
            device_name: device.into(),
            median_s: 1e-5,
            ..roofline_core::wire::Measurement::default()
        };
        let measured =
            roofline_core::measurement::MeasuredPoint::of_operator(&op, precision, "", measurement);
        RooflinePoint::measured(&measured, roofline_core::wire::Bottleneck::Memory)
    }

    #[test]
    fn deleting_results_applies_every_filter() {
        use roofline_core::Precision::{Fp16, Fp32};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for (device, precision) in [("Host CPU", Fp32), ("Host CPU", Fp16), ("NVIDIA H100", Fp32)] {
            store
                .insert_point(None, None, &point(device, precision), None)
                .unwrap();
        }
        let delete = |query: DeleteResultsQuery| store.delete_results(&query).unwrap();
        let remaining = |store: &Store| store.count_points().unwrap();
        // Nothing is newer than the far future.
        let future = DeleteResultsQuery {
            since: Some(unix_now() + 3600.0),
            ..DeleteResultsQuery::default()
        };
        assert_eq!(delete(future), 0);
        let cpu_fp32 = DeleteResultsQuery {
            device: Some("cpu".into()),
            precision: Some(Precision::Fp32),
            ..DeleteResultsQuery::default()
        };
        assert_eq!(delete(cpu_fp32), 1);
        assert_eq!(remaining(&store), 2);
        let h100 = ResultsQuery {
            device: Some("h100".into()),
            ..ResultsQuery::default()
        };
        assert_eq!(store.results(&h100).unwrap().len(), 1);
        let everything = DeleteResultsQuery {
            all: true,
            ..DeleteResultsQuery::default()
        };
        assert_eq!(delete(everything), 2);
        assert_eq!(remaining(&store), 0);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        assert!(matches!(Store::open(dir.path()), Err(StoreError::TooNew(99, _))));
    }
}
