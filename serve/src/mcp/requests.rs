//! The MCP requests that run a component or wait on a client: prompts,
//! resource reads, completions and tool calls.

use super::*;

/// The requests that run a component (or wait on a client): their futures
/// are most of a request's state, so the trait methods above put them on
/// the heap. rmcp moves each request's future into a task of its own, and
/// every request would otherwise pay for copying the largest.
impl ToolServer {
    pub(super) async fn prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let per_request = is_per_request(&context);
        let caller = self.caller(&context)?;
        let given = Value::Object(request.arguments.clone().unwrap_or_default());
        let binding = per_request
            .then(|| rounds::binding(caller.as_ref(), "prompts/get", &request.name, &given));
        if let (Some(binding), Some(state)) = (&binding, &request.request_state) {
            return self
                .suspended
                .resume(state, binding, request.input_responses, None, &context.ct)
                .await
                .and_then(rounds::Step::into_prompt);
        }
        let mut arguments = BTreeMap::new();
        for (name, value) in request.arguments.unwrap_or_default() {
            let Value::String(value) = value else {
                let kind = toolhost::output::json_kind(&value);
                return Err(ErrorData::invalid_params(
                    format!(
                        "argument `{name}` of prompt `{}` must be a string, not {kind}",
                        request.name
                    ),
                    Some(json!({ "code": "invalid_prompt_arguments" })),
                ));
            };
            arguments.insert(name, value);
        }
        let capabilities = context.client_capabilities();
        let (asker, rounds) = self.asker(
            &context,
            capabilities.as_ref(),
            binding,
            request.input_responses,
        );
        let (host, name) = (self.host.clone(), request.name);
        let run = async move {
            match host
                .get_prompt_asking(&name, &arguments, Arc::new(asker))
                .await
            {
                Ok(result) => Ok(events::Reply::Prompt(
                    convert::prompt_result(&name, &result).into(),
                )),
                Err(error) => Err(convert::prompt_error(&error)),
            }
        };
        self.answer(rounds, run, None, &context.ct)
            .await
            .and_then(rounds::Step::into_prompt)
    }

    /// Who a request's questions go to: the client, over its session or,
    /// for a 2026-07-28 request (one with a `binding`), in rounds that
    /// start with the answers it brought (`given`).
    fn asker(
        &self,
        context: &RequestContext<RoleServer>,
        capabilities: Option<&ClientCapabilities>,
        binding: Option<Vec<u8>>,
        given: Option<rmcp::model::InputResponses>,
    ) -> (ask::ClientAsker, Option<Rounds>) {
        let (via, rounds) = match binding {
            Some(binding) => {
                let wait = self.host.config().limits.ask_timeout();
                let (rounds, events) = rounds::CallRounds::new(wait, given.unwrap_or_default());
                let via = rounds::Via::Rounds(rounds.clone());
                (via, Some((rounds, events, binding)))
            }
            None => (rounds::Via::Session(context.peer.clone()), None),
        };
        let declared = |has: fn(&ClientCapabilities) -> bool| capabilities.is_some_and(has);
        let asker = ask::ClientAsker {
            via,
            can_elicit: declared(|c| c.elicitation.is_some()),
            can_sample: declared(|c| c.sampling.is_some()),
            can_list_roots: declared(|c| c.roots.is_some()),
        };
        (asker, rounds)
    }

    /// Run `run` to the request's answer: in `rounds` when it has them
    /// (it may ask, and the request is answered with its first round), in
    /// the request otherwise. A cancelled request stops it.
    async fn answer<F>(
        &self,
        rounds: Option<Rounds>,
        run: F,
        plan: Option<tasks::Plan>,
        cancelled: &CancellationToken,
    ) -> Result<rounds::Step, ErrorData>
    where
        F: Future<Output = Result<events::Reply, ErrorData>> + Send + 'static,
    {
        match rounds {
            Some((rounds, events, binding)) => {
                self.suspended
                    .start(binding, rounds, events, run, plan, cancelled)
                    .await
            }
            None => {
                tokio::select! {
                    // The call first: one that is done at once registers no
                    // waker with the cancellation token.
                    biased;
                    response = run => response.map(rounds::Step::Finished),
                    // Dropping the call stops the tool where it is.
                    () = cancelled.cancelled() => {
                        Err(ErrorData::internal_error("the request was cancelled", None))
                    }
                }
            }
        }
    }

    pub(super) async fn read(
        &self,
        request: ReadResourceRequestParams,
        caller: Option<&Value>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some((session, name)) = toolhost::artifacts::parse_uri(&request.uri) {
            let not_found = || {
                ErrorData::resource_not_found(
                    format!("no session {session} that this client may read"),
                    Some(json!({ "code": "session_not_found", "uri": request.uri })),
                )
            };
            let session = self
                .sessions
                .get(session)
                .filter(|s| s.admits(caller))
                .ok_or_else(not_found)?;
            let (name, uri) = (name.to_string(), request.uri.clone());
            return tokio::task::spawn_blocking(move || {
                resources::read_artifact(&session, &name, &uri)
            })
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map(|read| ReadResourceResult::new(read).into());
        }
        match self.host.read_resource(&request.uri).await {
            Ok(read) => Ok(ReadResourceResult::new(resources::contents(read)).into()),
            Err(error) => Err(resources::error(&error)),
        }
    }

    /// Completions for a prompt's argument; a resource template's get
    /// none (components complete only their prompts' arguments).
    pub(super) async fn completion(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let Reference::Prompt(prompt) = &request.r#ref else {
            return Ok(CompleteResult::default());
        };
        let completions = self
            .host
            .complete_prompt_argument(
                &prompt.name,
                &request.argument.name,
                &request.argument.value,
            )
            .await
            .map_err(|error| convert::prompt_error(&error))?;
        let has_more = completions.has_more();
        let total = u32::try_from(completions.total).ok();
        let completion = CompletionInfo::with_pagination(completions.values, total, has_more)
            .map_err(|reason| ErrorData::internal_error(reason, None))?;
        Ok(CompleteResult::new(completion))
    }

    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let per_request = is_per_request(&context);
        let caller = self.caller(&context)?;
        let name = request.name.to_string();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let binding =
            per_request.then(|| rounds::binding(caller.as_ref(), "tools/call", &name, &input));
        // Decoded once: each look at `_meta` decodes it again.
        let capabilities = context.client_capabilities();
        if let (Some(binding), Some(state)) = (&binding, &request.request_state) {
            let support = self.host.registry().get(&name).map(|t| t.policy().task);
            let plan = self.task_plan(capabilities.as_ref(), support, caller.as_ref())?;
            return self
                .suspended
                .resume(state, binding, request.input_responses, plan, &context.ct)
                .await
                .and_then(rounds::Step::into_call);
        }
        let session = self.session_for(&context.meta, caller.as_ref()).await?;
        let registry = self
            .host
            .version_for(&session)
            .await
            .map_err(|e| {
                ErrorData::invalid_params(e.to_string(), Some(json!({ "code": e.code() })))
            })?
            .registry()
            .clone();
        let Some(tool) = registry.get(&name).filter(|t| t.runs_on_host()).cloned() else {
            return Err(not_callable(&registry, &name));
        };
        let plan = match per_request {
            true => self.task_plan(
                capabilities.as_ref(),
                Some(tool.policy().task),
                caller.as_ref(),
            )?,
            false => None,
        };
        let client = context
            .client_info()
            .map_or_else(|| "the MCP client".to_string(), |i| i.name);
        let (asker, rounds) = self.asker(
            &context,
            capabilities.as_ref(),
            binding,
            request.input_responses,
        );
        let approver = approve::ElicitApprover {
            via: asker.via.clone(),
            can_elicit: asker.can_elicit,
            client,
        };
        let progress = context.meta.get_progress_token();
        let level = match per_request {
            true => notify::ClientLevel::of_request(context.meta.log_level()),
            false => self.log_level.clone(),
        };
        let notes = notify::CallNotes::start(&name, level, progress.clone(), context.peer.clone());
        let options = CallOptions::new(session)
            .with_approver(Arc::new(approver))
            .with_asker(Arc::new(asker))
            .with_watcher(notes.watcher());
        let run = run_call(
            self.host.clone(),
            tool,
            input,
            options,
            notes,
            progress.is_some(),
        );
        self.answer(rounds, run, plan, &context.ct)
            .await
            .and_then(rounds::Step::into_call)
    }

    /// How a 2026-07-28 call of `caller`'s to a tool with `support` may
    /// become a task: never when the tool's calls may not or the client did
    /// not declare the Tasks extension (a tool whose calls must be tasks is
    /// then refused with `-32021`).
    fn task_plan(
        &self,
        capabilities: Option<&ClientCapabilities>,
        support: Option<TaskSupport>,
        caller: Option<&Value>,
    ) -> Result<Option<tasks::Plan>, ErrorData> {
        let declared = capabilities.is_some_and(ClientCapabilities::supports_tasks);
        match support {
            Some(TaskSupport::Required) if !declared => {
                Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ))
            }
            Some(support @ (TaskSupport::Optional | TaskSupport::Required)) if declared => {
                Ok(Some(tasks::Plan {
                    tasks: self.tasks.clone(),
                    support,
                    after: self.host.config().server.task_after(),
                    owner: task_owner(caller),
                }))
            }
            _ => Ok(None),
        }
    }
}

