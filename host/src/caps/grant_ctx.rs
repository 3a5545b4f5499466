//! [`GrantCtx`]: the context of a capability granted per tool, as each
//! instance holds it.

use std::borrow::Cow;
use std::sync::Arc;

/// One instance's context of a capability granted per tool: the grant
/// (shared with its host calls in flight), or why every operation is
/// refused. The reason is a constant as a rule, so a tool without the grant
/// costs its calls no allocation.
pub struct GrantCtx<T>(Result<Arc<T>, Cow<'static, str>>);

impl<T> GrantCtx<T> {
    /// Operations allowed under `grant`.
    pub fn granted(grant: T) -> Self {
        Self(Ok(Arc::new(grant)))
    }

    /// Every operation refused, saying `why`.
    pub fn refused(why: impl Into<Cow<'static, str>>) -> Self {
        Self(Err(why.into()))
    }

    /// The grant, or the refusal the guest sees.
    pub fn grant(&self) -> Result<Arc<T>, String> {
        self.0.clone().map_err(Cow::into_owned)
    }
}
