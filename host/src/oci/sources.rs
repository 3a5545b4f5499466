//! `[sources]`: tools a host runs from OCI registries. Each is a reference
//! pinned to its manifest's digest; before the tools load, each pinned
//! component is read from the cache (checked against its digest every
//! time) or pulled when the cache lacks it, and shown to the loader as
//! `<name>.wasm` in a folder of the state directory, beside the tools
//! folder's files — once its signature checked out, where `[trust]` asks
//! for one. A tag that moved upstream changes nothing: only `toolhost
//! update` moves a pin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::signature::{Trust, Verdict};
use super::{Cache, Credentials, Digest, Pulled, Reference, Rules, cached, pull};
use crate::caps::http::Network;

/// Where a host keeps what it pulled, and how it reaches registries.
#[derive(Clone)]
pub struct Sources {
    cache: Cache,
    /// `<name>.wasm`, one per source, for the loader.
    shown: PathBuf,
    network: Network,
}

/// A source that could not be made ready: which, and why.
#[derive(Debug, Clone)]
pub struct NotReady {
    /// The tool's name.
    pub name: String,
    /// Why, naming the source.
    pub reason: String,
}

impl Sources {
    /// The sources of a host whose state directory is `state`, pulled
    /// through `network`.
    pub fn new(state: &Path, network: Network) -> Self {
        let root = state.join("oci");
        Self {
            cache: Cache::new(&root),
            shown: root.join("tools"),
            network,
        }
    }

    /// The cache pulled components are kept in.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The network registries are reached through.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Each of `sources` ready to load: the files to load (`<name>.wasm`),
    /// and the ones that are not, with why. A component not signed as
    /// `rules` ask is not ready; nor is a name the tools folder `tools_dir`
    /// has a file for (which one would run would be a guess).
    pub async fn prepare(
        &self,
        sources: &BTreeMap<String, String>,
        rules: &Rules,
        tools_dir: &Path,
    ) -> (Vec<PathBuf>, Vec<NotReady>) {
        let mut ready = Vec::new();
        let mut not_ready = Vec::new();
        for (name, source) in sources {
            match self.ready(name, source, rules, tools_dir).await {
                Ok(path) => ready.push(path),
                Err(reason) => not_ready.push(NotReady {
                    name: name.clone(),
                    reason,
                }),
            }
        }
        (ready, not_ready)
    }

    async fn ready(
        &self,
        name: &str,
        source: &str,
        rules: &Rules,
        tools_dir: &Path,
    ) -> Result<PathBuf, String> {
        let reference = rules.reference(source)?;
        let digest = reference
            .digest
            .clone()
            .ok_or_else(|| format!("{source} is not pinned to a digest"))?;
        let file = tools_dir.join(format!("{name}.wasm"));
        if file.exists() {
            return Err(format!(
                "[sources] names `{name}`, and the tools folder has {} too: remove one",
                file.display()
            ));
        }
        let trust = rules.trust_for(&reference);
        if let Some(hit) = cached(&reference, &digest, &self.cache) {
            self.verify(name, &reference, trust).await?;
            return self.show(name, &hit.path);
        }
        let pulled = self.pull(name, &reference, &digest).await?;
        // `pull` read the component from the cache checked against its
        // digest, or fetched it so.
        self.verify(name, &reference, trust).await?;
        self.show(name, &pulled.path)
    }

    /// Pull the component `pin` names from `reference`'s registry into the
    /// cache, saying so in the log.
    async fn pull(
        &self,
        name: &str,
        reference: &Reference,
        pin: &Digest,
    ) -> Result<Pulled, String> {
        // Only a pull asks for credentials (a warm start runs no helper).
        let credentials = Credentials::for_registry(&reference.registry).await?;
        let started = std::time::Instant::now();
        let mut told = false;
        pull(
            self.network.clone(),
            reference,
            Some(pin),
            &self.cache,
            credentials,
            |got, total| {
                if !told {
                    told = true;
                    tracing::info!("pulling `{name}` from {reference} ({total} bytes)");
                }
                if got == total {
                    tracing::info!(
                        "pulled `{name}` from {reference} in {:?}",
                        started.elapsed()
                    );
                }
            },
        )
        .await
    }

    /// Check `reference`'s signature as `trust` asks (nothing when no
    /// `[trust]` entry covers it); an unsigned component that need not be
    /// signed is logged.
    async fn verify(
        &self,
        name: &str,
        reference: &Reference,
        trust: Option<&Trust>,
    ) -> Result<(), String> {
        let Some(trust) = trust else {
            return Ok(());
        };
        match super::verify(&self.network, reference, trust, &self.cache).await? {
            Verdict::Signed { key, .. } => {
                tracing::debug!("`{name}` from {reference} is signed by {key}");
            }
            Verdict::Unsigned(why) => {
                tracing::warn!("`{name}` loads unsigned ([trust] does not require it): {why}");
            }
        }
        Ok(())
    }

    /// Pull each of `sources` the cache lacks (and read its signatures,
    /// where `rules` ask for them), so that a
    /// [`Sources::prepare`] after it finds them there; what fails is left
    /// for `prepare` to report. A host runs this before it takes its edit
    /// lock for a reload, so a slow registry delays that reload, not the
    /// agent edits waiting for the lock.
    pub async fn fetch_missing(&self, sources: &BTreeMap<String, String>, rules: &Rules) {
        for (name, source) in sources {
            let Ok(reference) = rules.reference(source) else {
                continue;
            };
            let Some(pin) = reference.digest.clone() else {
                continue;
            };
            if super::present(&self.cache, &pin) {
                continue;
            }
            if self.pull(name, &reference, &pin).await.is_ok() {
                let _ = self
                    .verify(name, &reference, rules.trust_for(&reference))
                    .await;
            }
        }
    }

    /// Show the cached component at `path` to the loader as `<name>.wasm`.
    fn show(&self, name: &str, path: &Path) -> Result<PathBuf, String> {
        let failed = |e: std::io::Error| format!("showing `{name}` to the loader: {e}");
        std::fs::create_dir_all(&self.shown).map_err(failed)?;
        let shown = self.shown.join(format!("{name}.wasm"));
        let staged = self.shown.join(format!(".{name}.wasm.new"));
        let _ = std::fs::remove_file(&staged);
        if std::fs::hard_link(path, &staged).is_err() {
            std::fs::copy(path, &staged).map_err(failed)?;
        }
        std::fs::rename(&staged, &shown).map_err(failed)?;
        Ok(shown)
    }
}
