//! Key-value buckets over `wasi:keyvalue` (the durable state shared by every
//! session of a host).
//!
//! A tool may open only the buckets its grant names (`kv = ["default"]` in
//! `toolhost.toml`); a call whose effect is `read` may not write. Refusals
//! arrive as [`Error::AccessDenied`], never as a trap.
//!
//! ```no_run
//! use toolhost_sdk::kv::Bucket;
//! # fn run() -> Result<(), toolhost_sdk::kv::Error> {
//! let bucket = Bucket::open("default")?;
//! let visits = bucket.increment("visits", 1)?;
//! bucket.set("last-visitor", "ana")?;
//! # let _ = visits; Ok(()) }
//! ```

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::wasi::keyvalue::{atomics, store};

/// Why a key-value operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No bucket of that name exists.
    NoSuchStore,
    /// The bucket was not granted to this tool, or this call may not write.
    AccessDenied,
    /// Any other failure, as the store described it.
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchStore => f.write_str("key-value: no such bucket"),
            Self::AccessDenied => f.write_str(
                "key-value: access denied (the bucket is not granted to this tool, \
                 or this call may not write)",
            ),
            Self::Other(message) => write!(f, "key-value: {message}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<store::Error> for Error {
    fn from(err: store::Error) -> Self {
        match err {
            store::Error::NoSuchStore => Self::NoSuchStore,
            store::Error::AccessDenied => Self::AccessDenied,
            store::Error::Other(message) => Self::Other(message),
        }
    }
}

/// An open bucket: a named collection of keys and byte values.
#[derive(Debug)]
pub struct Bucket {
    inner: store::Bucket,
}

impl Bucket {
    /// Opens the bucket `name`.
    pub fn open(name: &str) -> Result<Self, Error> {
        Ok(Self {
            inner: store::open(name)?,
        })
    }

    /// The value of `key`, or `None` when it is absent.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.inner.get(key)?)
    }

    /// Sets `key` to `value`, replacing any previous value.
    pub fn set(&self, key: &str, value: impl AsRef<[u8]>) -> Result<(), Error> {
        Ok(self.inner.set(key, value.as_ref())?)
    }

    /// Removes `key`; removing an absent key is not an error.
    pub fn delete(&self, key: &str) -> Result<(), Error> {
        Ok(self.inner.delete(key)?)
    }

    /// Whether `key` is present.
    pub fn exists(&self, key: &str) -> Result<bool, Error> {
        Ok(self.inner.exists(key)?)
    }

    /// Atomically adds `delta` to the signed 64-bit integer at `key` (absent
    /// counts as 0) and returns the new value.
    pub fn increment(&self, key: &str, delta: i64) -> Result<i64, Error> {
        Ok(atomics::increment(&self.inner, key, delta)?)
    }

    /// Every key in the bucket (follows the store's pages).
    pub fn keys(&self) -> Result<Vec<String>, Error> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.inner.list_keys(cursor.as_deref())?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) if cursor.as_deref() != Some(next.as_str()) => cursor = Some(next),
                _ => return Ok(keys),
            }
        }
    }

    /// The value of `key` decoded from JSON, or `None` when it is absent.
    pub fn get_json<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, Error> {
        self.get(key)?
            .map(|bytes| {
                serde_json::from_slice(&bytes).map_err(|err| {
                    Error::Other(format!("value of {key:?} is not valid JSON: {err}"))
                })
            })
            .transpose()
    }

    /// Sets `key` to `value` encoded as JSON.
    pub fn set_json<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<(), Error> {
        let bytes = serde_json::to_vec(value)
            .map_err(|err| Error::Other(format!("cannot encode {key:?} as JSON: {err}")))?;
        self.set(key, bytes)
    }

    /// The raw `wasi:keyvalue` handle, for batch and compare-and-swap calls.
    pub fn as_raw(&self) -> &store::Bucket {
        &self.inner
    }
}
