//! The workspace a call runs with: the session's directory when the
//! tool's grant gives one, or for a read whose session workspace cannot be
//! created, a scratch directory of its own.

use std::path::PathBuf;

use super::context::Call;
use crate::caps::workspace::DirAccess;
use crate::error::CallError;
use crate::tool::Effect;

impl Call<'_> {
    /// The workspace directory this call gets, if its grant gives one. A
    /// read whose session workspace cannot be created gets a scratch one.
    pub(super) fn workspace(&self, effect: Effect) -> Result<Option<CallWorkspace>, CallError> {
        if self.tool.policy().grants.workspace == DirAccess::None {
            return Ok(None);
        }
        let error = match self.session.workspace() {
            Ok(dir) => {
                return Ok(Some(CallWorkspace {
                    path: dir.to_path_buf(),
                    scratch: None,
                }));
            }
            Err(e) => e,
        };
        let unavailable = |reason: String| CallError::WorkspaceUnavailable {
            session: self.session.id().to_string(),
            reason,
        };
        if effect != Effect::Read {
            return Err(unavailable(error.to_string()));
        }
        let scratch = tempfile::Builder::new()
            .prefix("toolhost-ws-")
            .tempdir()
            .map_err(|e| unavailable(format!("{error}; no scratch workspace either: {e}")))?;
        self.trace.host(format!(
            "the session's workspace is unavailable ({error}); the read runs in a scratch workspace"
        ));
        Ok(Some(CallWorkspace {
            path: scratch.path().to_path_buf(),
            scratch: Some(scratch),
        }))
    }
}

/// The workspace a call runs with.
pub(super) struct CallWorkspace {
    /// The directory mounted at `/workspace`.
    pub(super) path: PathBuf,
    /// A per-call scratch directory, when the session's was unavailable.
    pub(super) scratch: Option<tempfile::TempDir>,
}
