//! What the host's MCP client does with what a server sends on its own:
//! a changed tool list is announced to the reload watcher. (A server's
//! logs reach the host log through its stderr.)

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};

/// The client side of one server's connection.
#[derive(Clone)]
pub(super) struct Handler {
    server: String,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Handler {
    /// The handler of the server `server`, bumping `changes` when its tools change.
    pub(super) fn new(server: String, changes: tokio::sync::watch::Sender<u64>) -> Self {
        Self { server, changes }
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!("MCP server `{}` says its tools changed", self.server);
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost", env!("CARGO_PKG_VERSION")),
        )
    }
}
