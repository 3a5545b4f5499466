//! Key-value: `wasi:keyvalue@0.2.0-draft2` over a durable backend.
//!
//! One database file under the state directory serves every session of the
//! host. A tool may open only the buckets named in its grant; a call whose
//! effect is `read` gets handles that refuse every write. Values and the
//! number of operations per call are capped.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use wasmtime::component::{HasData, Resource, ResourceTable};

use crate::bindings::wasi::keyvalue::{atomics, batch, store};
use crate::usage::{Charge, HostBudget, Meter};

/// The largest value a tool may store, in bytes.
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// The most key-value operations one call may make.
pub const MAX_OPS_PER_CALL: u32 = 10_000;
/// Keys returned by one `list-keys` page.
pub const LIST_PAGE: usize = 1000;

/// A storage failure, surfaced to the guest as `error::other`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(String);

impl BackendError {
    fn from_any(e: impl std::fmt::Display) -> Self {
        Self(e.to_string())
    }
}

/// Where buckets live. Implement it to put the store behind a network service.
pub trait KvBackend: Send + Sync + 'static {
    /// The value of `key` in `bucket`.
    fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError>;
    /// Set `key` in `bucket`, durably, before returning.
    fn set(&self, bucket: &str, key: &str, value: &[u8]) -> Result<(), BackendError>;
    /// Remove `key`; absent keys are not an error.
    fn delete(&self, bucket: &str, key: &str) -> Result<(), BackendError>;
    /// Up to `limit` keys of `bucket` in order, starting after `after`.
    fn list_keys(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, BackendError>;
    /// Add `delta` to the i64 at `key` (absent = 0) atomically; the new value.
    fn increment(&self, bucket: &str, key: &str, delta: i64) -> Result<i64, BackendError>;
    /// Set `key` to `new` only if it still holds `expected`; whether it did.
    fn compare_and_swap(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, BackendError>;
    /// Set every pair in one atomic, durable commit.
    fn set_many(&self, bucket: &str, pairs: &[(String, Vec<u8>)]) -> Result<(), BackendError>;
    /// Remove every key in one atomic, durable commit.
    fn delete_many(&self, bucket: &str, keys: &[String]) -> Result<(), BackendError>;
}

const TABLE: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("kv");

/// The embedded backend: a redb file, every commit fsynced before it returns.
pub struct RedbBackend {
    db: Database,
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
        Ok(Self { db, repaired })
    }

    /// Whether opening the file needed a full repair. Every commit saves
    /// the allocator state (redb's quick repair), so a crash, even a
    /// SIGKILL mid-commit, should never need one.
    pub fn was_repaired(&self) -> bool {
        self.repaired
    }

    fn write<R>(
        &self,
        f: impl FnOnce(&mut redb::Table<(&str, &str), &[u8]>) -> Result<R, BackendError>,
    ) -> Result<R, BackendError> {
        let mut txn = self.db.begin_write().map_err(BackendError::from_any)?;
        txn.set_durability(Self::DURABILITY)
            .map_err(BackendError::from_any)?;
        txn.set_quick_repair(true);
        let out = {
            let mut table = txn.open_table(TABLE).map_err(BackendError::from_any)?;
            f(&mut table)?
        };
        txn.commit().map_err(BackendError::from_any)?;
        Ok(out)
    }
}

impl KvBackend for RedbBackend {
    fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let txn = self.db.begin_read().map_err(BackendError::from_any)?;
        let table = match txn.open_table(TABLE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(BackendError::from_any(e)),
        };
        let value = table.get((bucket, key)).map_err(BackendError::from_any)?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    fn set(&self, bucket: &str, key: &str, value: &[u8]) -> Result<(), BackendError> {
        self.write(|t| {
            t.insert((bucket, key), value)
                .map_err(BackendError::from_any)?;
            Ok(())
        })
    }

    fn delete(&self, bucket: &str, key: &str) -> Result<(), BackendError> {
        self.write(|t| {
            t.remove((bucket, key)).map_err(BackendError::from_any)?;
            Ok(())
        })
    }

