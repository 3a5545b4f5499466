//! Key-value: `wasi:keyvalue@0.2.0-draft2` over a durable backend.
//!
//! One store serves every session of the host: a redb file under the state
//! directory ([`RedbBackend`], the default), or Redis shared by several
//! hosts ([`RedisBackend`], `[state] backend = "redis"`). A tool may open
//! only the buckets named in its grant; a call whose effect is `read` gets
//! handles that refuse every write. Values and the number of operations per
//! call are capped.

mod redb_backend;
mod redis_backend;

use std::sync::Arc;

use wasmtime::component::{HasData, Resource, ResourceTable};

pub use self::redb_backend::RedbBackend;
pub use self::redis_backend::RedisBackend;
use super::{CallScope, Capability, Grants, Outside};
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

/// What a [`KvBackend::get_many`] read within its byte allowance.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ManyValues {
    /// The values of the first keys asked for, in order (`None`: absent).
    pub values: Vec<Option<Vec<u8>>>,
    /// When the allowance ran out: the size of the next key's value, which
    /// was not read.
    pub stopped_at: Option<usize>,
}

/// Where buckets live. Implement it to put the store behind a network
/// service; every write is durable (as the backend defines it) when its
/// future completes.
#[async_trait::async_trait]
pub trait KvBackend: Send + Sync + 'static {
    /// The value of `key` in `bucket`.
    async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError>;
    /// The values of `keys`, in order, while their bytes together fit in
    /// `max_bytes`: a larger answer is never read into memory.
    async fn get_many(
        &self,
        bucket: &str,
        keys: &[String],
        max_bytes: usize,
    ) -> Result<ManyValues, BackendError>;
    /// Set `key` in `bucket`.
    async fn set(&self, bucket: &str, key: &str, value: Vec<u8>) -> Result<(), BackendError>;
    /// Remove `key`; absent keys are not an error.
    async fn delete(&self, bucket: &str, key: &str) -> Result<(), BackendError>;
    /// Up to `limit` keys of `bucket` in byte order, starting after `after`.
    async fn list_keys(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, BackendError>;
    /// Add `delta` to the i64 at `key` (absent = 0) atomically; the new value.
    async fn increment(&self, bucket: &str, key: &str, delta: i64) -> Result<i64, BackendError>;
    /// Set `key` to `new` only if it still holds `expected`; whether it did.
    async fn compare_and_swap(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<Vec<u8>>,
        new: Vec<u8>,
    ) -> Result<bool, BackendError>;
    /// Set every pair at once: no reader sees some set and others not.
    async fn set_many(
        &self,
        bucket: &str,
        pairs: Vec<(String, Vec<u8>)>,
    ) -> Result<(), BackendError>;
    /// Remove every key at once.
    async fn delete_many(&self, bucket: &str, keys: Vec<String>) -> Result<(), BackendError>;
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

/// The longest bucket name a `kv` grant may hold.
pub const MAX_BUCKET_NAME_BYTES: usize = 128;

/// Check the bucket names of a `kv` grant, naming the first that is not one.
pub fn check_buckets(buckets: &[String]) -> anyhow::Result<()> {
    for bucket in buckets {
        anyhow::ensure!(
            !bucket.is_empty() && bucket.len() <= MAX_BUCKET_NAME_BYTES,
            "`kv` bucket name {bucket:?} must be 1-{MAX_BUCKET_NAME_BYTES} characters"
        );
    }
    Ok(())
}

/// The lock's entry for a grant of `buckets`: sorted, each once.
pub fn lock_entry(buckets: &[String]) -> Vec<String> {
    let mut buckets = buckets.to_vec();
    buckets.sort();
    buckets.dedup();
    buckets
}

/// What `grants` give a component importing `interface` of
/// `wasi:keyvalue`, as `inspect` shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    interface.starts_with("wasi:keyvalue/").then(|| {
        if grants.kv.is_empty() {
            "NOT GRANTED (no kv buckets)".into()
        } else {
            format!("granted: buckets {}", grants.kv.join(", "))
        }
    })
}

