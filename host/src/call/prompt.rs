//! Prompt requests beside calls: `Host::get_prompt` fills a prompt in and
//! `Host::complete_prompt_argument` completes an argument, each request in
//! a fresh instance of the tool's component, admitted like a call, under
//! the tool's limits, with its grants as a read call gets them and no
//! workspace.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::offer;
use crate::admission::CallSlot;
use crate::ask::Asker;
use crate::bindings::{self, types};
use crate::caps::log::TraceLog;
use crate::host::Host;
use crate::output::ToolOutput;
use crate::prompts::{
    Completions, MAX_COMPLETION_BYTES, MAX_COMPLETIONS, PromptError, PromptMessage, PromptResult,
    PromptSpec, Role,
};
use crate::sandbox::instance::Instance;
use crate::tool;
use crate::tools::registry::Tool;

impl Host {
    /// Fill in the prompt `name` with `arguments`: each must be declared,
    /// each required one given, and together no bigger than the tool's
    /// `max_input_bytes`. The component may ask no one.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<PromptResult, PromptError> {
        self.fill_prompt(name, arguments, None).await
    }

    /// [`Host::get_prompt`], the component asking `asker` what the tool's
    /// `ask` grant lets it (as a call asks, bounded alike).
    pub async fn get_prompt_asking(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
        asker: Arc<dyn Asker>,
    ) -> Result<PromptResult, PromptError> {
        self.fill_prompt(name, arguments, Some(asker)).await
    }

    async fn fill_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<PromptResult, PromptError> {
        let (tool, prompt) = self.find_prompt(name)?;
        let invalid = |reason: String| PromptError::InvalidArguments {
            prompt: name.to_string(),
            reason,
        };
        // The size first: an error names the arguments it is about.
        let bytes: usize = arguments.iter().map(|(k, v)| k.len() + v.len()).sum();
        let max = tool.policy().limits.input_bytes;
        if bytes > max {
            return Err(invalid(format!(
                "the arguments are {bytes} bytes; at most {max} are allowed (max_input_bytes)"
            )));
        }
        for given in arguments.keys() {
            if !prompt.arguments.iter().any(|a| &a.name == given) {
                let declared: Vec<&str> =
                    prompt.arguments.iter().map(|a| a.name.as_str()).collect();
                let mut shown = given.clone();
                crate::caps::log::cut(&mut shown, tool::MAX_NAME_CHARS);
                return Err(invalid(format!(
                    "it takes no argument `{shown}` (it takes: {})",
                    if declared.is_empty() {
                        "none".to_string()
                    } else {
                        declared.join(", ")
                    }
                )));
            }
        }
        if let Some(missing) = prompt
            .arguments
            .iter()
            .find(|a| a.required && !arguments.contains_key(&a.name))
        {
            return Err(invalid(format!(
                "the argument `{}` is required",
                missing.name
            )));
        }
        let pairs: Vec<(String, String)> = arguments
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let run = Run::new(&tool, name);
        let asker = asker.map(|asker| (super::new_call_id(), asker));
        let (mut instance, _slot) = run.instance(self, asker).await?;
        let result = instance
            .get_prompt(name, &pairs)
            .await
            .map_err(|failure| run.failed(failure.to_string()))?
            .map_err(|message| run.failed(format!("the component refused: {message}")))?;
        run.convert(result)
    }

    /// Values completing `value`, the start of argument `argument` of the
    /// prompt `name`, best first (at most [`MAX_COMPLETIONS`]); `value` is
    /// bounded by the tool's `max_input_bytes`.
    pub async fn complete_prompt_argument(
        &self,
        name: &str,
        argument: &str,
        value: &str,
    ) -> Result<Completions, PromptError> {
        let (tool, prompt) = self.find_prompt(name)?;
        let invalid = |reason: String| PromptError::InvalidArguments {
            prompt: name.to_string(),
            reason,
        };
        let max = tool.policy().limits.input_bytes;
        if value.len() > max {
            return Err(invalid(format!(
                "the value to complete is {} bytes; at most {max} are allowed (max_input_bytes)",
                value.len()
            )));
        }
        if !prompt.arguments.iter().any(|a| a.name == argument) {
            let mut shown = argument.to_string();
            crate::caps::log::cut(&mut shown, tool::MAX_NAME_CHARS);
            return Err(invalid(format!("it takes no argument `{shown}`")));
        }
        let run = Run::new(&tool, name);
        let (mut instance, _slot) = run.instance(self, None).await?;
        let given = instance
            .complete_argument(name, argument, value)
            .await
            .map_err(|failure| run.failed(failure.to_string()))?;
        let fitting: Vec<String> = given
            .into_iter()
            .filter(|v| v.len() <= MAX_COMPLETION_BYTES)
            .collect();
        let total = fitting.len();
        Ok(Completions {
            values: fitting.into_iter().take(MAX_COMPLETIONS).collect(),
            total,
        })
    }

    /// The enabled tool that offers `name`, and the prompt.
    fn find_prompt(&self, name: &str) -> Result<(Arc<Tool>, PromptSpec), PromptError> {
        let registry = self.registry();
        let found = registry
            .prompt(name)
            .map(|(tool, prompt)| (tool.clone(), prompt.clone()));
        found.ok_or_else(|| PromptError::Unknown {
            name: name.to_string(),
            available: registry.prompts().map(|(_, p)| p.name.clone()).collect(),
        })
    }
}

/// One request to a prompt's component.
struct Run<'a> {
    tool: &'a Tool,
    prompt: &'a str,
    trace: TraceLog,
}

impl<'a> Run<'a> {
    fn new(tool: &'a Tool, prompt: &'a str) -> Self {
        Self {
            tool,
            prompt,
            trace: TraceLog::default(),
        }
    }

    fn failed(&self, reason: String) -> PromptError {
        PromptError::Failed {
            prompt: self.prompt.to_string(),
            tool: self.tool.name().to_string(),
            reason,
        }
    }

    async fn instance(
        &self,
        host: &Host,
        asker: Option<(String, Arc<dyn Asker>)>,
    ) -> Result<(Instance, CallSlot), PromptError> {
        offer::instance(host, self.tool, &self.trace, asker)
            .await
            .map_err(|reason| self.failed(reason))
    }

    /// The component's messages, checked like a tool's output.
    fn convert(&self, result: bindings::PromptResult) -> Result<PromptResult, PromptError> {
        let roles: Vec<Role> = result
            .messages
            .iter()
            .map(|m| match m.role {
                bindings::Role::User => Role::User,
                bindings::Role::Assistant => Role::Assistant,
            })
            .collect();
        let out = types::ToolOutput {
            content: result.messages.into_iter().map(|m| m.content).collect(),
            structured: None,
            is_error: false,
        };
        let max = self.tool.policy().limits.output_bytes;
        let size =
            ToolOutput::guest_size(&out) + result.description.as_ref().map_or(0, String::len);
        if size > max {
            return Err(self.failed(format!(
                "output cap hit: the prompt is {size} bytes; at most {max} are allowed \
                 (max_output_bytes)"
            )));
        }
        ToolOutput::check_guest_shape(&out).map_err(|reason| self.failed(reason))?;
        let content = ToolOutput::from_guest(out)
            .map_err(|reason| self.failed(reason))?
            .content;
        Ok(PromptResult {
            description: result.description,
            messages: roles
                .into_iter()
                .zip(content)
                .map(|(role, content)| PromptMessage { role, content })
                .collect(),
        })
    }
}