    fn list_keys(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, BackendError> {
        let txn = self.db.begin_read().map_err(BackendError::from_any)?;
        let table = match txn.open_table(TABLE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(BackendError::from_any(e)),
        };
        let range = table
            .range((bucket, after.unwrap_or(""))..)
            .map_err(BackendError::from_any)?;
        let mut keys = Vec::new();
        for entry in range {
            let (k, _) = entry.map_err(BackendError::from_any)?;
            let (b, key) = k.value();
            if b != bucket {
                break;
            }
            if after == Some(key) {
                continue;
            }
            keys.push(key.to_string());
            if keys.len() == limit {
                break;
            }
        }
        Ok(keys)
    }

    fn increment(&self, bucket: &str, key: &str, delta: i64) -> Result<i64, BackendError> {
        self.write(|t| {
            let current = match t.get((bucket, key)).map_err(BackendError::from_any)? {
                None => 0,
                Some(v) => decode_counter(v.value())?,
            };
            let next = current.checked_add(delta).ok_or_else(|| {
                BackendError(format!("incrementing {current} by {delta} overflows i64"))
            })?;
            t.insert((bucket, key), next.to_string().as_bytes())
                .map_err(BackendError::from_any)?;
            Ok(next)
        })
    }

    fn compare_and_swap(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, BackendError> {
        self.write(|t| {
            let current = t
                .get((bucket, key))
                .map_err(BackendError::from_any)?
                .map(|v| v.value().to_vec());
            if current.as_deref() != expected {
                return Ok(false);
            }
            t.insert((bucket, key), new)
                .map_err(BackendError::from_any)?;
            Ok(true)
        })
    }

    fn set_many(&self, bucket: &str, pairs: &[(String, Vec<u8>)]) -> Result<(), BackendError> {
        self.write(|t| {
            for (key, value) in pairs {
                t.insert((bucket, key.as_str()), value.as_slice())
                    .map_err(BackendError::from_any)?;
            }
            Ok(())
        })
    }

    fn delete_many(&self, bucket: &str, keys: &[String]) -> Result<(), BackendError> {
        self.write(|t| {
            for key in keys {
                t.remove((bucket, key.as_str()))
                    .map_err(BackendError::from_any)?;
            }
            Ok(())
        })
    }
}

/// Counters are stored as decimal text so every language's SDK can read them.
fn decode_counter(bytes: &[u8]) -> Result<i64, BackendError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| BackendError("the value is not an integer counter".to_string()))
}

/// An open bucket, as the guest holds it.
pub struct Bucket {
    name: String,
}

/// A compare-and-swap handle: a key and the value seen when it was taken,
/// held against the call's host memory budget.
pub struct Cas {
    bucket: String,
    key: String,
    seen: Option<Vec<u8>>,
    _charge: Charge,
}

impl Cas {
    /// A handle on `key` that saw `seen`, charged to `meter` first.
    fn charged(
        meter: &Arc<Meter>,
        bucket: String,
        key: String,
        seen: Option<Vec<u8>>,
    ) -> KvResult<Self> {
        let bytes = CAS_OVERHEAD + bucket.len() + key.len() + seen.as_ref().map_or(0, Vec::len);
        let charge = meter
            .charge(bytes, "a compare-and-swap handle")
            .map_err(other)?;
        Ok(Self {
            bucket,
            key,
            seen,
            _charge: charge,
        })
    }
}

/// What a compare-and-swap handle costs the host besides its strings.
const CAS_OVERHEAD: usize = 128;
/// What each entry of a `get-many` answer costs the host besides its bytes.
const BATCH_ENTRY_OVERHEAD: usize = 64;

/// What a grant of `buckets` gives a component importing `interface` of
/// `wasi:keyvalue`, as `inspect` shows it; `None` for another interface.
pub fn import_status(buckets: &[String], interface: &str) -> Option<String> {
    interface.starts_with("wasi:keyvalue/").then(|| {
        if buckets.is_empty() {
            "NOT GRANTED (no kv buckets)".into()
        } else {
            format!("granted: buckets {}", buckets.join(", "))
        }
    })
}

