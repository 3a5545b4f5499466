//! `toolhost:tool/context`: where the call's sandbox keeps files, as the
//! SDK page's `ctx.workspaceDir` and `ctx.stateRoot` name them.
//!
//! Always served; it only tells the tool which preopens
//! [`super::workspace::WasiSetup`] gave this instance, so the answer and
//! the sandbox never disagree.

use wasmtime::component::HasSelf;

use super::workspace::{GUEST_PATH, Preopens, STATE_GUEST_PATH};
use super::{CallScope, Capability, Grants, Outside};
use crate::bindings::toolhost::tool::context::Host;

/// The directories one instance has mounted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Whether `/workspace` is there.
    pub workspace: bool,
    /// Whether `/state` is there.
    pub state: bool,
}

impl Capability for Mounts {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        let preopens = Preopens::of(grants, scope);
        Ok(Self {
            workspace: preopens.workspace.is_some(),
            state: preopens.state.is_some(),
        })
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::default())
    }
}

impl Host for Mounts {
    fn workspace_dir(&mut self) -> Option<String> {
        self.workspace.then(|| GUEST_PATH.to_string())
    }

    fn state_root(&mut self) -> Option<String> {
        self.state.then(|| STATE_GUEST_PATH.to_string())
    }
}

/// Link `toolhost:tool/context` into a linker whose store data holds the
/// instance's [`Mounts`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut Mounts,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::context::add_to_linker::<T, HasSelf<Mounts>>(linker, get)
}
