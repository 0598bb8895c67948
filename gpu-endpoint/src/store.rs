//! Measured points and calibrations in SQLite (WAL). Every point is its own committed transaction, so a
//! `kill -9` mid-job loses no point that was reported; a point or calibration the store could not commit is
//! an error its caller reports as `not_stored`. The schema is versioned (`user_version`, [`MIGRATIONS`]); a
//! row holds core's `MeasuredPoint` and `PredictedPoint` in base units (`record`), never the wire's point.
//!
//! Listings are paged by an opaque cursor and cost the page plus one index walk per matching device (a
//! handful), whatever the number of points or series (device × precision × shape; a benchmark of new shapes
//! makes one per point): a shape's series on `(series_id, id)`, a device's points on `(device, id)` or
//! `(device, precision, id)`, merged. Creation times never decrease with the id, so `since` is an id bound.
//! Listings read on their own connection (WAL: no wait on a job's writes), stop at the limits they run under
//! (`protocol::PointLimits::run`), and skip, log and count rows that do not decode.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use roofline_core::Precision;
use roofline_core::measurement::{MeasuredPoint, PredictedPoint};
use roofline_core::wire::{
    CalibrationResult, DEFAULT_RESULTS_LIMIT, DeleteResultsQuery, MAX_RESULTS_LIMIT, ResultsPage,
    ResultsQuery, StoredResult,
};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params, params_from_iter};

use crate::protocol::{Interrupted, StopCheck, check_interruption, unix_now};

mod record;

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "roofline.sqlite3";

/// A rewrite of every row inside a migration's transaction.
pub type RowRewrite = fn(&rusqlite::Transaction<'_>) -> Result<(), StoreError>;

/// One schema upgrade: its SQL, then, where what a row holds changed, a rewrite of every row.
pub struct Migration {
    /// The statements.
    pub sql: &'static str,
    /// The rewrite of the rows, run after `sql` in the same transaction.
    pub rows: Option<RowRewrite>,
}

/// A migration of SQL alone.
const fn sql(sql: &'static str) -> Migration {
    Migration { sql, rows: None }
}

/// Schema migrations; index `i` upgrades `user_version` `i` → `i + 1`.
pub const MIGRATIONS: &[Migration] = &[
    sql("CREATE TABLE points (
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
    );"),
    // Series and their index (paged listings in time independent of the row count), and creation times that
    // never decrease with the id (older rows written before a clock stepped back take the time before it).
    sql("CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        device TEXT NOT NULL,
        precision TEXT NOT NULL,
        shape TEXT NOT NULL,
        UNIQUE (device, precision, shape)
    );
    INSERT OR IGNORE INTO series (device, precision, shape) SELECT DISTINCT device, precision, shape FROM points;
    ALTER TABLE points ADD COLUMN series_id INTEGER REFERENCES series(id);
    UPDATE points SET series_id = (
        SELECT s.id FROM series s
        WHERE s.device = points.device AND s.precision = points.precision AND s.shape = points.shape
    );
    UPDATE points SET created_unix_s = later.running FROM (
        SELECT id, max(created_unix_s) OVER (ORDER BY id) AS running FROM points
    ) AS later
    WHERE points.id = later.id AND points.created_unix_s < later.running;
    CREATE INDEX points_series ON points(series_id, id);"),
    // Listings whose cost does not grow with the number of series: a device's points (in one precision) in id
    // order, and a shape's series.
    sql("CREATE INDEX points_device ON points(device, id);
    CREATE INDEX points_device_precision ON points(device, precision, id);
    CREATE INDEX series_shape ON series(shape);"),
    // Points and predictions in base units, from the wire's seed units (µs, TFLOP/s, GB/s).
    Migration {
        sql: "",
        rows: Some(record::to_base_units),
    },
];

/// Store errors (SQLite or JSON).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed (a full disk is `database or disk is full`).
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
    /// The database opened, but cannot be written (SQLite falls back to read-only on a file it may not
    /// write): every point would be lost.
    #[error(
        "{0} cannot be written ({1}): every measured point would be lost; make it writable or choose another \
         --data-dir"
    )]
    ReadOnly(PathBuf, String),
    /// A listing's cursor is not one this store gave out.
    #[error("cursor '{0}' is not a next_cursor this server gave out")]
    BadCursor(String),
    /// A listing stopped at the limits it ran under: its time limit, or its client went away.
    #[error("the listing was stopped by its limits ({0:?})")]
    Interrupted(Interrupted),
}

