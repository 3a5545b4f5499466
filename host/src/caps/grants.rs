//! [`Grants`]: what one tool is granted, one field per capability, each of
//! a type its capability's module defines (with its checks and its
//! `tools.lock` entry). The config resolves it from `[tools.<name>]` over
//! `[defaults]`; empty denies everything.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::ask::Asked;
use super::http::AllowList;
use super::reminders::RemindersGrant;
use super::sessions::{Channels, Principals};
use super::workspace::{DirAccess, Env};

/// The capabilities granted to one tool. Empty denies everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    /// Workspace access.
    pub workspace: DirAccess,
    /// Access to the host's state root.
    pub state: DirAccess,
    /// Environment variables (`Debug` shows their names only).
    pub env: Env,
    /// Access to the session's artifacts.
    pub artifacts: DirAccess,
    /// Whether it may update custom metrics.
    pub metrics: bool,
    /// The channels whose sessions it may look up and send to.
    pub sessions: Channels,
    /// The principals it may send as, besides its call's own.
    pub send_as: Principals,
    /// Whether it may schedule reminders, and which tools they may call.
    pub reminders: Option<RemindersGrant>,
    /// Buckets the tool may open.
    pub kv: Vec<String>,
    /// Where the tool may send HTTP requests (shared with every call's HTTP context).
    pub http: Arc<AllowList>,
    /// Whom it may ask during a call.
    pub ask: BTreeSet<Asked>,
}
