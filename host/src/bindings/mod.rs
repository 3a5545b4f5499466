//! Host bindings for the toolhost contract (`toolhost:tool/contract`), of
//! every version the host runs: the current one (`wit/`), and 0.1.0
//! ([`v0_1`]), whose components keep loading. The rest of the host sees one
//! [`ContractPre`] and one [`Contract`], whose calls take and return the
//! current types.

use wasmtime::Store;
use wasmtime::component::InstancePre;

pub(crate) mod v0_1;

mod current {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "toolhost:tool/contract",
        exports: { default: async },
        // Key-value commits fsync: they run on the blocking pool, not on a
        // runtime worker (see caps::kv).
        imports: {
            "wasi:keyvalue/store": async,
            "wasi:keyvalue/atomics": async,
            "wasi:keyvalue/batch": async,
        },
        with: {
            "wasi:keyvalue/store.bucket": crate::caps::kv::Bucket,
            "wasi:keyvalue/atomics.cas": crate::caps::kv::Cas,
        },
    });
}

pub use self::current::exports::toolhost::tool::tool as guest;
pub use self::current::toolhost::tool::types;
pub use self::current::{toolhost, wasi};

/// A component that implements the contract, its imports resolved: ready to
/// instantiate once per call.
pub(crate) enum ContractPre<T: 'static> {
    /// Built against the current contract.
    Current(current::ContractPre<T>),
    /// Built against contract 0.1.0.
    V0_1(v0_1::ContractPre<T>),
}

impl<T: 'static> Clone for ContractPre<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Current(pre) => Self::Current(pre.clone()),
            Self::V0_1(pre) => Self::V0_1(pre.clone()),
        }
    }
}

impl<T: Send + 'static> ContractPre<T> {
    /// The contract `pre`'s component implements, newest first; an error
    /// when it implements none (it may be a plain component).
    pub fn new(pre: InstancePre<T>) -> wasmtime::Result<Self> {
        match current::ContractPre::new(pre.clone()) {
            Ok(current) => Ok(Self::Current(current)),
            Err(error) => v0_1::ContractPre::new(pre)
                .map(Self::V0_1)
                .map_err(|_| error),
        }
    }

    /// The code under the contract.
    pub fn instance_pre(&self) -> &InstancePre<T> {
        match self {
            Self::Current(pre) => pre.instance_pre(),
            Self::V0_1(pre) => pre.instance_pre(),
        }
    }

    /// A fresh instance in `store`.
    pub async fn instantiate_async(&self, store: &mut Store<T>) -> wasmtime::Result<Contract> {
        Ok(match self {
            Self::Current(pre) => Contract::Current(pre.instantiate_async(store).await?),
            Self::V0_1(pre) => Contract::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

/// One instance of a contract component: its exports, called with and
/// answering in the current contract's types.
pub(crate) enum Contract {
    /// Built against the current contract.
    Current(current::Contract),
    /// Built against contract 0.1.0.
    V0_1(v0_1::Contract),
}

impl Contract {
    /// `tool.metadata`.
    pub async fn call_metadata<T: Send>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<types::ToolMetadata> {
        match self {
            Self::Current(c) => c.toolhost_tool_tool().call_metadata(store).await,
            Self::V0_1(c) => Ok(c.toolhost_tool_tool().call_metadata(store).await?.into()),
        }
    }

    /// `tool.effect-for`.
    pub async fn call_effect_for<T: Send>(
        &self,
        store: &mut Store<T>,
        input: &str,
    ) -> wasmtime::Result<types::Effect> {
        match self {
            Self::Current(c) => c.toolhost_tool_tool().call_effect_for(store, input).await,
            Self::V0_1(c) => Ok(c
                .toolhost_tool_tool()
                .call_effect_for(store, input)
                .await?
                .into()),
        }
    }

    /// `tool.dry-run-result`.
    pub async fn call_dry_run_result<T: Send>(
        &self,
        store: &mut Store<T>,
        input: &str,
    ) -> wasmtime::Result<Option<types::ToolOutput>> {
        match self {
            Self::Current(c) => {
                c.toolhost_tool_tool()
                    .call_dry_run_result(store, input)
                    .await
            }
            Self::V0_1(c) => Ok(c
                .toolhost_tool_tool()
                .call_dry_run_result(store, input)
                .await?
                .map(Into::into)),
        }
    }

    /// `tool.execute`.
    pub async fn call_execute<T: Send>(
        &self,
        store: &mut Store<T>,
        input: &str,
        ctx: &types::CallContext,
    ) -> wasmtime::Result<Result<types::ToolOutput, types::ToolError>> {
        match self {
            Self::Current(c) => c.toolhost_tool_tool().call_execute(store, input, ctx).await,
            Self::V0_1(c) => Ok(c
                .toolhost_tool_tool()
                .call_execute(store, input, &ctx.clone().into())
                .await?
                .map(Into::into)
                .map_err(Into::into)),
        }
    }
}
