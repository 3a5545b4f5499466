//! The embedded key-value backend: one redb file under the state directory,
//! every commit fsynced before it returns. Operations run on the blocking
//! pool: a runtime worker never waits on a disk.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};

use super::{BackendError, KvBackend, ManyValues, decode_counter};

const TABLE: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("kv");

type Table<'txn> = redb::Table<'txn, (&'static str, &'static str), &'static [u8]>;

/// The embedded backend: a redb file, every commit fsynced before it returns.
pub struct RedbBackend {
    db: Arc<Database>,
    repaired: bool,
}

impl RedbBackend {
    /// The durability every write commits with. A test pins this: a SIGKILL
    /// test alone cannot catch a missing fsync.
    pub const DURABILITY: Durability = Durability::Immediate;

    /// Open (or create) the database file at `path`.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        // redb runs its repair path to initialise a new file: not a repair.
        let existed = path.exists();
        let repaired = Arc::new(AtomicBool::new(false));
        let db = Database::builder()
            .set_repair_callback({
                let repaired = repaired.clone();
                move |_| repaired.store(true, Ordering::Relaxed)
            })
            .create(path)
            .with_context(|| format!("cannot open key-value database {}", path.display()))?;
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("cannot make {} private (mode 0600)", path.display()))?;
        }
        let repaired = existed && repaired.load(Ordering::Relaxed);
        if repaired {
            tracing::warn!(path = %path.display(), "the key-value database needed a full repair");
        }
        Ok(Self {
            db: Arc::new(db),
            repaired,
        })
    }

    /// Whether opening the file needed a full repair. Every commit saves
    /// the allocator state (redb's quick repair), so a crash, even a
    /// SIGKILL mid-commit, should never need one.
    pub fn was_repaired(&self) -> bool {
        self.repaired
    }

    /// The value of `key` in `bucket`, read on this thread (for tools and
    /// tests that inspect a store no host has open).
    pub fn get_blocking(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        get(&self.db, bucket, key)
    }

    /// Run `op` on the database on a blocking thread, in its turn.
    async fn run<R: Send + 'static>(
        &self,
        op: impl FnOnce(&Database) -> Result<R, BackendError> + Send + 'static,
    ) -> Result<R, BackendError> {
        let db = Arc::clone(&self.db);
        crate::blocking::run(move |_| op(&db))
            .await
            .map_err(BackendError::from_any)?
    }
}

fn get(db: &Database, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
    let txn = db.begin_read().map_err(BackendError::from_any)?;
    let table = match txn.open_table(TABLE) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(BackendError::from_any(e)),
    };
    let value = table.get((bucket, key)).map_err(BackendError::from_any)?;
    Ok(value.map(|v| v.value().to_vec()))
}

