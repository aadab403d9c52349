//! Running one command against a session: the call, its progress, its outcome as JSON (for
//! `--json` and for the renderer) and how long it took.

use std::io::IsTerminal as _;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};
use talaria_core::client::CallOptions;
use talaria_core::schema::completion::{
    CompleteRequestParams, CompletionArgument, PromptReference, ResourceTemplateReference,
};
use talaria_core::schema::lifecycle::Discover;
use talaria_core::schema::prompts::{GetPrompt, GetPromptRequestParams, ListPrompts};
use talaria_core::schema::resources::{
    ListResourceTemplates, ListResources, ReadResource, ReadResourceRequestParams, Subscribe, SubscribeRequestParams,
    Unsubscribe, UnsubscribeRequestParams,
};
use talaria_core::schema::roots::Root;
use talaria_core::schema::subscriptions::{SubscriptionFilter, SubscriptionsListen, SubscriptionsListenRequestParams};
use talaria_core::schema::tools::{ListTools, Tool};
use talaria_core::schema::{Paginated, PaginatedRequestParams, RequestMethod, RequestParams};
use talaria_core::version::Era;

use super::coerce::{self, JsonObject};
use super::commands::Command;
use super::connect::Session;
use super::exit::{Failure, Kind};
use super::printer::Printer;
use super::progress::ProgressView;
use super::surface;
use super::wait::{self, Ui};
use talaria::client::{ClientError, MAX_LIST_PAGES};
use talaria_core::session::CallError;

/// What a command produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// The result as JSON (what `--json` prints).
    pub(crate) value: Value,
    /// How to show it to a person.
    pub(crate) shape: Shape,
    /// A tool result with `isError` set (exit code 3).
    pub(crate) tool_error: bool,
    /// How long it took.
    pub(crate) elapsed: Duration,
}

/// The kind of result, for the renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `{"tools": [...]}`.
    Tools,
    /// A `CallToolResult`.
    ToolResult,
    /// `{"prompts": [...]}`.
    Prompts,
    /// A `GetPromptResult`.
    Prompt,
    /// `{"resources": [...]}`.
    Resources,
    /// `{"resourceTemplates": [...]}`.
    Templates,
    /// A `ReadResourceResult`.
    Contents,
    /// A `CompleteResult`.
    Completion,
    /// `{}` from ping.
    Pong,
    /// `{"roots": [...]}`.
    Roots,
    /// The connection's state.
    State,
    /// Anything else: shown as JSON.
    Raw,
    /// A one-line confirmation (`{"ok": true, "message": ...}`).
    Done,
}

/// Runs commands against a session.
pub(crate) struct Exec<'a> {
    /// The session.
    pub(crate) session: &'a Session,
    /// Where lines for a person go.
    pub(crate) printer: &'a Arc<Printer>,
    /// The person, if any.
    pub(crate) ui: &'a mut dyn Ui,
    /// Check tool arguments against the input schema before sending.
    pub(crate) validate: bool,
}

