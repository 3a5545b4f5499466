//! Host bindings for the toolhost contract (`toolhost:tool/contract`), of
//! every version the host runs: the current one (`wit/`), and 0.1.0
//! ([`v0_1`]), whose components keep loading; and for the optional
//! `prompts` export (`toolhost:tool/prompt-provider`). The rest of the host
//! sees one [`ContractPre`] and one [`Contract`], whose calls take and
//! return the current types.

use wasmtime::Store;
use wasmtime::component::InstancePre;

use self::prompt_provider::exports::toolhost::tool::prompts as guest_prompts;

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

mod prompt_provider {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "toolhost:tool/prompt-provider",
        exports: { default: async },
        with: { "toolhost:tool/types": crate::bindings::types },
    });
}

pub use self::current::exports::toolhost::tool::tool as guest;
pub use self::current::toolhost::tool::types;
pub use self::current::{toolhost, wasi};
#[cfg(test)]
pub use self::guest_prompts::PromptArgument;
pub use self::guest_prompts::{Prompt, PromptResult, Role};

/// A component that implements the contract, its imports resolved: ready to
/// instantiate once per call.
pub(crate) enum ContractPre<T: 'static> {
    /// Built against the current contract; `prompts` when it offers some.
    Current {
        pre: InstancePre<T>,
        tool: current::ContractIndices,
        prompts: Option<prompt_provider::PromptProviderIndices>,
    },
    /// Built against contract 0.1.0.
    V0_1(v0_1::ContractPre<T>),
}

impl<T: 'static> Clone for ContractPre<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Current { pre, tool, prompts } => Self::Current {
                pre: pre.clone(),
                tool: tool.clone(),
                prompts: prompts.clone(),
            },
            Self::V0_1(pre) => Self::V0_1(pre.clone()),
        }
    }
}

/// The export of a component that offers prompts.
const PROMPTS_EXPORT: &str = "toolhost:tool/prompts@0.2.0";

/// Why a component is not a contract component the host can run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContractError {
    /// It implements no version of the contract (it may be a plain component).
    #[error("it implements no version of the toolhost contract: {0:#}")]
    Missing(wasmtime::Error),
    /// It exports `prompts`, but not as the contract defines it.
    #[error("its `{PROMPTS_EXPORT}` export does not match the contract: {0:#}")]
    BadPrompts(wasmtime::Error),
}

impl<T: Send + 'static> ContractPre<T> {
    /// The contract `pre`'s component implements, newest first.
    pub fn new(pre: InstancePre<T>) -> Result<Self, ContractError> {
        match current::ContractIndices::new(&pre) {
            Ok(tool) => {
                let prompts = match pre.component().get_export_index(None, PROMPTS_EXPORT) {
                    None => None,
                    Some(_) => Some(
                        prompt_provider::PromptProviderIndices::new(&pre)
                            .map_err(ContractError::BadPrompts)?,
                    ),
                };
                Ok(Self::Current { pre, tool, prompts })
            }
            Err(error) => v0_1::ContractPre::new(pre)
                .map(Self::V0_1)
                .map_err(|_| ContractError::Missing(error)),
        }
    }

    /// The code under the contract.
    pub fn instance_pre(&self) -> &InstancePre<T> {
        match self {
            Self::Current { pre, .. } => pre,
            Self::V0_1(pre) => pre.instance_pre(),
        }
    }

    /// A fresh instance in `store`.
    pub async fn instantiate_async(&self, store: &mut Store<T>) -> wasmtime::Result<Contract> {
        Ok(match self {
            Self::Current { pre, tool, prompts } => {
                let instance = pre.instantiate_async(&mut *store).await?;
                Contract::Current {
                    tool: tool.load(&mut *store, &instance)?,
                    instance,
                    prompts: prompts.clone(),
                }
            }
            Self::V0_1(pre) => Contract::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

/// One instance of a contract component: its exports, called with and
/// answering in the current contract's types.
pub(crate) enum Contract {
    /// Built against the current contract; `prompts` when it offers some
    /// (loaded from `instance` only when asked: a tool call never is).
    Current {
        tool: current::Contract,
        instance: wasmtime::component::Instance,
        prompts: Option<prompt_provider::PromptProviderIndices>,
    },
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
            Self::Current { tool, .. } => tool.toolhost_tool_tool().call_metadata(store).await,
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
            Self::Current { tool, .. } => {
                tool.toolhost_tool_tool()
                    .call_effect_for(store, input)
                    .await
            }
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
            Self::Current { tool, .. } => {
                tool.toolhost_tool_tool()
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
            Self::Current { tool, .. } => {
                tool.toolhost_tool_tool()
                    .call_execute(store, input, ctx)
                    .await
            }
            Self::V0_1(c) => Ok(c
                .toolhost_tool_tool()
                .call_execute(store, input, &ctx.clone().into())
                .await?
                .map(Into::into)
                .map_err(Into::into)),
        }
    }

    /// The `prompts` export, when the component has one.
    fn prompts<T>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<Option<prompt_provider::PromptProvider>> {
        match self {
            Self::Current {
                instance,
                prompts: Some(prompts),
                ..
            } => Ok(Some(prompts.load(store, instance)?)),
            _ => Ok(None),
        }
    }

    /// `prompts.list-prompts`; none when the component offers no prompts.
    pub async fn call_list_prompts<T: Send>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<Vec<Prompt>> {
        match self.prompts(store)? {
            Some(provider) => {
                provider
                    .toolhost_tool_prompts()
                    .call_list_prompts(store)
                    .await
            }
            None => Ok(Vec::new()),
        }
    }

    /// `prompts.get-prompt`.
    pub async fn call_get_prompt<T: Send>(
        &self,
        store: &mut Store<T>,
        name: &str,
        arguments: &[(String, String)],
    ) -> wasmtime::Result<Result<PromptResult, String>> {
        let provider = self.prompts(store)?.ok_or_else(no_prompts)?;
        provider
            .toolhost_tool_prompts()
            .call_get_prompt(store, name, arguments)
            .await
    }

    /// `prompts.complete-argument`.
    pub async fn call_complete_argument<T: Send>(
        &self,
        store: &mut Store<T>,
        name: &str,
        argument: &str,
        value: &str,
    ) -> wasmtime::Result<Vec<String>> {
        let provider = self.prompts(store)?.ok_or_else(no_prompts)?;
        provider
            .toolhost_tool_prompts()
            .call_complete_argument(store, name, argument, value)
            .await
    }
}

fn no_prompts() -> wasmtime::Error {
    wasmtime::format_err!("the component offers no prompts")
}