/// Run `f` in one write transaction, committed durably.
fn write<R>(
    db: &Database,
    f: impl FnOnce(&mut Table<'_>) -> Result<R, BackendError>,
) -> Result<R, BackendError> {
    let mut txn = db.begin_write().map_err(BackendError::from_any)?;
    txn.set_durability(RedbBackend::DURABILITY)
        .map_err(BackendError::from_any)?;
    txn.set_quick_repair(true);
    let out = {
        let mut table = txn.open_table(TABLE).map_err(BackendError::from_any)?;
        f(&mut table)?
    };
    txn.commit().map_err(BackendError::from_any)?;
    Ok(out)
}

#[async_trait::async_trait]
impl KvBackend for RedbBackend {
    async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let (bucket, key) = (bucket.to_string(), key.to_string());
        self.run(move |db| get(db, &bucket, &key)).await
    }

    async fn get_many(
        &self,
        bucket: &str,
        keys: &[String],
        max_bytes: usize,
    ) -> Result<ManyValues, BackendError> {
        let (bucket, keys) = (bucket.to_string(), keys.to_vec());
        self.run(move |db| {
            let txn = db.begin_read().map_err(BackendError::from_any)?;
            let table = match txn.open_table(TABLE) {
                Ok(table) => table,
                Err(redb::TableError::TableDoesNotExist(_)) => {
                    return Ok(ManyValues {
                        values: vec![None; keys.len()],
                        stopped_at: None,
                    });
                }
                Err(e) => return Err(BackendError::from_any(e)),
            };
            let mut many = ManyValues::default();
            let mut room = max_bytes;
            for key in &keys {
                let value = table
                    .get((bucket.as_str(), key.as_str()))
                    .map_err(BackendError::from_any)?;
                let Some(value) = value else {
                    many.values.push(None);
                    continue;
                };
                let bytes = value.value();
                if bytes.len() > room {
                    many.stopped_at = Some(bytes.len());
                    break;
                }
                room -= bytes.len();
                many.values.push(Some(bytes.to_vec()));
            }
            Ok(many)
        })
        .await
    }

    async fn set(&self, bucket: &str, key: &str, value: Vec<u8>) -> Result<(), BackendError> {
        let (bucket, key) = (bucket.to_string(), key.to_string());
        self.run(move |db| {
            write(db, |t| {
                t.insert((bucket.as_str(), key.as_str()), value.as_slice())
                    .map_err(BackendError::from_any)?;
                Ok(())
            })
        })
        .await
    }

    async fn delete(&self, bucket: &str, key: &str) -> Result<(), BackendError> {
        let (bucket, key) = (bucket.to_string(), key.to_string());
        self.run(move |db| {
            write(db, |t| {
                t.remove((bucket.as_str(), key.as_str()))
                    .map_err(BackendError::from_any)?;
                Ok(())
            })
        })
        .await
    }

    async fn list_keys(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, BackendError> {
        let (bucket, after) = (bucket.to_string(), after.map(str::to_string));
        self.run(move |db| {
            let txn = db.begin_read().map_err(BackendError::from_any)?;
            let table = match txn.open_table(TABLE) {
                Ok(table) => table,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(BackendError::from_any(e)),
            };
            let range = table
                .range((bucket.as_str(), after.as_deref().unwrap_or(""))..)
                .map_err(BackendError::from_any)?;
            let mut keys = Vec::new();
            for entry in range {
                let (k, _) = entry.map_err(BackendError::from_any)?;
                let (b, key) = k.value();
                if b != bucket {
                    break;
                }
                if after.as_deref() == Some(key) {
                    continue;
                }
                keys.push(key.to_string());
                if keys.len() == limit {
                    break;
                }
            }
            Ok(keys)
        })
        .await
    }

    async fn increment(&self, bucket: &str, key: &str, delta: i64) -> Result<i64, BackendError> {
        let (bucket, key) = (bucket.to_string(), key.to_string());
        self.run(move |db| {
            write(db, |t| {
                let k = (bucket.as_str(), key.as_str());
                let current = match t.get(k).map_err(BackendError::from_any)? {
                    None => 0,
                    Some(v) => decode_counter(v.value())?,
                };
                let next = current.checked_add(delta).ok_or_else(|| {
                    BackendError(format!("incrementing {current} by {delta} overflows i64"))
                })?;
                t.insert(k, next.to_string().as_bytes())
                    .map_err(BackendError::from_any)?;
                Ok(next)
            })
        })
        .await
    }

    async fn compare_and_swap(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<Vec<u8>>,
        new: Vec<u8>,
    ) -> Result<bool, BackendError> {
        let (bucket, key) = (bucket.to_string(), key.to_string());
        self.run(move |db| {
            write(db, |t| {
                let k = (bucket.as_str(), key.as_str());
                let current = t
                    .get(k)
                    .map_err(BackendError::from_any)?
                    .map(|v| v.value().to_vec());
                if current != expected {
                    return Ok(false);
                }
                t.insert(k, new.as_slice())
                    .map_err(BackendError::from_any)?;
                Ok(true)
            })
        })
        .await
    }

    async fn set_many(
        &self,
        bucket: &str,
        pairs: Vec<(String, Vec<u8>)>,
    ) -> Result<(), BackendError> {
        let bucket = bucket.to_string();
        self.run(move |db| {
            write(db, |t| {
                for (key, value) in &pairs {
                    t.insert((bucket.as_str(), key.as_str()), value.as_slice())
                        .map_err(BackendError::from_any)?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn delete_many(&self, bucket: &str, keys: Vec<String>) -> Result<(), BackendError> {
        let bucket = bucket.to_string();
        self.run(move |db| {
            write(db, |t| {
                for key in &keys {
                    t.remove((bucket.as_str(), key.as_str()))
                        .map_err(BackendError::from_any)?;
                }
                Ok(())
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_commit_is_durable() {
        assert!(matches!(RedbBackend::DURABILITY, Durability::Immediate));
    }

    #[test]
    fn the_database_file_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.redb");
        RedbBackend::open(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[tokio::test]
    async fn values_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.redb");
        RedbBackend::open(&path)
            .unwrap()
            .set("b", "k", b"v".to_vec())
            .await
            .unwrap();
        let reopened = RedbBackend::open(&path).unwrap();
        assert_eq!(
            reopened.get_blocking("b", "k").unwrap().as_deref(),
            Some(&b"v"[..])
        );
    }

    #[test]
    fn a_new_file_is_not_reported_as_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.redb");
        assert!(!RedbBackend::open(&path).unwrap().was_repaired());
        assert!(!RedbBackend::open(&path).unwrap().was_repaired());
    }
}