impl Exec<'_> {
    /// Runs `command`.
    ///
    /// # Errors
    ///
    /// Why it failed.
    pub(crate) fn run(&mut self, command: &Command) -> Result<Outcome, Failure> {
        let started = Instant::now();
        let answered_before = super::server_requests::time_answering();
        // The server's latency: the time the user spent answering its questions is theirs.
        let elapsed = || {
            let answering = super::server_requests::time_answering().saturating_sub(answered_before);
            started.elapsed().saturating_sub(answering)
        };
        let (value, shape, tool_error) = match command {
            Command::Ping => {
                // The stateless era has no `ping`; `server/discover` shows the server alive.
                if self.session.client.protocol_version().era() == Era::Stateless {
                    self.typed::<Discover>(&RequestParams::default())?;
                } else {
                    let client = self.session.client.to_async();
                    self.wait(|| client.ping())?;
                }
                (json!({}), Shape::Pong, false)
            }
            Command::ListTools => {
                let tools = self.tools()?;
                (json!({"tools": tools}), Shape::Tools, false)
            }
            Command::CallTool { name, args } => return self.call_tool(name, args, elapsed),
            Command::CallToolAsTask { .. }
            | Command::ListTasks
            | Command::TaskStatus(_)
            | Command::TaskResult(_)
            | Command::WatchTask(_)
            | Command::CancelTask(_) => return self.run_task(command, &elapsed),
            Command::ListPrompts => {
                let prompts = self.list_all::<ListPrompts>()?;
                self.session.catalog.update(|l| l.prompts = Some(prompts.clone()));
                (json!({"prompts": prompts}), Shape::Prompts, false)
            }
            Command::GetPrompt { name, args } => (self.get_prompt(name, args)?, Shape::Prompt, false),
            Command::ListResources => {
                let resources = self.list_all::<ListResources>()?;
                self.session.catalog.update(|l| l.resources = Some(resources.clone()));
                (json!({"resources": resources}), Shape::Resources, false)
            }
            Command::ListTemplates => {
                let templates = self.list_all::<ListResourceTemplates>()?;
                self.session.catalog.update(|l| l.templates = Some(templates.clone()));
                (json!({"resourceTemplates": templates}), Shape::Templates, false)
            }
            Command::ReadResource(uri) => {
                let result = self.typed::<ReadResource>(&ReadResourceRequestParams::new(uri.as_str()))?;
                (to_json(&result)?, Shape::Contents, false)
            }
            Command::Subscribe(uri) if self.session.client.protocol_version().era() == Era::Stateless => {
                // 2026-07-28: a subscriptions/listen stream carries the resource's updates.
                let filter =
                    SubscriptionFilter { resource_subscriptions: Some(vec![uri.clone()]), ..Default::default() };
                let params = SubscriptionsListenRequestParams::new(filter);
                let listen =
                    self.session.client.to_async().call::<SubscriptionsListen>(&params, CallOptions::default());
                if listen.id().is_none() {
                    // Not sent: the future holds why, and resolves at once.
                    let refused =
                        smol::block_on(listen).err().map_or_else(|| Failure::usage("not sent"), Failure::from);
                    return Err(refused);
                }
                self.session.listens.lock().unwrap_or_else(PoisonError::into_inner).insert(uri.clone(), listen);
                self.printer.set_logs(true);
                (done(&format!("subscribed to {uri} (a subscriptions/listen stream)")), Shape::Done, false)
            }
            Command::Subscribe(uri) => {
                self.typed::<Subscribe>(&SubscribeRequestParams::new(uri.as_str()))?;
                self.printer.set_logs(true);
                (done(&format!("subscribed to {uri}")), Shape::Done, false)
            }
            Command::Unsubscribe(uri) if self.session.client.protocol_version().era() == Era::Stateless => {
                // Dropping the listen call cancels its stream.
                let gone = self.session.listens.lock().unwrap_or_else(PoisonError::into_inner).remove(uri).is_some();
                let message =
                    if gone { format!("unsubscribed from {uri}") } else { format!("not subscribed to {uri}") };
                (done(&message), Shape::Done, false)
            }
            Command::Unsubscribe(uri) => {
                self.typed::<Unsubscribe>(&UnsubscribeRequestParams::new(uri.as_str()))?;
                (done(&format!("unsubscribed from {uri}")), Shape::Done, false)
            }
            Command::Complete { reference, argument, partial, context } => {
                (self.complete(reference, argument, partial, context)?, Shape::Completion, false)
            }
            Command::SetLogLevel(level) => {
                let name = serde_json::to_value(level).unwrap_or_default();
                let name = name.as_str().unwrap_or("?");
                if self.session.client.protocol_version().era() == Era::Stateless {
                    // 2026-07-28: the level travels with each request; there is nothing to send.
                    self.session.client.set_request_log_level(Some(*level));
                    self.printer.set_logs(true);
                    (done(&format!("log level set to {name} (asked with each request)")), Shape::Done, false)
                } else {
                    let client = self.session.client.to_async();
                    self.wait(|| client.set_log_level(*level))?;
                    self.printer.set_logs(true);
                    (done(&format!("log level set to {name}")), Shape::Done, false)
                }
            }
            Command::RootsList => (json!({"roots": self.session.client.roots()}), Shape::Roots, false),
            Command::RootsAdd(uri, name) => {
                let root: Root = serde_json::from_value(json!({"uri": uri, "name": name}))
                    .map_err(|e| Failure::usage(format!("bad root: {e}")))?;
                let added = self.session.client.add_root(root).map_err(Failure::from)?;
                let message = if added { format!("root {uri} added") } else { format!("root {uri} was there already") };
                (done(&message), Shape::Done, false)
            }
            Command::RootsRemove(uri) => {
                let removed = self.session.client.remove_root(uri).map_err(Failure::from)?;
                let message = if removed { format!("root {uri} removed") } else { format!("no root {uri}") };
                (done(&message), Shape::Done, false)
            }
            Command::ShowState => (self.state(), Shape::State, false),
            Command::Describe(name) => (self.describe(name)?, Shape::Raw, false),
            Command::Snapshot => (self.snapshot()?, Shape::Raw, false),
            Command::Diff(file) => {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| Failure::usage(format!("cannot read the snapshot {file}: {e}")))?;
                let before: Value = serde_json::from_str(&text)
                    .map_err(|e| Failure::usage(format!("{file} is not a snapshot (JSON): {e}")))?;
                let found = surface::diff(&before, &self.snapshot()?);
                let changed = found["same"] == false;
                (found, Shape::Raw, changed)
            }
            Command::Replay(file) => {
                let recording =
                    super::recording::Recording::read(std::path::Path::new(file)).map_err(Failure::usage)?;
                let client = self.session.client.clone();
                let job = move || Ok(super::replay::replay(&client, &recording));
                let (report, differs) = wait::run(&self.session.client, None, job, self.ui, self.printer)?;
                (report, Shape::Raw, differs)
            }
            Command::Rpc(method, params) => (self.rpc(method, params.as_deref())?, Shape::Raw, false),
            Command::Batch(items) => {
                let (answers, failed) = self.batch(items)?;
                (answers, Shape::Raw, failed)
            }
            Command::Notify(method, params) => {
                let raw = raw_params(params.as_deref())?;
                self.session.client.notify(method, raw).map_err(Failure::from)?;
                (done(&format!("sent {method}")), Shape::Done, false)
            }
            Command::Help(_) | Command::Wire(_) | Command::Initialize | Command::Clear | Command::Exit => {
                return Err(Failure::usage("this command is handled by the session loop"));
            }
        };
        Ok(Outcome { value, shape, tool_error, elapsed: elapsed() })
    }

    /// Sends the call `send` makes and waits for it (see [`wait::call`]).
    pub(super) fn wait<T: Send + 'static>(
        &mut self,
        send: impl FnOnce() -> talaria::client::CallFuture<T>,
    ) -> Result<T, Failure> {
        wait::call(&self.session.client, send, self.ui, self.printer).map_err(|f| self.session.explain(f))
    }

    pub(super) fn typed<M: RequestMethod>(&mut self, params: &M::Params) -> Result<M::Result, Failure>
    where
        M::Result: Send + 'static,
    {
        let client = self.session.client.to_async();
        self.wait(|| client.call::<M>(params, CallOptions::default()))
    }

    /// Every item of a paginated list, page by page (each page cancellable).
    fn list_all<M>(&mut self) -> Result<Vec<<M::Result as Paginated>::Item>, Failure>
    where
        M: RequestMethod<Params = PaginatedRequestParams>,
        M::Result: Paginated + Send + 'static,
    {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor.map_or_else(PaginatedRequestParams::default, PaginatedRequestParams::after);
            let page = self.typed::<M>(&params)?;
            cursor = page.next_cursor().map(str::to_owned);
            items.extend(page.into_items());
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(Failure::new(Kind::Protocol, format!("{} still had more after {MAX_LIST_PAGES} pages", M::INFO.name)))
    }

    /// The tools, listed now (and remembered).
    fn tools(&mut self) -> Result<Vec<Tool>, Failure> {
        let tools = self.list_all::<ListTools>()?;
        self.session.catalog.update(|l| l.tools = Some(tools.clone()));
        Ok(tools)
    }

    /// The tool's description: remembered, or listed now; `None` if it does not exist.
    fn tool(&mut self, name: &str) -> Result<Option<Tool>, Failure> {
        if self.session.catalog.lists().tools.is_none() {
            self.tools()?;
        }
        Ok(self.session.catalog.tool(name))
    }

    fn call_tool(&mut self, name: &str, words: &[String], elapsed: impl Fn() -> Duration) -> Result<Outcome, Failure> {
        let args = self.tool_arguments(name, words)?;
        let view = ProgressView::new(self.printer, name, std::io::stderr().is_terminal());
        let options = CallOptions::default().with_progress(view.callback());
        let client = self.session.client.to_async();
        let result = self.wait(|| client.call_tool_with(name, Value::Object(args), options));
        view.finish();
        let result = result?;
        Ok(Outcome {
            value: to_json(&result)?,
            shape: Shape::ToolResult,
            tool_error: result.is_error(),
            elapsed: elapsed(),
        })
    }

    /// The task `id` names, or without one the task this session started last.
    pub(super) fn task_id(&self, id: Option<&str>) -> Result<String, Failure> {
        id.map(str::to_owned)
            .or_else(|| self.session.last_task.lock().unwrap_or_else(PoisonError::into_inner).clone())
            .ok_or_else(|| Failure::usage("no task started yet: name one").with_hint("start one with `task TOOL ...`"))
    }

    /// A tool's arguments from `words`, typed by its input schema (the missing required ones
    /// asked for at the prompt, and all checked, unless validation is off).
    pub(super) fn tool_arguments(&mut self, name: &str, words: &[String]) -> Result<JsonObject, Failure> {
        let tool = match self.tool(name) {
            Ok(tool) => tool,
            Err(failure) if failure.kind == Kind::Protocol => None,
            Err(failure) => return Err(failure),
        };
        let empty = JsonObject::new();
        let schema = tool.as_ref().map_or(&empty, |t| &t.input_schema);
        if let (None, true, Some(listed)) = (&tool, self.validate, self.session.catalog.lists().tools) {
            let known: Vec<String> = listed.into_iter().map(|t| t.name).collect();
            let hint = match super::suggest::closest(name, known.iter().map(String::as_str)) {
                Some(meant) => format!("did you mean {meant}? (tools: {})", known.join(", ")),
                None => format!("tools: {}", known.join(", ")),
            };
            return Err(Failure::usage(format!("unknown tool {name:?}")).with_hint(hint));
        }
        let mut args = coerce::tool_arguments(schema, words, self.validate).map_err(|f| {
            if f.hint.is_none() {
                f.with_hint(format!("example: {}", coerce::example(name, schema)))
            } else {
                f
            }
        })?;
        if self.ui.interactive() {
            self.ask_missing(schema, &mut args)?;
        }
        if self.validate {
            coerce::check(name, schema, &args)?;
        }
        Ok(args)
    }

    /// Prompts for each required argument that is missing, from the schema.
    fn ask_missing(&mut self, schema: &JsonObject, args: &mut JsonObject) -> Result<(), Failure> {
        for name in coerce::required(schema) {
            if args.contains_key(&name) {
                continue;
            }
            let property = coerce::property(schema, &name);
            let description = property.and_then(|p| p.get("description")).and_then(Value::as_str);
            let about = coerce::describe_property(property);
            let prompt = match description {
                Some(d) => format!("{name} ({about}; {d}): "),
                None => format!("{name} ({about}): "),
            };
            loop {
                let Some(text) = self.ui.ask(&prompt) else {
                    return Err(Failure::new(Kind::Interrupted, "cancelled"));
                };
                if text.is_empty() {
                    if let Some(default) = property.and_then(|p| p.get("default")) {
                        args.insert(name.clone(), default.clone());
                        break;
                    }
                    continue;
                }
                let text = coerce::choose(&text, property).unwrap_or(text);
                match coerce::coerce_value(&text, property, schema) {
                    Ok(value) => {
                        args.insert(name.clone(), value);
                        break;
                    }
                    Err(e) => self.printer.line(&format!("  {e}")),
                }
            }
        }
        Ok(())
    }

    fn get_prompt(&mut self, name: &str, args: &[(String, String)]) -> Result<Value, Failure> {
        let mut args = args.to_vec();
        if self.session.catalog.lists().prompts.is_none() {
            if let Ok(prompts) = self.list_all::<ListPrompts>() {
                self.session.catalog.update(|l| l.prompts = Some(prompts));
            }
        }
        if let Some(prompt) = self.session.catalog.prompt(name) {
            for argument in prompt.arguments.iter().flatten().filter(|a| a.is_required()) {
                if args.iter().any(|(k, _)| *k == argument.name) {
                    continue;
                }
                if !self.ui.interactive() {
                    if self.validate {
                        return Err(Failure::usage(format!(
                            "get_prompt {name}: missing required argument {:?}",
                            argument.name
                        ))
                        .with_hint(format!("example: get_prompt {name} {}=<value>", argument.name)));
                    }
                    continue;
                }
                let about = argument.description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
                let Some(value) = self.ui.ask(&format!("{}{about}: ", argument.name)) else {
                    return Err(Failure::new(Kind::Interrupted, "cancelled"));
                };
                args.push((argument.name.clone(), value));
            }
        }
        let mut params = GetPromptRequestParams::new(name);
        for (key, value) in args {
            params = params.with_argument(key, value);
        }
        to_json(&self.typed::<GetPrompt>(&params)?)
    }

    fn complete(
        &mut self,
        reference: &str,
        argument: &str,
        partial: &str,
        context: &[(String, String)],
    ) -> Result<Value, Failure> {
        let argument = CompletionArgument::new(argument, partial);
        let mut params = if reference.contains("://") || reference.contains('{') {
            CompleteRequestParams::new(ResourceTemplateReference::new(reference), argument)
        } else {
            CompleteRequestParams::new(PromptReference::new(reference), argument)
        };
        if !context.is_empty() {
            let arguments: serde_json::Map<String, Value> =
                context.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            params.context = serde_json::from_value(json!({"arguments": arguments})).ok();
        }
        let client = self.session.client.to_async();
        to_json(&self.wait(|| client.complete(params))?)
    }

    fn rpc(&mut self, method: &str, params: Option<&str>) -> Result<Value, Failure> {
        let raw = raw_params(params)?;
        let client = self.session.client.clone();
        let method = method.to_owned();
        let result = wait::run(&self.session.client, None, move || client.request(&method, raw), self.ui, self.printer)
            .map_err(|f| self.session.explain(f))?;
        serde_json::from_str(result.get()).map_err(|e| Failure::new(Kind::Protocol, format!("malformed result: {e}")))
    }

    /// Sends a raw batch; shows each request's answer in order, under the id the command
    /// gave it (`{"id", "result"}` or `{"id", "error"}`: the server's JSON-RPC error object, or
    /// `{"kind", "message"}` for a local failure), and whether any failed.
    fn batch(&mut self, text: &str) -> Result<(Value, bool), Failure> {
        let (items, ids) = batch_items(text)?;
        let client = self.session.client.clone();
        let answers = wait::run(&self.session.client, None, move || client.batch(items), self.ui, self.printer)
            .map_err(|f| self.session.explain(f))?;
        let failed = answers.iter().any(Result::is_err);
        let shown = answers
            .into_iter()
            .zip(ids)
            .map(|(answer, id)| match answer {
                Ok(raw) => json!({"id": id, "result": serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null)}),
                Err(ClientError::Call(CallError::Remote(error))) => json!({"id": id, "error": error}),
                Err(e) => {
                    let failure = Failure::from(e);
                    json!({"id": id, "error": {"kind": failure.kind.name(), "message": failure.message}})
                }
            })
            .collect();
        Ok((Value::Array(shown), failed))
    }

    /// `describe TOOL`: the tool's declaration and an example call.
    fn describe(&mut self, name: &str) -> Result<Value, Failure> {
        let Some(tool) = self.tool(name)? else {
            let known: Vec<String> =
                self.session.catalog.lists().tools.unwrap_or_default().into_iter().map(|t| t.name).collect();
            let hint = match super::suggest::closest(name, known.iter().map(String::as_str)) {
                Some(meant) => format!("did you mean {meant}? (tools: {})", known.join(", ")),
                None => format!("tools: {}", known.join(", ")),
            };
            return Err(Failure::usage(format!("unknown tool {name:?}")).with_hint(hint));
        };
        Ok(surface::describe_tool(&to_json(&tool)?))
    }

    /// `snapshot`: everything the server offers, each list fetched whole (those its
    /// capabilities announce).
    fn snapshot(&mut self) -> Result<Value, Failure> {
        let caps = self.session.client.server_capabilities().cloned().unwrap_or_default();
        let tools = if caps.tools.is_some() { to_json(&self.tools()?)? } else { json!([]) };
        let prompts = if caps.prompts.is_some() { to_json(&self.list_all::<ListPrompts>()?)? } else { json!([]) };
        let (resources, templates) = if caps.resources.is_some() {
            (to_json(&self.list_all::<ListResources>()?)?, to_json(&self.list_all::<ListResourceTemplates>()?)?)
        } else {
            (json!([]), json!([]))
        };
        let list = |v: Value| match v {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        Ok(surface::snapshot(&self.state(), [list(tools), list(prompts), list(resources), list(templates)]))
    }

    fn state(&self) -> Value {
        let client = &self.session.client;
        json!({
            "transport": self.session.transport,
            "target": self.session.target.describe(),
            "protocolVersion": client.protocol_version().as_str(),
            "serverInfo": client.server_info(),
            "capabilities": client.server_capabilities(),
            "instructions": client.instructions(),
            "sessionId": client.session_id(),
            "pendingRequests": client.pending_calls(),
            "roots": client.roots(),
            "connectMs": u64::try_from(self.session.connect_time.as_millis()).unwrap_or(u64::MAX),
            "serverExited": client.exit_status().map(|s| s.to_string()),
        })
    }
}