impl From<Interrupted> for StoreError {
    fn from(why: Interrupted) -> Self {
        StoreError::Interrupted(why)
    }
}

/// Virtual-machine steps of SQLite between two checks of a listing's limits (tens of microseconds).
const STEPS_PER_CHECK: i32 = 1000;

/// The store: one connection for writes, one for listings (WAL lets them run at once).
pub struct Store {
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
    path: PathBuf,
}

/// The default data directory (`$XDG_DATA_HOME/roofline` or the platform equivalent).
#[must_use]
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("roofline")
}

/// Prefix of every cursor (a version, so a later encoding can tell its own apart).
const CURSOR_PREFIX: &str = "p1.";

/// The opaque cursor of the page that starts below row `id`.
fn cursor_of(id: i64) -> String {
    format!("{CURSOR_PREFIX}{id:x}")
}

/// The row id a cursor of [`cursor_of`] starts below.
fn cursor_id(cursor: &str) -> Result<i64, StoreError> {
    cursor
        .strip_prefix(CURSOR_PREFIX)
        .and_then(|hex| i64::from_str_radix(hex, 16).ok())
        .filter(|&id| id > 0)
        .ok_or_else(|| StoreError::BadCursor(cursor.chars().take(64).collect()))
}

/// Opens the database file with SQLite's usual flags and this store's settings.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// Fails unless `conn` can write: SQLite opens a file it may not write read-only without a word.
fn check_writable(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let read_only = |why: String| StoreError::ReadOnly(path.to_owned(), why);
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(read_only("SQLite opened it read-only".into()));
    }
    // A write that is rolled back: it needs the write lock and a writable file, and leaves nothing behind.
    conn.execute_batch("BEGIN IMMEDIATE; CREATE TABLE write_probe (x); ROLLBACK;")
        .map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            read_only(e.to_string())
        })
}