/// The per-instance key-value context.
pub struct KvCtx {
    backend: Option<Arc<dyn KvBackend>>,
    buckets: Vec<String>,
    read_only: bool,
    meter: Arc<Meter>,
}

impl KvCtx {
    /// A context that may open `buckets`; `read_only` refuses every write.
    pub fn new(backend: Arc<dyn KvBackend>, buckets: Vec<String>, read_only: bool) -> Self {
        Self {
            backend: Some(backend),
            buckets,
            read_only,
            meter: Meter::new(HostBudget::default()),
        }
    }

    /// A context that refuses every bucket.
    pub fn deny_all() -> Self {
        Self {
            backend: None,
            buckets: Vec::new(),
            read_only: true,
            meter: Meter::new(HostBudget::default()),
        }
    }

    /// The same context counting operations, bytes and host memory in
    /// the call's `meter`, shared by every attempt of one call, so a retry
    /// does not reset the caps.
    pub fn with_meter(mut self, meter: Arc<Meter>) -> Self {
        self.meter = meter;
        self
    }
}

/// The view the `wasi:keyvalue` host functions work on.
pub struct KvView<'a> {
    /// The call's key-value context.
    pub ctx: &'a mut KvCtx,
    /// The store's resource table.
    pub table: &'a mut ResourceTable,
}

/// [`HasData`] marker for linking `wasi:keyvalue` with a [`KvView`].
pub struct WasiKeyValue;

impl HasData for WasiKeyValue {
    type Data<'a> = KvView<'a>;
}

/// Link `wasi:keyvalue/{store,atomics,batch}`.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> KvView<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, WasiKeyValue>(linker, get)?;
    atomics::add_to_linker::<T, WasiKeyValue>(linker, get)?;
    batch::add_to_linker::<T, WasiKeyValue>(linker, get)?;
    Ok(())
}

type KvResult<T> = Result<T, store::Error>;

fn other(e: impl std::fmt::Display) -> store::Error {
    store::Error::Other(e.to_string())
}

impl KvView<'_> {
    fn backend(&mut self) -> KvResult<Arc<dyn KvBackend>> {
        self.charge(1)
    }

    /// Count `ops` operations (a batch counts each key) against the cap.
    fn charge(&mut self, ops: usize) -> KvResult<Arc<dyn KvBackend>> {
        let ops = u32::try_from(ops).unwrap_or(u32::MAX);
        if self.ctx.meter.kv_op(ops) > MAX_OPS_PER_CALL {
            return Err(other(format!(
                "key-value operation limit reached: at most {MAX_OPS_PER_CALL} per call"
            )));
        }
        self.ctx.backend.clone().ok_or(store::Error::AccessDenied)
    }

    fn bucket_name(&self, bucket: &Resource<Bucket>) -> KvResult<String> {
        Ok(self.table.get(bucket).map_err(other)?.name.clone())
    }

    fn writable(&mut self, bucket: &Resource<Bucket>) -> KvResult<(Arc<dyn KvBackend>, String)> {
        if self.ctx.read_only {
            return Err(store::Error::AccessDenied);
        }
        let name = self.bucket_name(bucket)?;
        Ok((self.backend()?, name))
    }

    fn readable(&mut self, bucket: &Resource<Bucket>) -> KvResult<(Arc<dyn KvBackend>, String)> {
        let name = self.bucket_name(bucket)?;
        Ok((self.backend()?, name))
    }

    /// Like `writable`/`readable` for a batch of `keys` keys.
    fn batch(
        &mut self,
        bucket: &Resource<Bucket>,
        keys: usize,
        write: bool,
    ) -> KvResult<(Arc<dyn KvBackend>, String)> {
        if write && self.ctx.read_only {
            return Err(store::Error::AccessDenied);
        }
        let name = self.bucket_name(bucket)?;
        Ok((self.charge(keys)?, name))
    }
}