pub(super) fn to_json<T: Serialize>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure::new(Kind::Protocol, format!("cannot show the result: {e}")))
}

pub(super) fn done(message: &str) -> Value {
    json!({"ok": true, "message": message})
}

/// The items of a `batch` argument: a JSON array of messages; those with an `id` are requests
/// (the session gives them its own ids), the others notifications.
/// The batch's messages, and the ids its requests carried, in order (the session sends them
/// under ids of its own; answers are shown under these).
fn batch_items(text: &str) -> Result<(Vec<talaria_core::session::BatchItem>, Vec<Value>), Failure> {
    let usage = |why: &str| Failure::usage(format!("{why}; e.g. batch '[{{\"id\":1,\"method\":\"ping\"}}]'"));
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return Err(usage("batch takes a JSON array of messages"));
    };
    let ids = items.iter().filter_map(|item| item.get("id").cloned()).collect();
    let items = items
        .into_iter()
        .map(|item| {
            let Some(method) = item.get("method").and_then(Value::as_str).map(str::to_owned) else {
                return Err(usage("each batch item needs a \"method\""));
            };
            let params = item
                .get("params")
                .map(serde_json::value::to_raw_value)
                .transpose()
                .map_err(|e| usage(&format!("bad params: {e}")))?;
            Ok(if item.get("id").is_some() {
                talaria_core::session::BatchItem::Request { method, params, options: Default::default() }
            } else {
                talaria_core::session::BatchItem::Notification { method, params }
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((items, ids))
}

fn raw_params(params: Option<&str>) -> Result<Option<Box<serde_json::value::RawValue>>, Failure> {
    params
        .map(|text| {
            serde_json::from_str::<Value>(text)
                .and_then(|v| serde_json::value::to_raw_value(&v))
                .map_err(|e| Failure::usage(format!("params are not JSON: {e}")))
        })
        .transpose()
}