impl Store {
    /// Opens (creating and migrating) the database in `data_dir`, and checks that it can be written.
    ///
    /// # Errors
    /// [`StoreError`]; [`StoreError::ReadOnly`] for a database this process cannot write.
    pub fn open(data_dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Dir(data_dir.to_owned(), e))?;
        let path = data_dir.join(DB_FILE);
        let mut writer = connect(&path)?;
        check_writable(&writer, &path)?;
        writer.pragma_update(None, "journal_mode", "WAL")?;
        writer.pragma_update(None, "synchronous", "NORMAL")?;
        migrate(&mut writer)?;
        let reader = connect(&path)?;
        Ok(Store {
            writer: Mutex::new(writer),
            reader: Mutex::new(reader),
            path,
        })
    }

    /// Path of the database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Caps the database file at about `bytes` (SQLite's `max_page_count`): a write beyond it fails as a
    /// full disk would (`--max-store-mb`).
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn limit_size(&self, bytes: u64) -> Result<(), StoreError> {
        let conn = lock(&self.writer);
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = i64::try_from(bytes).unwrap_or(i64::MAX) / page_size.max(1);
        conn.pragma_update(None, "max_page_count", pages.max(1))?;
        Ok(())
    }

    /// Commits one measured point; returns its row id. Its creation time is now, or the newest stored one if
    /// the clock went back.
    ///
    /// # Errors
    /// [`StoreError`]: the point is not stored (a full disk, a file no longer writable).
    pub fn insert_point(
        &self,
        job_id: Option<&str>,
        hardware_key: Option<&str>,
        point: &MeasuredPoint,
        predicted: Option<&PredictedPoint>,
    ) -> Result<i64, StoreError> {
        let mut conn = lock(&self.writer);
        let tx = conn.transaction()?;
        let id = insert(&tx, job_id, hardware_key, point, predicted)?;
        tx.commit()?;
        Ok(id)
    }

    /// Commits many points (no job, key or prediction) in one transaction: a bulk load for `bench-store`.
    ///
    /// # Errors
    /// [`StoreError`]: none of them is stored.
    pub fn insert_points(&self, points: &[MeasuredPoint]) -> Result<(), StoreError> {
        let mut conn = lock(&self.writer);
        let tx = conn.transaction()?;
        for point in points {
            insert(&tx, None, None, point, None)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Commits a calibration; returns its row id.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn insert_calibration(&self, device: &str, result: &CalibrationResult) -> Result<i64, StoreError> {
        let json = serde_json::to_string(result)?;
        let conn = lock(&self.writer);
        conn.execute(
            "INSERT INTO calibrations (device, spec_key, result_json, created_unix_s) VALUES (?1, ?2, ?3, ?4)",
            params![device, result.spec.key, json, unix_now()],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// The latest calibration that decodes, if any (an undecodable one is logged and passed over).
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn latest_calibration(&self) -> Result<Option<CalibrationResult>, StoreError> {
        let conn = lock(&self.reader);
        let mut stmt = conn.prepare("SELECT id, result_json FROM calibrations ORDER BY id DESC")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (id, json): (i64, String) = (row.get(0)?, row.get(1)?);
            match serde_json::from_str(&json) {
                Ok(result) => return Ok(Some(result)),
                Err(e) => {
                    tracing::warn!(calibration_id = id, error = %e, "skipped an undecodable calibration")
                }
            }
        }
        Ok(None)
    }

    /// One page of stored points, newest first, filtered (`query.limit` results at most, from
    /// `query.cursor` on). Rows that do not decode are skipped, logged and counted in
    /// [`ResultsPage::skipped`]. Under `protocol::PointLimits::run` it stops within
    /// [`STEPS_PER_CHECK`] SQLite steps once those limits say so.
    ///
    /// # Errors
    /// [`StoreError::BadCursor`]; [`StoreError::Interrupted`]; [`StoreError::Sql`].
    pub fn results(&self, query: &ResultsQuery) -> Result<StoredPage, StoreError> {
        let limit = query
            .limit
            .unwrap_or(DEFAULT_RESULTS_LIMIT)
            .clamp(1, MAX_RESULTS_LIMIT) as usize;
        let below = query.cursor.as_deref().map(cursor_id).transpose()?;
        let mut conn = lock(&self.reader);
        let stop = StopCheck::current();
        conn.progress_handler(STEPS_PER_CHECK, stop.map(|s| move || s.due().is_some()))?;
        let page = page(&conn, query, below, limit);
        conn.progress_handler(0, None::<fn() -> bool>)?;
        // A step the limits interrupted is their reason, not a database error.
        page.or_else(|e| {
            check_interruption::<StoreError>()?;
            Err(e)
        })
    }

    /// Deletes the stored points that match every given filter (all of them with no filter; the route
    /// requires `all=true` for that). Returns how many were deleted.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn delete_results(&self, query: &DeleteResultsQuery) -> Result<u64, StoreError> {
        let mut conn = lock(&self.writer);
        let tx = conn.transaction()?;
        let Some((_, lowest)) = id_bounds(&tx, None, query.since)? else {
            return Ok(0);
        };
        let deleted = if query.device.is_none() && query.precision.is_none() {
            tx.execute("DELETE FROM points WHERE id >= ?1", [lowest])?
        } else {
            tx.execute(
                DELETE_MATCHING,
                params![
                    lowest,
                    device_pattern(query.device.as_deref()),
                    query.precision.map(Precision::name)
                ],
            )?
        };
        tx.commit()?;
        Ok(deleted as u64)
    }

    /// Number of stored points.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn count_points(&self) -> Result<i64, StoreError> {
        Ok(lock(&self.reader).query_row("SELECT count(*) FROM points", [], |r| r.get(0))?)
    }
}

