//! Resource reads beside calls: `Host::read_resource` reads an address in
//! a fresh instance of the component that offers it, admitted like a call,
//! under the tool's limits, with its grants as a read call gets them and
//! no workspace.

use super::offer;
use crate::bindings;
use crate::caps::log::TraceLog;
use crate::host::Host;
use crate::resources::{self, MAX_URI_BYTES, ResourceContents, ResourceError};

impl Host {
    /// The contents at `uri`: a resource an enabled tool's component lists,
    /// or an address matching one of their templates (the listed one
    /// first, then the templates in tool order).
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        let shown = || {
            let mut shown = uri.to_string();
            crate::caps::log::cut(&mut shown, MAX_URI_BYTES);
            shown
        };
        let not_found = |tool: Option<&str>| ResourceError::NotFound {
            uri: shown(),
            tool: tool.map(str::to_string),
        };
        if uri.len() > MAX_URI_BYTES {
            return Err(not_found(None));
        }
        let registry = self.registry();
        let (tool, parameters) = registry
            .resource(uri)
            .map(|(tool, parameters)| (tool.clone(), parameters))
            .ok_or_else(|| not_found(None))?;
        drop(registry);
        let failed = |reason: String| ResourceError::Failed {
            uri: shown(),
            tool: tool.name().to_string(),
            reason,
        };
        let trace = TraceLog::default();
        let (mut instance, _slot) = offer::instance(self, &tool, &trace, None)
            .await
            .map_err(failed)?;
        let read = instance
            .read_resource(uri, &parameters)
            .await
            .map_err(|failure| failed(failure.to_string()))?;
        match read {
            Ok(contents) => resources::check_contents(contents, tool.policy().limits.output_bytes)
                .map_err(failed),
            Err(bindings::ReadError::NotFound) => Err(not_found(Some(tool.name()))),
            Err(bindings::ReadError::Failed(message)) => {
                Err(failed(format!("the component refused: {message}")))
            }
        }
    }
}
