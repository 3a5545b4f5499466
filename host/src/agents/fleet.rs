//! Agents a fleet shares (`[state] backend = "redis"`): the definitions made
//! over the API and every agent's version records live in Redis, so every
//! server gives one tool set the same number and can load any version
//! another server recorded.
//!
//! The keys, under the store's prefix:
//!
//! - `agentdefs`: a hash of each agent made over the API, by name;
//! - `agentnames`: the agents with versions on record;
//! - `agentversions:<agent>` and `agentinputs:<agent>`: hashes of each
//!   version's record and what it was loaded from, by number;
//! - `agenttools:<agent>`: a hash from the digest of a version's tools (each
//!   tool's digests, grants and policy) to its number, and
//!   `agentseq:<agent>`, the last number given. A server committing tools
//!   the fleet has recorded gets their number (two servers starting from
//!   one folder, or one catching up in a rolling deploy, agree); new tools
//!   get the next number, taken in the same script.
//!
//! Definitions, records and inputs are sealed under the cluster key
//! (`redis_store::seal`), each bound to its hash and field: one a server
//! of the fleet did not write there is skipped, so no writer of Redis
//! defines an agent, a version or what a version loads.
//!
//! These calls block (a connection of their own, with the store's
//! timeouts): they run where the embedded store reads and writes files.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use anyhow::Context as _;
use redis::{Commands as _, Script};
use sha2::{Digest as _, Sha256};

use super::inputs::VersionInputs;
use super::record::VersionRecord;
use super::stored::StoredAgent;
use crate::redis_store::RedisStore;
use crate::redis_store::seal::Purpose;

/// `KEYS`: tool-set digests, last number. `ARGV`: the digest. The number
/// of the version holding these tools: recorded already, or the next one.
static NUMBER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local known = redis.call('HGET', KEYS[1], ARGV[1])
         if known then return tonumber(known) end
         local n = redis.call('INCR', KEYS[2])
         redis.call('HSET', KEYS[1], ARGV[1], n)
         return n",
    )
});

/// Redis did not answer a command the agents needed: surfaces answer
/// `503 state_unavailable` rather than taking it for "none".
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unavailable(String);

/// The agents of a fleet, in Redis.
pub(crate) struct FleetAgents {
    store: Arc<RedisStore>,
    /// One blocking connection, opened on first use and again after a
    /// failure.
    connection: Mutex<Option<redis::Connection>>,
}

