//! Host bindings for the toolhost contract (`toolhost:tool/contract`), of
//! every version the host runs: the current one (`wit/`), and 0.1.0
//! ([`v0_1`]), whose components keep loading; and for the optional
//! `prompts` and `resources` exports (`toolhost:tool/prompt-provider`,
//! `toolhost:tool/resource-provider`). The rest of the host
//! sees one [`ContractPre`] and one [`Contract`], whose calls take and
//! return the current types.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::InstancePre;

use self::prompt_provider::exports::toolhost::tool::prompts as guest_prompts;
use self::resource_provider::exports::toolhost::tool::resources as guest_resources;

pub(crate) mod v0_1;

mod current {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "toolhost:tool/contract",
        exports: { default: async },
        // Key-value commits fsync: they run on the blocking pool, not on a
        // runtime worker (see caps::kv).
        imports: {
            // A question waits for a person or a model.
            "toolhost:tool/ask": async,
            // A save writes and fsyncs a file on the blocking pool.
            "toolhost:tool/artifacts": async,
            // Starting a session writes and fsyncs its record.
            "toolhost:tool/sessions": async,
            // Scheduling and cancelling write and fsync a file.
            "toolhost:tool/reminders": async,
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

mod resource_provider {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "toolhost:tool/resource-provider",
        exports: { default: async },
    });
}

pub use self::current::exports::toolhost::tool::tool as guest;
pub use self::current::toolhost::tool::types;
pub use self::current::{toolhost, wasi};
#[cfg(test)]
pub use self::guest_prompts::PromptArgument;
pub use self::guest_prompts::{Prompt, PromptResult, Role};
pub use self::guest_resources::{
    ReadError, ResourceContents, ResourceData, ResourceInfo, ResourceTemplate,
};

/// A component that implements the contract, its imports resolved: ready to
/// instantiate once per call.
pub(crate) enum ContractPre<T: 'static> {
    /// Built against the current contract; `offers` the prompts and
    /// resources it has.
    Current {
        pre: InstancePre<T>,
        tool: current::ContractIndices,
        offers: Arc<Offers>,
    },
    /// Built against contract 0.1.0.
    V0_1(v0_1::ContractPre<T>),
}

impl<T: 'static> Clone for ContractPre<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Current { pre, tool, offers } => Self::Current {
                pre: pre.clone(),
                tool: tool.clone(),
                offers: offers.clone(),
            },
            Self::V0_1(pre) => Self::V0_1(pre.clone()),
        }
    }
}

/// The export of a component that offers prompts.
const PROMPTS_EXPORT: &str = "toolhost:tool/prompts@0.2.2";
/// The export of a component that offers resources.
const RESOURCES_EXPORT: &str = "toolhost:tool/resources@0.2.2";

/// The optional exports a current component has, found once per component
/// (loaded from an instance only when asked: a tool call never is).
#[derive(Clone, Default)]
pub(crate) struct Offers {
    prompts: Option<prompt_provider::PromptProviderIndices>,
    resources: Option<resource_provider::ResourceProviderIndices>,
}

impl Offers {
    fn new<T: 'static>(pre: &InstancePre<T>) -> Result<Self, ContractError> {
        let has = |name| pre.component().get_export_index(None, name).is_some();
        Ok(Self {
            prompts: match has(PROMPTS_EXPORT) {
                false => None,
                true => Some(
                    prompt_provider::PromptProviderIndices::new(pre)
                        .map_err(|e| ContractError::BadExport(PROMPTS_EXPORT, e))?,
                ),
            },
            resources: match has(RESOURCES_EXPORT) {
                false => None,
                true => Some(
                    resource_provider::ResourceProviderIndices::new(pre)
                        .map_err(|e| ContractError::BadExport(RESOURCES_EXPORT, e))?,
                ),
            },
        })
    }
}

/// Why a component is not a contract component the host can run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContractError {
    /// It implements no version of the contract (it may be a plain component).
    #[error("it implements no version of the toolhost contract: {0:#}")]
    Missing(wasmtime::Error),
    /// It has an optional export (`prompts`, `resources`), but not as the
    /// contract defines it.
    #[error("its `{0}` export does not match the contract: {1:#}")]
    BadExport(&'static str, wasmtime::Error),
}

impl<T: Send + 'static> ContractPre<T> {
    /// The contract `pre`'s component implements, newest first.
    pub fn new(pre: InstancePre<T>) -> Result<Self, ContractError> {
        match current::ContractIndices::new(&pre) {
            Ok(tool) => {
                let offers = Arc::new(Offers::new(&pre)?);
                Ok(Self::Current { pre, tool, offers })
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
            Self::Current { pre, tool, offers } => {
                let instance = pre.instantiate_async(&mut *store).await?;
                Contract::Current {
                    tool: tool.load(&mut *store, &instance)?,
                    instance,
                    offers: offers.clone(),
                }
            }
            Self::V0_1(pre) => Contract::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

/// One instance of a contract component: its exports, called with and
/// answering in the current contract's types.
pub(crate) enum Contract {
    /// Built against the current contract, with the optional exports it
    /// `offers`.
    Current {
        tool: current::Contract,
        instance: wasmtime::component::Instance,
        offers: Arc<Offers>,
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
                instance, offers, ..
            } => match &offers.prompts {
                Some(prompts) => Ok(Some(prompts.load(store, instance)?)),
                None => Ok(None),
            },
            Self::V0_1(_) => Ok(None),
        }
    }

    /// The `resources` export, when the component has one.
    fn resources<T>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<Option<resource_provider::ResourceProvider>> {
        match self {
            Self::Current {
                instance, offers, ..
            } => match &offers.resources {
                Some(resources) => Ok(Some(resources.load(store, instance)?)),
                None => Ok(None),
            },
            Self::V0_1(_) => Ok(None),
        }
    }

    /// `resources.list-resources` and `resources.list-resource-templates`;
    /// none when the component offers no resources.
    pub async fn call_list_resources<T: Send>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<(Vec<ResourceInfo>, Vec<ResourceTemplate>)> {
        match self.resources(store)? {
            Some(provider) => {
                let guest = provider.toolhost_tool_resources();
                let resources = guest.call_list_resources(&mut *store).await?;
                let templates = guest.call_list_resource_templates(store).await?;
                Ok((resources, templates))
            }
            None => Ok((Vec::new(), Vec::new())),
        }
    }

    /// `resources.read-resource`.
    pub async fn call_read_resource<T: Send>(
        &self,
        store: &mut Store<T>,
        uri: &str,
        parameters: &[(String, String)],
    ) -> wasmtime::Result<Result<Vec<ResourceContents>, ReadError>> {
        let provider = self
            .resources(store)?
            .ok_or_else(|| wasmtime::format_err!("the component offers no resources"))?;
        provider
            .toolhost_tool_resources()
            .call_read_resource(store, uri, parameters)
            .await
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
