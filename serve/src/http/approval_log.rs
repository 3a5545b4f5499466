//! The approvals one server asked for: the pending ones with what the call
//! would do and who asked, and the latest resolved ones with who decided —
//! what `GET /<slug>/v1/approvals` (and the console's Approvals page)
//! shows. A resolved entry keeps no input, so the log stays small.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolhost::call::{ApprovalDecision, ApprovalRequest};

/// Resolved approvals kept (the oldest go first).
pub const KEEP_RESOLVED: usize = 256;

/// One approval asked for.
struct Entry {
    call_id: String,
    tool_name: String,
    session_id: String,
    /// The call's input, while it waits.
    input: Option<Value>,
    /// The session owner's auth: who the call is made for.
    requested_by: Option<Value>,
    requested_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    resolution: Option<Resolution>,
}

/// An approval asked for, pending until [`Asked::decided`].
pub struct Asked<'a> {
    log: &'a ApprovalLog,
    call_id: String,
    done: bool,
}

impl Asked<'_> {
    /// The wait ended with `decision`.
    pub fn decided(mut self, decision: &ApprovalDecision) {
        let (name, by, reason) = match decision {
            ApprovalDecision::Approved { by } => ("approved", Some(by.clone()), None),
            ApprovalDecision::Denied { by, reason } => ("denied", Some(by.clone()), reason.clone()),
            ApprovalDecision::Expired { .. } => ("expired", None, None),
            ApprovalDecision::Unavailable { how } => ("unavailable", None, Some(how.clone())),
        };
        self.log.resolve(&self.call_id, name, by, reason);
        self.done = true;
    }
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.log.resolve(&self.call_id, "cancelled", None, None);
        }
    }
}

/// How an approval ended.
struct Resolution {
    decision: &'static str,
    by: Option<Value>,
    reason: Option<String>,
    at: DateTime<Utc>,
}

/// The approvals of one server, oldest first.
#[derive(Default)]
pub struct ApprovalLog {
    entries: Mutex<VecDeque<Entry>>,
}

impl ApprovalLog {
    /// `request` waits for a decision until `expires_at`, made for
    /// `requested_by`; it is pending until the returned guard is told the
    /// decision, or `cancelled` when the guard goes without one (the call
    /// was dropped).
    pub fn requested(
        &self,
        request: &ApprovalRequest,
        requested_by: Option<Value>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Asked<'_> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|e| e.call_id != request.call_id);
        entries.push_back(Entry {
            call_id: request.call_id.clone(),
            tool_name: request.tool_name.clone(),
            session_id: request.session_id.clone(),
            input: Some(request.input.clone()),
            requested_by,
            requested_at: Utc::now(),
            expires_at,
            resolution: None,
        });
        Asked {
            log: self,
            call_id: request.call_id.clone(),
            done: false,
        }
    }

    fn resolve(
        &self,
        call_id: &str,
        decision: &'static str,
        by: Option<Value>,
        reason: Option<String>,
    ) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.iter_mut().find(|e| e.call_id == call_id) {
            entry.input = None;
            entry.resolution = Some(Resolution {
                decision,
                by,
                reason,
                at: Utc::now(),
            });
        }
        let resolved = entries.iter().filter(|e| e.resolution.is_some()).count();
        let mut excess = resolved.saturating_sub(KEEP_RESOLVED);
        entries.retain(|e| {
            let drop = excess > 0 && e.resolution.is_some();
            excess -= usize::from(drop);
            !drop
        });
    }

    /// Call `call_id`'s approval as listed, if this server asked for it.
    pub fn view(&self, call_id: &str) -> Option<Value> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .find(|e| e.call_id == call_id)
            .map(Entry::to_json)
    }

    /// `{"pending": [...], "resolved": [...]}`, oldest pending first and
    /// newest resolved first.
    pub fn to_json(&self) -> Value {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let pending: Vec<Value> = entries
            .iter()
            .filter(|e| e.resolution.is_none())
            .map(Entry::to_json)
            .collect();
        let resolved: Vec<Value> = entries
            .iter()
            .rev()
            .filter(|e| e.resolution.is_some())
            .map(Entry::to_json)
            .collect();
        json!({ "pending": pending, "resolved": resolved })
    }
}

impl Entry {
    /// The entry as listed.
    fn to_json(&self) -> Value {
        let mut view = json!({
            "callId": self.call_id,
            "toolName": self.tool_name,
            "sessionId": self.session_id,
            "requestedBy": self.requested_by,
            "requestedAt": self.requested_at.to_rfc3339(),
            "expiresAt": self.expires_at.map(|at| at.to_rfc3339()),
        });
        if let Some(input) = &self.input {
            view["input"] = input.clone();
        }
        if let Some(r) = &self.resolution {
            view["decision"] = json!(r.decision);
            view["decidedBy"] = json!(r.by);
            view["reason"] = json!(r.reason);
            view["decidedAt"] = json!(r.at.to_rfc3339());
        }
        view
    }
}