impl std::fmt::Debug for FleetAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetAgents")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl FleetAgents {
    /// Agents kept in `store`.
    pub(crate) fn new(store: Arc<RedisStore>) -> Self {
        Self {
            store,
            connection: Mutex::new(None),
        }
    }

    /// Run `command` on the connection, `what` naming it in an error.
    fn run<T>(
        &self,
        what: &str,
        command: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> anyhow::Result<T> {
        let mut slot = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let fail = |e: &redis::RedisError| {
            anyhow::Error::new(Unavailable(format!(
                "cannot {what}: {}",
                self.store.failure(e)
            )))
        };
        let connection = match slot.as_mut() {
            Some(connection) => connection,
            None => slot.insert(self.store.blocking_connection().map_err(|e| fail(&e))?),
        };
        command(connection).map_err(|e| {
            *slot = None;
            fail(&e)
        })
    }

    fn defs_key(&self) -> String {
        self.store.key("agentdefs", &[])
    }

    fn names_key(&self) -> String {
        self.store.key("agentnames", &[])
    }

    fn versions_key(&self, agent: &str) -> String {
        self.store.key("agentversions", &[agent])
    }

    fn inputs_key(&self, agent: &str) -> String {
        self.store.key("agentinputs", &[agent])
    }

    fn tools_key(&self, agent: &str) -> String {
        self.store.key("agenttools", &[agent])
    }

    fn seq_key(&self, agent: &str) -> String {
        self.store.key("agentseq", &[agent])
    }

    /// Every agent made over the API; one that cannot be read is reported
    /// and skipped.
    pub(crate) fn definitions(&self) -> anyhow::Result<Vec<StoredAgent>> {
        let all: Vec<(String, String)> = self.run("list the agents made over the API", |c| {
            c.hgetall(self.defs_key())
        })?;
        let mut agents: Vec<StoredAgent> = all
            .into_iter()
            .filter_map(
                |(name, sealed)| match self.parse_definition(&name, &sealed) {
                    Ok(agent) => Some(agent),
                    Err(e) => {
                        tracing::warn!("skipping the agent `{name}` in Redis: {e:#}");
                        None
                    }
                },
            )
            .collect();
        agents.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(agents)
    }

    /// The agent `name` made over the API, if there is one.
    pub(crate) fn definition(&self, name: &str) -> anyhow::Result<Option<StoredAgent>> {
        let json: Option<String> = self.run("read an agent's definition", |c| {
            c.hget(self.defs_key(), name)
        })?;
        Ok(json.and_then(|sealed| {
            self.parse_definition(name, &sealed)
                .inspect_err(|e| tracing::warn!("ignoring the agent `{name}` in Redis: {e:#}"))
                .ok()
        }))
    }

    /// Keep `agent`'s definition, replacing the one kept under its name.
    pub(crate) fn keep_definition(&self, agent: &StoredAgent) -> anyhow::Result<()> {
        let json = serde_json::to_string(agent)?;
        let key = self.defs_key();
        let json = self
            .store
            .seal()
            .seal(Purpose::AgentDefinition, &key, &agent.name, &json);
        self.run("keep an agent's definition", |c| {
            c.hset::<_, _, _, ()>(self.defs_key(), &agent.name, json)
        })
    }

    /// Forget the agent `name`'s definition (its versions' records stay).
    pub(crate) fn forget_definition(&self, name: &str) -> anyhow::Result<()> {
        self.run("remove an agent's definition", |c| {
            c.hdel::<_, _, ()>(self.defs_key(), name)
        })
    }

    /// The number of `agent`'s version holding `tools`: the fleet's, when
    /// it has recorded them; else the next one.
    pub(crate) fn number_for(&self, agent: &str, tools: &VersionRecord) -> anyhow::Result<u64> {
        let digest = tools_digest(tools)?;
        self.run("number a version", |c| {
            NUMBER
                .key(self.tools_key(agent))
                .key(self.seq_key(agent))
                .arg(digest)
                .invoke(c)
        })
    }

    /// `agent`'s version numbers on record, lowest first.
    pub(crate) fn numbers(&self, agent: &str) -> anyhow::Result<Vec<u64>> {
        let keys: Vec<String> = self.run("list an agent's versions", |c| {
            c.hkeys(self.versions_key(agent))
        })?;
        let mut numbers: Vec<u64> = keys.iter().filter_map(|k| k.parse().ok()).collect();
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Version `version` of `agent`'s record, if it is kept.
    pub(crate) fn record(
        &self,
        agent: &str,
        version: u64,
    ) -> anyhow::Result<Option<VersionRecord>> {
        let what = format!("version {version} of `{agent}`'s record");
        let record: Option<VersionRecord> = self.field_json(
            Purpose::AgentVersion,
            &self.versions_key(agent),
            version,
            &what,
        )?;
        record.map(|r| of_its_key(r, agent, version)).transpose()
    }

    /// Every record of `agent` kept, lowest first (one read); one that is
    /// not valid is reported and skipped.
    pub(crate) fn records(&self, agent: &str) -> anyhow::Result<Vec<VersionRecord>> {
        let what = format!("`{agent}`'s version records");
        let records: Vec<(String, VersionRecord)> =
            self.whole_json(Purpose::AgentVersion, &self.versions_key(agent), &what)?;
        let mut records: Vec<VersionRecord> = records
            .into_iter()
            .filter_map(|(field, record)| {
                let version = field.parse().ok()?;
                of_its_key(record, agent, version)
                    .inspect_err(|e| tracing::warn!("skipping {what}: {e:#}"))
                    .ok()
            })
            .collect();
        records.sort_by_key(|record| record.version);
        Ok(records)
    }

    /// What every version of `agent` kept was loaded from (one read); one
    /// that is not valid is reported and skipped.
    pub(crate) fn all_inputs(&self, agent: &str) -> anyhow::Result<Vec<VersionInputs>> {
        let what = format!("the inputs of `{agent}`'s versions");
        let inputs = self.whole_json(Purpose::AgentInputs, &self.inputs_key(agent), &what)?;
        Ok(inputs.into_iter().map(|(_, inputs)| inputs).collect())
    }

    /// Every field of the hash `key` sealed for `purpose`, read as a `T`
    /// (`what` names them in errors), with its field; one that does not
    /// verify or is not valid is reported and skipped.
    fn whole_json<T: serde::de::DeserializeOwned>(
        &self,
        purpose: Purpose,
        key: &str,
        what: &str,
    ) -> anyhow::Result<Vec<(String, T)>> {
        let all: Vec<(String, String)> = self.run(&format!("read {what}"), |c| c.hgetall(key))?;
        Ok(all
            .into_iter()
            .filter_map(|(field, sealed)| {
                let read = self
                    .store
                    .seal()
                    .open(purpose, key, &field, &sealed)
                    .map_err(anyhow::Error::from)
                    .and_then(|json| Ok(serde_json::from_str(json)?));
                match read {
                    Ok(value) => Some((field, value)),
                    Err(e) => {
                        tracing::warn!("skipping entry {field} of {what} in Redis: {e:#}");
                        None
                    }
                }
            })
            .collect())
    }

    /// What version `version` of `agent` was loaded from, if it is kept.
    pub(crate) fn inputs(
        &self,
        agent: &str,
        version: u64,
    ) -> anyhow::Result<Option<VersionInputs>> {
        let what = format!("the inputs of version {version} of `{agent}`");
        self.field_json(
            Purpose::AgentInputs,
            &self.inputs_key(agent),
            version,
            &what,
        )
    }

    /// The JSON sealed for `purpose` in field `field` of the hash `key`,
    /// read as a `T` (`what` names it in errors), if there is one a server
    /// of the fleet sealed there (another is logged, and not there).
    fn field_json<T: serde::de::DeserializeOwned>(
        &self,
        purpose: Purpose,
        key: &str,
        field: u64,
        what: &str,
    ) -> anyhow::Result<Option<T>> {
        let sealed: Option<String> = self.run(&format!("read {what}"), |c| c.hget(key, field))?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let json = match self
            .store
            .seal()
            .open(purpose, key, &field.to_string(), &sealed)
        {
            Ok(json) => json,
            Err(tampered) => {
                tracing::warn!("ignoring {what}: {tampered}");
                return Ok(None);
            }
        };
        serde_json::from_str(json)
            .map(Some)
            .with_context(|| format!("{what} in Redis is not valid"))
    }

    /// Keep `record` and its `inputs`, unless another server kept that
    /// number's first (the same tools: the number is the digest's).
    pub(crate) fn keep(
        &self,
        record: &VersionRecord,
        inputs: &VersionInputs,
    ) -> anyhow::Result<()> {
        let agent = &record.agent;
        let field = record.version.to_string();
        let seal = self.store.seal();
        let record_json = seal.seal(
            Purpose::AgentVersion,
            &self.versions_key(agent),
            &field,
            &serde_json::to_string(record)?,
        );
        let inputs_json = seal.seal(
            Purpose::AgentInputs,
            &self.inputs_key(agent),
            &field,
            &serde_json::to_string(inputs)?,
        );
        self.run("keep a version record", |c| {
            redis::pipe()
                .atomic()
                .hset_nx(self.inputs_key(agent), record.version, inputs_json)
                .ignore()
                .hset_nx(self.versions_key(agent), record.version, record_json)
                .ignore()
                .sadd(self.names_key(), agent)
                .ignore()
                .query::<()>(c)
        })
    }

    /// Remove versions `numbers` of `agent` (records, inputs and their
    /// tool sets' numbers).
    pub(crate) fn remove(&self, agent: &str, numbers: &[u64]) -> anyhow::Result<()> {
        if numbers.is_empty() {
            return Ok(());
        }
        let by_tools: Vec<(String, u64)> = self.run("list an agent's tool sets", |c| {
            c.hgetall(self.tools_key(agent))
        })?;
        let digests: Vec<&String> = by_tools
            .iter()
            .filter(|(_, n)| numbers.contains(n))
            .map(|(digest, _)| digest)
            .collect();
        self.run("remove old version records", |c| {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .hdel(self.versions_key(agent), numbers)
                .ignore()
                .hdel(self.inputs_key(agent), numbers)
                .ignore();
            if !digests.is_empty() {
                pipe.hdel(self.tools_key(agent), digests).ignore();
            }
            pipe.query::<()>(c)
        })
    }

    /// The agents with versions on record.
    pub(crate) fn agents(&self) -> anyhow::Result<Vec<String>> {
        self.run("list the agents on record", |c| {
            c.smembers(self.names_key())
        })
    }
}

impl FleetAgents {
    /// The definition sealed under `name`, if a server of the fleet sealed
    /// it there and it is that agent's.
    fn parse_definition(&self, name: &str, sealed: &str) -> anyhow::Result<StoredAgent> {
        let json =
            self.store
                .seal()
                .open(Purpose::AgentDefinition, &self.defs_key(), name, sealed)?;
        let agent: StoredAgent = serde_json::from_str(json).context("not a valid definition")?;
        anyhow::ensure!(
            agent.name == name,
            "the definition kept under `{name}` is the agent `{}`'s",
            agent.name
        );
        Ok(agent)
    }
}

/// `record`, read at `agent`'s version `version`, if it says it is that.
fn of_its_key(record: VersionRecord, agent: &str, version: u64) -> anyhow::Result<VersionRecord> {
    anyhow::ensure!(
        record.agent == agent && record.version == version,
        "the record kept as version {version} of `{agent}` is version {} of `{}`",
        record.version,
        record.agent
    );
    Ok(record)
}

/// What identifies a version's tools: the digest of each one's digests,
/// grants and policy.
fn tools_digest(record: &VersionRecord) -> anyhow::Result<String> {
    let tools = serde_json::to_vec(&record.tools)?;
    Ok(format!("{:x}", Sha256::digest(tools)))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::Utc;
    use serde_json::json;
    use toolhost_test_artifacts::redis::RedisServer;

    use super::*;
    use crate::redis_store::RedisOptions;

    fn agents(server: &RedisServer) -> FleetAgents {
        let settings = RedisOptions::new(server.url());
        FleetAgents::new(
            RedisStore::open(&settings, &crate::redis_store::TEST_CLUSTER_KEY).unwrap(),
        )
    }

    fn record(version: u64) -> VersionRecord {
        VersionRecord {
            agent: "repo".into(),
            version,
            created_at: Utc::now(),
            tools: BTreeMap::new(),
        }
    }

    #[tokio::test]
    async fn one_tool_set_has_one_number_and_its_first_record_stays() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let (a, b) = (agents(&server), agents(&server));
        let number = a.number_for("repo", &record(0)).unwrap();
        assert_eq!(number, 1);
        assert_eq!(
            b.number_for("repo", &record(0)).unwrap(),
            1,
            "the same tools"
        );
        let first = record(1);
        let inputs = VersionInputs {
            config: Some("# a".into()),
            ..VersionInputs::default()
        };
        a.keep(&first, &inputs).unwrap();
        let later = VersionRecord {
            created_at: first.created_at + chrono::Duration::seconds(5),
            ..first.clone()
        };
        b.keep(&later, &VersionInputs::default()).unwrap();
        assert_eq!(
            b.record("repo", 1).unwrap(),
            Some(first),
            "the first kept stays"
        );
        assert_eq!(b.inputs("repo", 1).unwrap(), Some(inputs));
        assert_eq!(b.numbers("repo").unwrap(), vec![1]);
        assert_eq!(b.agents().unwrap(), vec!["repo".to_string()]);

        b.remove("repo", &[1]).unwrap();
        assert!(a.numbers("repo").unwrap().is_empty());
        assert_eq!(a.record("repo", 1).unwrap(), None);
        assert_eq!(
            a.number_for("repo", &record(0)).unwrap(),
            2,
            "a removed version's number is never given again"
        );
    }

    #[tokio::test]
    async fn definitions_are_kept_read_and_forgotten_for_the_fleet() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let (a, b) = (agents(&server), agents(&server));
        let now = Utc::now();
        let agent = StoredAgent {
            name: "repo".into(),
            created_at: now,
            updated_at: now,
            definition: json!({"components": ["echo"]}),
        };
        a.keep_definition(&agent).unwrap();
        let read = b.definition("repo").unwrap().unwrap();
        assert_eq!(read.definition, agent.definition);
        // A definition filed under another name, or not sealed by a server
        // of the fleet, is not served.
        let mut connection = a.store.blocking_connection().unwrap();
        let json = serde_json::to_string(&agent).unwrap();
        let moved = a
            .store
            .seal()
            .seal(Purpose::AgentDefinition, &a.defs_key(), "repo", &json);
        redis::Commands::hset::<_, _, _, ()>(&mut connection, a.defs_key(), "other", moved)
            .unwrap();
        redis::Commands::hset::<_, _, _, ()>(&mut connection, a.defs_key(), "plain", json).unwrap();
        let names: Vec<String> = b
            .definitions()
            .unwrap()
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, vec!["repo".to_string()]);
        assert!(b.definition("other").unwrap().is_none());
        assert!(b.definition("plain").unwrap().is_none());
        b.forget_definition("repo").unwrap();
        assert!(a.definition("repo").unwrap().is_none());
    }
}