/// A 2026-07-28 request's rounds: the call's side, what it tells, and the
/// binding of its request states.
type Rounds = (
    Arc<rounds::CallRounds>,
    tokio::sync::mpsc::Receiver<events::Event>,
    Vec<u8>,
);

/// Why `name` cannot be called from `registry`: not callable here, or
/// unknown (with the tools that are).
fn not_callable(registry: &Registry, name: &str) -> ErrorData {
    let agent_tool = registry
        .get(name)
        .is_some_and(|t| t.agent_script().is_some());
    let reason = match agent_tool {
        true => Some(toolhost::agent_tools::refusal(name)),
        false => registry.not_callable_reason(name),
    };
    if let Some(reason) = reason {
        return ErrorData::invalid_params(
            format!("tool `{name}` cannot be called here: {reason}"),
            Some(json!({ "code": "tool_not_callable" })),
        );
    }
    let known: Vec<&str> = registry
        .tools()
        .filter(|t| t.runs_on_host())
        .map(|t| t.name())
        .collect();
    ErrorData::invalid_params(
        format!("unknown tool `{name}` (available: {})", known.join(", ")),
        Some(json!({ "code": "unknown_tool", "availableTools": known })),
    )
}

/// Run `tool` with `input` and `options` to its response: its notes sent
/// (a heartbeat every second when the client asked for progress and the
/// tool reports none), its outcome in MCP's terms, with what ended it when
/// the tool did not answer (a trap, a limit, a refusal).
async fn run_call(
    host: Arc<Host>,
    tool: Arc<toolhost::registry::Tool>,
    input: Value,
    options: CallOptions,
    notes: notify::CallNotes,
    wants_progress: bool,
) -> Result<events::Reply, ErrorData> {
    let name = tool.name().to_string();
    let mut call = std::pin::pin!(host.call(&name, input, &options));
    let started = Instant::now();
    let mut ticks = wants_progress.then(|| {
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY)
    });
    let outcome = loop {
        tokio::select! {
            biased;
            outcome = &mut call => break outcome,
            () = next_tick(&mut ticks) => {
                let elapsed = started.elapsed().as_secs_f64();
                notes.heartbeat(elapsed, format!("`{name}` running for {elapsed:.0} s"));
            }
        }
    };
    notes.finish().await;
    let (response, failure) = match outcome {
        Ok(result) => (
            convert::result(&tool, &result),
            result.trace.failure.clone(),
        ),
        Err(CallError::InvalidInput { tool, errors }) => {
            (convert::invalid_input(&tool, &errors), None)
        }
        Err(error @ CallError::UnknownTool { .. }) => {
            return Err(ErrorData::invalid_params(
                error.to_string(),
                Some(json!({ "code": error.code() })),
            ));
        }
        Err(error) => (
            convert::refusal(error.code(), error.to_string()),
            Some(error.to_string()),
        ),
    };
    Ok(events::Reply::Call {
        response: response.into(),
        failure,
    })
}

/// The next progress tick, or never when the client asked for no progress.
async fn next_tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}