/// Inserts one point (and its series, if new) inside `tx`; returns its row id.
fn insert(
    tx: &rusqlite::Transaction<'_>,
    job_id: Option<&str>,
    hardware_key: Option<&str>,
    point: &MeasuredPoint,
    predicted: Option<&PredictedPoint>,
) -> Result<i64, StoreError> {
    let (device, backend) = (&point.measurement.device_name, point.measurement.backend.name());
    let shape = point.op.shape_label();
    let point_json = record::point_json(point)?;
    let predicted_json = predicted.map(record::prediction_json).transpose()?;
    tx.prepare_cached("INSERT OR IGNORE INTO series (device, precision, shape) VALUES (?1, ?2, ?3)")?
        .execute(params![device, point.precision.name(), shape])?;
    tx.prepare_cached(
        "INSERT INTO points (job_id, device, backend, precision, shape, hardware_key, point_json,
                             predicted_json, created_unix_s, series_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,
                 max(?9, coalesce((SELECT max(created_unix_s) FROM points), ?9)),
                 (SELECT id FROM series WHERE device = ?2 AND precision = ?4 AND shape = ?5))",
    )?
    .execute(params![
        job_id,
        device,
        backend,
        point.precision.name(),
        shape,
        hardware_key,
        point_json,
        predicted_json,
        unix_now()
    ])?;
    Ok(tx.last_insert_rowid())
}

fn lock(conn: &Mutex<Connection>) -> std::sync::MutexGuard<'_, Connection> {
    conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The rows a listing may return: ids below `below` (a cursor) and at least the first id stored at or after
/// `since`, as (exclusive upper, inclusive lower); `None` when nothing was stored since then.
fn id_bounds(
    conn: &Connection,
    below: Option<i64>,
    since: Option<f64>,
) -> Result<Option<(i64, i64)>, StoreError> {
    let lowest = match since {
        None => 0,
        // Creation times never decrease with the id: the first row at or after `since` bounds them all.
        Some(since) => match conn
            .query_row(
                "SELECT id FROM points WHERE created_unix_s >= ?1 ORDER BY created_unix_s, id LIMIT 1",
                [since],
                |r| r.get(0),
            )
            .optional()?
        {
            Some(id) => id,
            None => return Ok(None),
        },
    };
    Ok(Some((below.unwrap_or(i64::MAX), lowest)))
}

/// One page of stored points: the measurements and their predictions in base units, as the wire's page holds
/// them.
pub type StoredPage = ResultsPage<MeasuredPoint, PredictedPoint>;
/// One stored point and its prediction, in base units.
pub type StoredPoint = StoredResult<MeasuredPoint, PredictedPoint>;

/// One page of a listing (see [`Store::results`]) read on `conn`.
fn page(
    conn: &Connection,
    query: &ResultsQuery,
    below: Option<i64>,
    limit: usize,
) -> Result<StoredPage, StoreError> {
    let Some(bounds) = id_bounds(conn, below, query.since)? else {
        return Ok(StoredPage::default());
    };
    // One more than the page: whether there is a next page.
    let mut ids = match walks(conn, query)? {
        None => newest_ids(conn, bounds, limit + 1)?,
        Some(walks) => merged_newest_ids(conn, &walks, bounds, limit + 1)?,
    };
    let next_cursor = (ids.len() > limit).then(|| cursor_of(ids[limit - 1]));
    ids.truncate(limit);
    let (results, skipped) = decode_rows(conn, &ids)?;
    Ok(ResultsPage {
        results,
        next_cursor,
        skipped,
    })
}

/// The `LIKE` pattern of a device filter: a case-insensitive substring.
fn device_pattern(device: Option<&str>) -> Option<String> {
    device.map(|d| format!("%{}%", d.to_lowercase()))
}