fn check_key(key: &str) -> KvResult<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(other(format!(
            "key of {} bytes is over the {MAX_KEY_BYTES}-byte limit",
            key.len()
        )));
    }
    Ok(())
}

fn check_value(value: &[u8]) -> KvResult<()> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(other(format!(
            "value of {} bytes is over the {MAX_VALUE_BYTES}-byte limit",
            value.len()
        )));
    }
    Ok(())
}

/// Run a backend operation on the blocking pool: commits fsync, and a
/// runtime worker must never wait on a disk.
async fn blocking<R: Send + 'static>(
    backend: Arc<dyn KvBackend>,
    op: impl FnOnce(&dyn KvBackend) -> Result<R, BackendError> + Send + 'static,
) -> KvResult<R> {
    tokio::task::spawn_blocking(move || op(&*backend))
        .await
        .map_err(other)?
        .map_err(other)
}

impl store::Host for KvView<'_> {
    async fn open(&mut self, identifier: String) -> KvResult<Resource<Bucket>> {
        if self.ctx.backend.is_none() || !self.ctx.buckets.contains(&identifier) {
            return Err(store::Error::AccessDenied);
        }
        self.table.push(Bucket { name: identifier }).map_err(other)
    }
}

impl store::HostBucket for KvView<'_> {
    async fn get(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<Option<Vec<u8>>> {
        check_key(&key)?;
        let (backend, name) = self.readable(&bucket)?;
        let value = blocking(backend, move |b| b.get(&name, &key)).await?;
        self.ctx.meter.kv_read(value.as_ref().map_or(0, Vec::len));
        Ok(value)
    }

    async fn set(&mut self, bucket: Resource<Bucket>, key: String, value: Vec<u8>) -> KvResult<()> {
        check_key(&key)?;
        check_value(&value)?;
        let (backend, name) = self.writable(&bucket)?;
        self.ctx.meter.kv_written(value.len());
        blocking(backend, move |b| b.set(&name, &key, &value)).await
    }

    async fn delete(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<()> {
        check_key(&key)?;
        let (backend, name) = self.writable(&bucket)?;
        blocking(backend, move |b| b.delete(&name, &key)).await
    }

    async fn exists(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<bool> {
        check_key(&key)?;
        let (backend, name) = self.readable(&bucket)?;
        blocking(backend, move |b| Ok(b.get(&name, &key)?.is_some())).await
    }

    async fn list_keys(
        &mut self,
        bucket: Resource<Bucket>,
        cursor: Option<String>,
    ) -> KvResult<store::KeyResponse> {
        let (backend, name) = self.readable(&bucket)?;
        let keys = blocking(backend, move |b| {
            b.list_keys(&name, cursor.as_deref(), LIST_PAGE)
        })
        .await?;
        let cursor = (keys.len() == LIST_PAGE)
            .then(|| keys.last().cloned())
            .flatten();
        Ok(store::KeyResponse { keys, cursor })
    }

    async fn drop(&mut self, bucket: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

impl atomics::HostCas for KvView<'_> {
    async fn new(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<Resource<Cas>> {
        check_key(&key)?;
        let (backend, name) = self.readable(&bucket)?;
        let (bucket, key, seen) = blocking(backend, move |b| {
            let seen = b.get(&name, &key)?;
            Ok((name, key, seen))
        })
        .await?;
        self.ctx.meter.kv_read(seen.as_ref().map_or(0, Vec::len));
        let cas = Cas::charged(&self.ctx.meter, bucket, key, seen)?;
        self.table.push(cas).map_err(other)
    }

    async fn current(&mut self, cas: Resource<Cas>) -> KvResult<Option<Vec<u8>>> {
        Ok(self.table.get(&cas).map_err(other)?.seen.clone())
    }

    async fn drop(&mut self, cas: Resource<Cas>) -> wasmtime::Result<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

impl atomics::Host for KvView<'_> {
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> KvResult<i64> {
        check_key(&key)?;
        let (backend, name) = self.writable(&bucket)?;
        blocking(backend, move |b| b.increment(&name, &key, delta)).await
    }

    async fn swap(&mut self, cas: Resource<Cas>, value: Vec<u8>) -> Result<(), atomics::CasError> {
        let store_error = atomics::CasError::StoreError;
        check_value(&value).map_err(store_error)?;
        if self.ctx.read_only {
            return Err(store_error(store::Error::AccessDenied));
        }
        let backend = self.backend().map_err(store_error)?;
        let handle = self.table.delete(cas).map_err(|e| store_error(other(e)))?;
        self.ctx.meter.kv_written(value.len());
        let Cas {
            bucket,
            key,
            seen,
            _charge: charge,
        } = handle;
        drop(charge);
        let (bucket, key, now) = blocking(backend, move |b| {
            if b.compare_and_swap(&bucket, &key, seen.as_deref(), &value)? {
                return Ok((bucket, key, None));
            }
            let now = b.get(&bucket, &key)?;
            Ok((bucket, key, Some(now)))
        })
        .await
        .map_err(store_error)?;
        let Some(seen) = now else {
            return Ok(());
        };
        self.ctx.meter.kv_read(seen.as_ref().map_or(0, Vec::len));
        let retry = Cas::charged(&self.ctx.meter, bucket, key, seen).map_err(store_error)?;
        let retry = self.table.push(retry).map_err(|e| store_error(other(e)))?;
        Err(atomics::CasError::CasFailed(retry))
    }
}

impl batch::Host for KvView<'_> {
    async fn get_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> KvResult<Vec<Option<(String, Vec<u8>)>>> {
        for key in &keys {
            check_key(key)?;
        }
        let (backend, name) = self.batch(&bucket, keys.len(), false)?;
        let meter = Arc::clone(&self.ctx.meter);
        // Each value is charged as it is read, so the answer never holds
        // more than the budget (a key asked for twice is charged twice).
        let (values, charges) = blocking(backend, move |b| {
            let mut values = Vec::with_capacity(keys.len());
            let mut charges = Vec::with_capacity(keys.len());
            for key in keys {
                let value = b.get(&name, &key)?;
                let bytes = BATCH_ENTRY_OVERHEAD + key.len() + value.as_ref().map_or(0, Vec::len);
                charges.push(
                    meter
                        .charge(bytes, "a get-many answer")
                        .map_err(BackendError::from_any)?,
                );
                values.push(value.map(|v| (key, v)));
            }
            Ok((values, charges))
        })
        .await?;
        let read: usize = values.iter().flatten().map(|(_, v)| v.len()).sum();
        self.ctx.meter.kv_read(read);
        drop(charges);
        Ok(values)
    }

    async fn set_many(
        &mut self,
        bucket: Resource<Bucket>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> KvResult<()> {
        for (key, value) in &key_values {
            check_key(key)?;
            check_value(value)?;
        }
        let (backend, name) = self.batch(&bucket, key_values.len(), true)?;
        self.ctx
            .meter
            .kv_written(key_values.iter().map(|(_, v)| v.len()).sum());
        blocking(backend, move |b| b.set_many(&name, &key_values)).await
    }

    async fn delete_many(&mut self, bucket: Resource<Bucket>, keys: Vec<String>) -> KvResult<()> {
        for key in &keys {
            check_key(key)?;
        }
        let (backend, name) = self.batch(&bucket, keys.len(), true)?;
        blocking(backend, move |b| b.delete_many(&name, &keys)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::{Host as _, HostBucket as _};

    fn backend() -> (tempfile::TempDir, Arc<dyn KvBackend>) {
        let dir = tempfile::tempdir().unwrap();
        let backend = RedbBackend::open(&dir.path().join("kv.redb")).unwrap();
        (dir, Arc::new(backend))
    }

    #[test]
    fn every_commit_is_durable() {
        assert!(matches!(RedbBackend::DURABILITY, Durability::Immediate));
    }

    #[test]
    fn backend_round_trips_and_lists_per_bucket() {
        let (_dir, kv) = backend();
        kv.set("a", "k1", b"v1").unwrap();
        kv.set("a", "k2", b"v2").unwrap();
        kv.set("b", "k1", b"other").unwrap();
        assert_eq!(kv.get("a", "k1").unwrap().as_deref(), Some(&b"v1"[..]));
        assert_eq!(kv.list_keys("a", None, 10).unwrap(), ["k1", "k2"]);
        assert_eq!(kv.list_keys("a", Some("k1"), 10).unwrap(), ["k2"]);
        assert_eq!(kv.increment("a", "n", 5).unwrap(), 5);
        assert_eq!(kv.increment("a", "n", -2).unwrap(), 3);
        assert!(kv.increment("a", "k1", 1).is_err());
        assert!(!kv.compare_and_swap("a", "k1", Some(b"nope"), b"x").unwrap());
        assert!(kv.compare_and_swap("a", "k1", Some(b"v1"), b"x").unwrap());
        kv.delete("a", "k1").unwrap();
        assert_eq!(kv.get("a", "k1").unwrap(), None);
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

    #[test]
    fn values_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.redb");
        RedbBackend::open(&path)
            .unwrap()
            .set("b", "k", b"v")
            .unwrap();
        let reopened = RedbBackend::open(&path).unwrap();
        assert_eq!(reopened.get("b", "k").unwrap().as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn a_new_file_is_not_reported_as_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.redb");
        assert!(!RedbBackend::open(&path).unwrap().was_repaired());
        assert!(!RedbBackend::open(&path).unwrap().was_repaired());
    }

    #[tokio::test]
    async fn only_granted_buckets_open() {
        let (_dir, kv) = backend();
        let mut ctx = KvCtx::new(kv, vec!["allowed".into()], false);
        let mut table = ResourceTable::new();
        let mut view = KvView {
            ctx: &mut ctx,
            table: &mut table,
        };
        assert!(view.open("allowed".into()).await.is_ok());
        assert!(matches!(
            view.open("other".into()).await,
            Err(store::Error::AccessDenied)
        ));
        let mut denied = KvCtx::deny_all();
        let mut view = KvView {
            ctx: &mut denied,
            table: &mut table,
        };
        assert!(matches!(
            view.open("allowed".into()).await,
            Err(store::Error::AccessDenied)
        ));
    }

    #[tokio::test]
    async fn read_only_handles_refuse_writes_but_read() {
        let (_dir, kv) = backend();
        kv.set("b", "k", b"v").unwrap();
        let mut ctx = KvCtx::new(kv.clone(), vec!["b".into()], true);
        let mut table = ResourceTable::new();
        let mut view = KvView {
            ctx: &mut ctx,
            table: &mut table,
        };
        let bucket = view.open("b".into()).await.unwrap();
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        assert_eq!(
            view.get(again, "k".into()).await.unwrap().as_deref(),
            Some(&b"v"[..])
        );
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        assert!(matches!(
            view.set(again, "k".into(), b"x".to_vec()).await,
            Err(store::Error::AccessDenied)
        ));
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        assert!(matches!(
            atomics::Host::increment(&mut view, again, "n".into(), 1).await,
            Err(store::Error::AccessDenied)
        ));
        assert_eq!(kv.get("b", "k").unwrap().as_deref(), Some(&b"v"[..]));
    }

    #[tokio::test]
    async fn the_operation_cap_spans_every_attempt_of_a_call() {
        let (_dir, kv) = backend();
        let meter = Meter::new(HostBudget::default());
        let keys: Vec<String> = (0..6000).map(|i| format!("k{i}")).collect();
        let mut table = ResourceTable::new();
        for attempt in 1..=2 {
            let mut ctx = KvCtx::new(kv.clone(), vec!["b".into()], true).with_meter(meter.clone());
            let mut view = KvView {
                ctx: &mut ctx,
                table: &mut table,
            };
            let bucket = view.open("b".into()).await.unwrap();
            let result = batch::Host::get_many(&mut view, bucket, keys.clone()).await;
            match attempt {
                1 => assert!(result.is_ok()),
                _ => assert!(
                    matches!(result, Err(store::Error::Other(m)) if m.contains("limit")),
                    "6000 + 6000 keys is over the per-call cap"
                ),
            }
        }
    }

    /// A read-only context on a bucket `b` whose key `big` holds the
    /// largest value, counting in the returned meter.
    fn reading_one_big_value() -> (tempfile::TempDir, KvCtx, Arc<Meter>) {
        let (dir, kv) = backend();
        kv.set("b", "big", &vec![7; MAX_VALUE_BYTES]).unwrap();
        let meter = Meter::new(HostBudget::default());
        let ctx = KvCtx::new(kv, vec!["b".into()], true).with_meter(meter.clone());
        (dir, ctx, meter)
    }

    #[tokio::test]
    async fn a_batch_read_is_charged_per_key_against_the_host_budget() {
        let (_dir, mut ctx, meter) = reading_one_big_value();
        let mut table = ResourceTable::new();
        let mut view = KvView {
            ctx: &mut ctx,
            table: &mut table,
        };
        let bucket = view.open("b".into()).await.unwrap();
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        let few = vec!["big".to_string(); 4];
        assert_eq!(
            batch::Host::get_many(&mut view, again, few)
                .await
                .unwrap()
                .len(),
            4
        );
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        let many = vec!["big".to_string(); 4000];
        let err = batch::Host::get_many(&mut view, again, many)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, store::Error::Other(m) if m.contains("host memory cap hit")),
            "{err:?}"
        );
        let usage = meter.usage(
            std::time::Duration::ZERO,
            1,
            crate::usage::HttpTally::default(),
        );
        assert!(usage.peak_host_bytes <= 32 << 20, "{usage:?}");
        assert_eq!(usage.limit.map(|l| l.name.name()), Some("host_memory"));
    }

    #[tokio::test]
    async fn compare_and_swap_handles_hold_their_snapshot_against_the_budget() {
        let (_dir, mut ctx, _) = reading_one_big_value();
        let mut table = ResourceTable::new();
        let mut view = KvView {
            ctx: &mut ctx,
            table: &mut table,
        };
        let bucket = view.open("b".into()).await.unwrap();
        let mut held = Vec::new();
        let err = loop {
            let again = Resource::<Bucket>::new_borrow(bucket.rep());
            match atomics::HostCas::new(&mut view, again, "big".into()).await {
                Ok(cas) => held.push(cas),
                Err(err) => break err,
            }
            assert!(held.len() < 100, "the budget never ran out");
        };
        assert!(matches!(&err, store::Error::Other(m) if m.contains("host memory cap hit")));
        assert_eq!(
            held.len(),
            31,
            "32 MiB holds 31 snapshots of 1 MiB and their keys"
        );
        let first = held.remove(0);
        atomics::HostCas::drop(&mut view, first).await.unwrap();
        let again = Resource::<Bucket>::new_borrow(bucket.rep());
        assert!(
            atomics::HostCas::new(&mut view, again, "big".into())
                .await
                .is_ok(),
            "dropping a handle gives its memory back"
        );
    }

    #[tokio::test]
    async fn oversized_values_are_refused() {
        let (_dir, kv) = backend();
        let mut ctx = KvCtx::new(kv, vec!["b".into()], false);
        let mut table = ResourceTable::new();
        let mut view = KvView {
            ctx: &mut ctx,
            table: &mut table,
        };
        let bucket = view.open("b".into()).await.unwrap();
        let err = view
            .set(bucket, "k".into(), vec![0; MAX_VALUE_BYTES + 1])
            .await
            .unwrap_err();
        assert!(matches!(err, store::Error::Other(m) if m.contains("limit")));
    }
}
