//! Where an agent's version records are kept: one JSON file each under
//! the state directory, so version numbers and their history outlive the
//! process, or the fleet's in Redis.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;

use super::fleet::FleetAgents;
use super::inputs::VersionInputs;
use super::record::{MAX_RECORDS, VersionRecord};

/// The version records of one agent, one JSON file each:
/// `<state>/agents/<agent>/versions/<n>.json`, or the fleet's in Redis.
#[derive(Debug, Clone)]
pub(crate) struct RecordShelf {
    dir: PathBuf,
    agent: String,
    shared: Option<Arc<FleetAgents>>,
}

impl RecordShelf {
    /// The shelf of `agent` under the agents directory `root`, or in
    /// `shared`.
    pub(crate) fn new(root: &Path, agent: &str, shared: Option<Arc<FleetAgents>>) -> Self {
        Self {
            dir: root.join(agent).join("versions"),
            agent: agent.to_string(),
            shared,
        }
    }

    /// The number of a new version holding `candidate`'s tools, after
    /// `newest`: the next on one machine; a fleet's number for these
    /// tools (another server may have recorded them).
    pub(crate) fn number_for(
        &self,
        candidate: &VersionRecord,
        newest: Option<&VersionRecord>,
    ) -> anyhow::Result<u64> {
        match &self.shared {
            Some(shared) => shared.number_for(&self.agent, candidate),
            None => Ok(newest.map_or(0, |n| n.version) + 1),
        }
    }

    fn path(&self, version: u64) -> PathBuf {
        self.dir.join(format!("{version}.json"))
    }

    fn inputs_path(&self, version: u64) -> PathBuf {
        self.dir.join(format!("{version}.inputs.json"))
    }

    /// What version `version` was loaded from, if it is kept.
    pub(crate) fn read_inputs(&self, version: u64) -> anyhow::Result<Option<VersionInputs>> {
        if let Some(shared) = &self.shared {
            return shared.inputs(&self.agent, version);
        }
        crate::files::read_json(&self.inputs_path(version), "a version's inputs")
    }

    /// The numbers recorded, lowest first.
    pub(crate) fn numbers(&self) -> anyhow::Result<Vec<u64>> {
        if let Some(shared) = &self.shared {
            return shared.numbers(&self.agent);
        }
        let mut numbers: Vec<u64> = crate::files::entry_names(&self.dir)?
            .iter()
            .filter_map(|name| name.strip_suffix(".json")?.parse().ok())
            .collect();
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Version `version`'s record, if it is kept.
    pub(crate) fn read(&self, version: u64) -> anyhow::Result<Option<VersionRecord>> {
        if let Some(shared) = &self.shared {
            return shared.record(&self.agent, version);
        }
        crate::files::read_json(&self.path(version), "a version record")
    }

    /// The newest record, if any is kept.
    pub(crate) fn newest(&self) -> anyhow::Result<Option<VersionRecord>> {
        match self.numbers()?.last() {
            Some(&n) => self.read(n),
            None => Ok(None),
        }
    }

    /// Keep `record` and what it was loaded from (durably), then remove
    /// the oldest records past [`MAX_RECORDS`] that `in_use` does not name.
    pub(crate) fn write(
        &self,
        record: &VersionRecord,
        inputs: &VersionInputs,
        in_use: impl Fn(u64) -> bool,
    ) -> anyhow::Result<()> {
        if let Some(shared) = &self.shared {
            shared.keep(record, inputs)?;
            let numbers = self.numbers()?;
            let excess = numbers.len().saturating_sub(MAX_RECORDS);
            let old: Vec<u64> = numbers
                .into_iter()
                .filter(|&n| !in_use(n))
                .take(excess)
                .collect();
            return shared.remove(&self.agent, &old);
        }
        crate::files::create_private_dir(&self.dir)?;
        let inputs_path = self.inputs_path(record.version);
        crate::files::write_atomically(&inputs_path, &serde_json::to_vec(inputs)?)
            .with_context(|| format!("cannot write {}", inputs_path.display()))?;
        let path = self.path(record.version);
        crate::files::write_atomically(&path, &serde_json::to_vec_pretty(record)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let numbers = self.numbers()?;
        let excess = numbers.len().saturating_sub(MAX_RECORDS);
        for &old in numbers.iter().filter(|&&n| !in_use(n)).take(excess) {
            for path in [self.path(old), self.inputs_path(old)] {
                if let Err(e) = std::fs::remove_file(&path)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        }
        Ok(())
    }

    /// Every record kept, lowest first. A record that cannot be read is
    /// reported and skipped; an error when the fleet's store does not
    /// answer.
    pub(crate) fn all(&self) -> anyhow::Result<Vec<VersionRecord>> {
        if let Some(shared) = &self.shared {
            return shared.records(&self.agent);
        }
        let mut records = Vec::new();
        for number in self.numbers()? {
            match self.read(number) {
                Ok(Some(record)) => records.push(record),
                Ok(None) => {}
                Err(e) => tracing::warn!("skipping a version record: {e:#}"),
            }
        }
        Ok(records)
    }

    /// The digests of every component file the kept versions' inputs name.
    pub(crate) fn referenced_files(&self) -> anyhow::Result<Vec<String>> {
        let inputs = match &self.shared {
            Some(shared) => shared.all_inputs(&self.agent)?,
            None => {
                let mut all = Vec::new();
                for number in self.numbers()? {
                    all.extend(self.read_inputs(number)?);
                }
                all
            }
        };
        Ok(inputs
            .into_iter()
            .flat_map(|inputs| inputs.files.into_values())
            .collect())
    }
}
