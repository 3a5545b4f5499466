//! Records a fleet keeps in Redis that decide what a server does (who owns
//! a session, what a version loads, what a reminder calls, how a parked
//! call is answered, what clients are shown) carry a MAC under a key
//! derived from the cluster key for their purpose, bound to the key prefix,
//! the record's Redis key and field, and its bytes. A writer of Redis who
//! lacks the cluster key cannot forge such a record, nor move one to
//! another key or purpose; a record that does not verify is ignored (and
//! logged) as if it were not there.
//!
//! A MAC proves a fleet server wrote the record, not that it is the latest
//! one written there: docs/SECURITY.md says what replaying an older one
//! can and cannot do.
//!
//! A sealed value is the MAC's 64 hex digits followed by the record (Lua
//! scripts that read a record skip the first 64 bytes).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What a sealed record is for: each has a key of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A session's record: its owner, mode and version.
    Session,
    /// A pending reminder: what it sends or calls, in which session.
    Reminder,
    /// An agent's definition made over the API.
    AgentDefinition,
    /// A version's record: its tools, their digests and grants.
    AgentVersion,
    /// What a version was loaded from.
    AgentInputs,
    /// A session event: what clients are shown and act on.
    Event,
    /// A parked call's outcome, as pollers are given it.
    CallOutcome,
    /// An answer to a parked call (an approval, a client's result).
    CallAnswer,
    /// An approval asked for, or decided, as approvers are shown it.
    Approval,
    /// An MCP task, as `tasks/get` shows it, and whose it is.
    McpTask,
    /// What a server received for an MCP task another runs.
    McpTaskMessage,
    /// The key MCP request states (input-required rounds) are signed with,
    /// so that every server of the fleet verifies them.
    McpRequestState,
    /// A client's retry of a call waiting on another server, relayed there.
    McpRoundMessage,
    /// What the server where a call waits answered a relayed retry with.
    McpRoundReply,
    /// A resource a call on one server announced as changed, for the
    /// clients of the others.
    ResourceUpdate,
}

impl Purpose {
    fn name(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Reminder => "reminder",
            Self::AgentDefinition => "agent-definition",
            Self::AgentVersion => "agent-version",
            Self::AgentInputs => "agent-inputs",
            Self::Event => "event",
            Self::CallOutcome => "call-outcome",
            Self::CallAnswer => "call-answer",
            Self::Approval => "approval",
            Self::McpTask => "mcp-task",
            Self::McpTaskMessage => "mcp-task-message",
            Self::McpRequestState => "mcp-request-state",
            Self::McpRoundMessage => "mcp-round-message",
            Self::McpRoundReply => "mcp-round-reply",
            Self::ResourceUpdate => "resource-update",
        }
    }
}

/// The length of a sealed value's MAC, in hex digits.
pub const TAG_HEX: usize = 64;

/// Why a sealed value was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {purpose} at `{key}` is not one a server of this fleet wrote (its MAC does not verify under the cluster key)"
)]
pub struct Tampered {
    /// What the record was for.
    pub purpose: &'static str,
    /// Where it was read.
    pub key: String,
}

/// Seals and opens records under the cluster key.
#[derive(Clone)]
pub struct Seal {
    root: Hmac<Sha256>,
    prefix: String,
}