/// One index walk of a filtered listing, newest id first.
enum Walk {
    /// The points of one series, on `(series_id, id)`.
    Series(i64),
    /// The points of one device, on `(device, id)`.
    Device(String),
    /// The points of one device in one precision, on `(device, precision, id)`.
    DevicePrecision(String, &'static str),
}

impl Walk {
    /// The walk's statement: `?1` its key, `?2` and `?3` the id bounds, `?4` the precision.
    fn sql(&self) -> &'static str {
        match self {
            Walk::Series(_) => {
                "SELECT id FROM points WHERE series_id = ?1 AND id < ?2 AND id >= ?3 ORDER BY id DESC"
            }
            Walk::Device(_) => {
                "SELECT id FROM points WHERE device = ?1 AND id < ?2 AND id >= ?3 ORDER BY id DESC"
            }
            Walk::DevicePrecision(..) => {
                "SELECT id FROM points WHERE device = ?1 AND precision = ?4 AND id < ?2 AND id >= ?3
                 ORDER BY id DESC"
            }
        }
    }

    /// Starts the walk on `stmt` (prepared from [`Walk::sql`]) within `(below, lowest)`.
    fn start<'s>(
        &self,
        stmt: &'s mut rusqlite::Statement<'_>,
        (below, lowest): (i64, i64),
    ) -> rusqlite::Result<rusqlite::Rows<'s>> {
        match self {
            Walk::Series(id) => stmt.query(params![id, below, lowest]),
            Walk::Device(device) => stmt.query(params![device, below, lowest]),
            Walk::DevicePrecision(device, precision) => stmt.query(params![device, below, lowest, precision]),
        }
    }
}

/// Deletes the points from id `?1` on of the series on a device `LIKE ?2` and in precision `?3` (each when
/// given): one statement, a scan of the series table, then their points from the `(series_id, id)` index.
const DELETE_MATCHING: &str = "DELETE FROM points WHERE id >= ?1 AND series_id IN (
        SELECT id FROM series WHERE (?2 IS NULL OR lower(device) LIKE ?2) AND (?3 IS NULL OR precision = ?3)
    )";

/// The series of shape `?1`, in precision `?2` and on a device `LIKE ?3` when given.
const SHAPE_SERIES: &str = "SELECT id FROM series
    WHERE shape = ?1 AND (?2 IS NULL OR precision = ?2) AND (?3 IS NULL OR lower(device) LIKE ?3)";

/// The distinct devices of the series whose lowered name is `LIKE ?1` (all when it is null), one seek each.
const DISTINCT_DEVICES: &str = "WITH RECURSIVE distinct_devices(name) AS (
        SELECT min(device) FROM series
        UNION ALL
        SELECT (SELECT min(device) FROM series WHERE device > name) FROM distinct_devices
        WHERE name IS NOT NULL
    )
    SELECT name FROM distinct_devices WHERE name IS NOT NULL AND (?1 IS NULL OR lower(name) LIKE ?1)";

/// The walks of a listing's filters, or `None` without a filter (the newest rows of the whole table). With a
/// shape: its series (on the `series(shape)` index, one per device and precision at most); else one walk per
/// matching device ([`devices`]), in the precision when one is asked for.
fn walks(conn: &Connection, query: &ResultsQuery) -> Result<Option<Vec<Walk>>, StoreError> {
    let device = device_pattern(query.device.as_deref());
    let precision = query.precision.map(Precision::name);
    if let Some(shape) = &query.shape {
        let mut stmt = conn.prepare_cached(SHAPE_SERIES)?;
        let series = stmt
            .query_map(params![shape, precision, device], |r| r.get(0).map(Walk::Series))?
            .collect::<Result<_, _>>()?;
        return Ok(Some(series));
    }
    if device.is_none() && precision.is_none() {
        return Ok(None);
    }
    let walks = devices(conn, device.as_deref())?
        .into_iter()
        .map(|device| match precision {
            Some(precision) => Walk::DevicePrecision(device, precision),
            None => Walk::Device(device),
        })
        .collect();
    Ok(Some(walks))
}