impl Capability for KvCtx {
    /// The buckets granted, on the host's store; none without a store.
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(match scope.kv {
            Some(backend) if !grants.kv.is_empty() => {
                Self::new(Arc::clone(backend), grants.kv.clone(), scope.read_only)
                    .with_meter(scope.meter.clone())
            }
            _ => Self::deny_all(),
        })
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::deny_all())
    }
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

/// A backend failure as the guest sees it.
fn failed(e: BackendError) -> store::Error {
    store::Error::Other(e.0)
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
        let value = backend.get(&name, &key).await.map_err(failed)?;
        self.ctx.meter.kv_read(value.as_ref().map_or(0, Vec::len));
        Ok(value)
    }

    async fn set(&mut self, bucket: Resource<Bucket>, key: String, value: Vec<u8>) -> KvResult<()> {
        check_key(&key)?;
        check_value(&value)?;
        let (backend, name) = self.writable(&bucket)?;
        self.ctx.meter.kv_written(value.len());
        backend.set(&name, &key, value).await.map_err(failed)
    }

    async fn delete(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<()> {
        check_key(&key)?;
        let (backend, name) = self.writable(&bucket)?;
        backend.delete(&name, &key).await.map_err(failed)
    }

    async fn exists(&mut self, bucket: Resource<Bucket>, key: String) -> KvResult<bool> {
        check_key(&key)?;
        let (backend, name) = self.readable(&bucket)?;
        let value = backend.get(&name, &key).await.map_err(failed)?;
        Ok(value.is_some())
    }

    async fn list_keys(
        &mut self,
        bucket: Resource<Bucket>,
        cursor: Option<String>,
    ) -> KvResult<store::KeyResponse> {
        if let Some(cursor) = &cursor {
            check_key(cursor)?;
        }
        let (backend, name) = self.readable(&bucket)?;
        let keys = backend
            .list_keys(&name, cursor.as_deref(), LIST_PAGE)
            .await
            .map_err(failed)?;
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
        let seen = backend.get(&name, &key).await.map_err(failed)?;
        self.ctx.meter.kv_read(seen.as_ref().map_or(0, Vec::len));
        let cas = Cas::charged(&self.ctx.meter, name, key, seen)?;
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
        backend.increment(&name, &key, delta).await.map_err(failed)
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
        let swapped = backend
            .compare_and_swap(&bucket, &key, seen, value)
            .await
            .map_err(|e| store_error(failed(e)))?;
        if swapped {
            return Ok(());
        }
        let now = backend
            .get(&bucket, &key)
            .await
            .map_err(|e| store_error(failed(e)))?;
        self.ctx.meter.kv_read(now.as_ref().map_or(0, Vec::len));
        let retry = Cas::charged(&self.ctx.meter, bucket, key, now).map_err(store_error)?;
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
        let meter = &self.ctx.meter;
        // The keys and each entry's overhead are charged first; the values
        // are read only while they fit in what the budget has left, so the
        // answer never holds more than the budget (a key asked for twice
        // is counted twice).
        let overhead: usize = keys.iter().map(|k| BATCH_ENTRY_OVERHEAD + k.len()).sum();
        let _entries = meter.charge(overhead, "a get-many answer").map_err(other)?;
        let many = backend
            .get_many(&name, &keys, meter.available())
            .await
            .map_err(failed)?;
        let read: usize = many.values.iter().flatten().map(Vec::len).sum();
        if let Some(next) = many.stopped_at {
            return Err(other(meter.refuse(read + next, "a get-many answer")));
        }
        let _values = meter.charge(read, "a get-many answer").map_err(other)?;
        meter.kv_read(read);
        Ok(keys
            .into_iter()
            .zip(many.values)
            .map(|(key, value)| value.map(|v| (key, v)))
            .collect())
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
        backend.set_many(&name, key_values).await.map_err(failed)
    }

    async fn delete_many(&mut self, bucket: Resource<Bucket>, keys: Vec<String>) -> KvResult<()> {
        for key in &keys {
            check_key(key)?;
        }
        let (backend, name) = self.batch(&bucket, keys.len(), true)?;
        backend.delete_many(&name, keys).await.map_err(failed)
    }
}

#[cfg(test)]
mod tests;