/// The key is a secret: `Debug` shows nothing of it.
impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seal")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Seal {
    /// Seal under `cluster_key` for the fleet of `prefix`.
    pub fn new(cluster_key: &[u8], prefix: &str) -> Self {
        Self {
            // An HMAC accepts a key of any length.
            root: Hmac::<Sha256>::new_from_slice(cluster_key)
                .unwrap_or_else(|_| unreachable!("HMAC takes keys of every length")),
            prefix: prefix.to_string(),
        }
    }

    /// `body` sealed for `purpose` at `key` (and `field`, for a hash or a
    /// part of a record; `""` when none).
    pub fn seal(&self, purpose: Purpose, key: &str, field: &str, body: &str) -> String {
        let tag = hex::encode(self.mac(purpose, key, field, body).finalize().into_bytes());
        format!("{tag}{body}")
    }

    /// The record in `sealed`, if a holder of the cluster key sealed it for
    /// `purpose` at `key` and `field`.
    pub fn open<'a>(
        &self,
        purpose: Purpose,
        key: &str,
        field: &str,
        sealed: &'a str,
    ) -> Result<&'a str, Tampered> {
        let tampered = || Tampered {
            purpose: purpose.name(),
            key: key.to_string(),
        };
        let (tag, body) = sealed.split_at_checked(TAG_HEX).ok_or_else(tampered)?;
        let tag = hex::decode(tag).map_err(|_| tampered())?;
        self.mac(purpose, key, field, body)
            .verify_slice(&tag)
            .map_err(|_| tampered())?;
        Ok(body)
    }

    /// A key of its own for `purpose` in this fleet, for what signs with a
    /// key it is given (rmcp's request-state codec): a secret, never shown.
    pub fn derived_key(&self, purpose: Purpose) -> [u8; 32] {
        let mut derive = self.root.clone();
        derive.update(b"toolhost fleet key v1\0");
        for part in [purpose.name(), self.prefix.as_str()] {
            derive.update(&(part.len() as u64).to_be_bytes());
            derive.update(part.as_bytes());
        }
        derive.finalize().into_bytes().into()
    }

    fn mac(&self, purpose: Purpose, key: &str, field: &str, body: &str) -> Hmac<Sha256> {
        // The purpose's own key, then every part length-prefixed, so no two
        // different records give one input.
        let mut derive = self.root.clone();
        derive.update(b"toolhost fleet record v1\0");
        derive.update(purpose.name().as_bytes());
        let purpose_key = derive.finalize().into_bytes();
        let mut mac = Hmac::<Sha256>::new_from_slice(&purpose_key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of every length"));
        for part in [self.prefix.as_str(), key, field, body] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_only_where_and_for_what_it_was_sealed() {
        let seal = Seal::new(&[7; 32], "toolhost");
        let sealed = seal.seal(Purpose::Session, "toolhost:session:ses_a", "", "{\"id\":1}");
        assert_eq!(
            seal.open(Purpose::Session, "toolhost:session:ses_a", "", &sealed),
            Ok("{\"id\":1}")
        );
        for (purpose, key, field) in [
            (Purpose::Reminder, "toolhost:session:ses_a", ""),
            (Purpose::Session, "toolhost:session:ses_b", ""),
            (Purpose::Session, "toolhost:session:ses_a", "x"),
        ] {
            assert!(seal.open(purpose, key, field, &sealed).is_err());
        }
        let forged = format!("{}{}", &sealed[..TAG_HEX], "{\"id\":2}");
        assert!(
            seal.open(Purpose::Session, "toolhost:session:ses_a", "", &forged)
                .is_err()
        );
        let other_fleet = Seal::new(&[7; 32], "other");
        assert_ne!(
            seal.derived_key(Purpose::McpRequestState),
            other_fleet.derived_key(Purpose::McpRequestState)
        );
        assert_ne!(
            seal.derived_key(Purpose::McpRequestState),
            seal.derived_key(Purpose::Session)
        );
        assert_eq!(
            seal.derived_key(Purpose::McpRequestState),
            Seal::new(&[7; 32], "toolhost").derived_key(Purpose::McpRequestState)
        );
        assert!(
            other_fleet
                .open(Purpose::Session, "toolhost:session:ses_a", "", &sealed)
                .is_err()
        );
        let other_key = Seal::new(&[8; 32], "toolhost");
        assert!(
            other_key
                .open(Purpose::Session, "toolhost:session:ses_a", "", &sealed)
                .is_err()
        );
        assert!(seal.open(Purpose::Session, "k", "", "short").is_err());
        assert!(
            seal.open(Purpose::Session, "k", "", "é".repeat(40).as_str())
                .is_err()
        );
    }
}