/// The distinct devices of the series whose lowered name is `LIKE pattern` (all without one): a skip scan of
/// the series' `(device, precision, shape)` index, one seek per distinct device, however many series each has.
fn devices(conn: &Connection, pattern: Option<&str>) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(DISTINCT_DEVICES)?;
    let devices = stmt
        .query_map([pattern], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(devices)
}

/// The newest `n` ids in `bounds`, walking the table backwards.
fn newest_ids(conn: &Connection, (below, lowest): (i64, i64), n: usize) -> Result<Vec<i64>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT id FROM points WHERE id < ?1 AND id >= ?2 ORDER BY id DESC LIMIT ?3")?;
    let ids = stmt
        .query_map(params![below, lowest, n as i64], |r| r.get(0))?
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(ids)
}

/// The newest `n` ids in `bounds` over `walks`, merged: a page costs about `n` + the number of walks index
/// steps, however many rows are stored.
fn merged_newest_ids(
    conn: &Connection,
    walks: &[Walk],
    bounds: (i64, i64),
    n: usize,
) -> Result<Vec<i64>, StoreError> {
    let mut statements = walks
        .iter()
        .map(|walk| conn.prepare(walk.sql()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut walks = statements
        .iter_mut()
        .zip(walks)
        .map(|(stmt, walk)| walk.start(stmt, bounds))
        .collect::<Result<Vec<_>, _>>()?;
    // The head of every walk, largest id first.
    let mut heads = BinaryHeap::new();
    for (walk_idx, walk) in walks.iter_mut().enumerate() {
        if let Some(row) = walk.next()? {
            heads.push((row.get::<_, i64>(0)?, walk_idx));
        }
    }
    let mut ids = Vec::with_capacity(n);
    while ids.len() < n {
        let Some((id, walk_idx)) = heads.pop() else {
            break;
        };
        ids.push(id);
        if let Some(row) = walks[walk_idx].next()? {
            heads.push((row.get::<_, i64>(0)?, walk_idx));
        }
    }
    Ok(ids)
}

/// The stored results of `ids` (in that order) and how many rows did not decode (logged with their ids).
fn decode_rows(conn: &Connection, ids: &[i64]) -> Result<(Vec<StoredPoint>, u32), StoreError> {
    if ids.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let placeholders = vec!["?"; ids.len()].join(",");
    let mut stmt = conn.prepare(&format!(
        "SELECT id, job_id, device, point_json, predicted_json, created_unix_s FROM points
         WHERE id IN ({placeholders}) ORDER BY id DESC"
    ))?;
    let mut rows = stmt.query(params_from_iter(ids))?;
    let (mut results, mut skipped) = (Vec::with_capacity(ids.len()), 0u32);
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let decoded = (|| -> Result<StoredPoint, StoreError> {
            Ok(StoredResult {
                id,
                job_id: row.get(1)?,
                device: row.get(2)?,
                point: record::point_of(&row.get::<_, String>(3)?)?,
                predicted: row
                    .get::<_, Option<String>>(4)?
                    .map(|p| record::prediction_of(&p))
                    .transpose()?,
                created_unix_s: row.get(5)?,
            })
        })();
        match decoded {
            Ok(result) => results.push(result),
            Err(e) => {
                tracing::warn!(point_id = id, error = %e, "skipped a stored point that does not decode");
                skipped += 1;
            }
        }
    }
    Ok((results, skipped))
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let latest = MIGRATIONS.len() as i64;
    if version > latest {
        return Err(StoreError::TooNew(version, latest));
    }
    for (idx, migration) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(version).unwrap_or(0))
    {
        let tx = conn.transaction()?;
        tx.execute_batch(migration.sql)?;
        if let Some(rows) = migration.rows {
            rows(&tx)?;
        }
        tx.pragma_update(None, "user_version", idx as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
