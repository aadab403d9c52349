//! The endpoint's side of the 2026-07-28 tasks extension: a `tools/call` run as a task, the
//! extension's `tasks/get`, `tasks/update` and `tasks/cancel`, and `notifications/tasks` to
//! the `subscriptions/listen` streams that follow a task.
//!
//! The server decides which calls become tasks: a call of a tool declared with
//! `taskSupport` optional or required, from a client that lists the extension in the
//! request's capabilities, whose handler runs on (a long-running tool). A tool that answers
//! at once is answered as a plain call, and so is a call of an optional one that asks for
//! progress (`progressToken`): the extension carries no progress for tasks, so such a client
//! is better served by the call it made. A client without the extension calling a tool that
//! must run as a task is refused with -32021 naming the extension, as are its task requests.

use crate::alloc_prelude::*;
use serde_json::value::RawValue;

use super::endpoint::Endpoint;
use super::extras::Extras;
use super::router::{answer, respond_adapted, Router, ToolRun};
use super::task_board::extension_required;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::lifecycle::RequestMeta;
use crate::schema::tasks::ext::{DetailedTask, TaskRequestParams, UpdateTaskRequestParams, EXTENSION_ID};
use crate::schema::tools::TaskSupport;
use crate::schema::EmptyResult;
use crate::session::{IncomingRequest, ReplyToken};

/// Whether the request's capabilities (its `_meta`) list the tasks extension.
fn declares_tasks(meta: Option<&RequestMeta>) -> bool {
    meta.and_then(|m| m.client_capabilities.as_ref()).is_some_and(|c| c.extension(EXTENSION_ID).is_some())
}

/// The `name` of `tools/call` params.
fn called_tool(params: Option<&RawValue>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Named {
        name: String,
    }
    serde_json::from_str::<Named>(params?.get()).ok().map(|n| n.name)
}

impl<S> Endpoint<S> {
    /// The identity the transport's authorization gave the caller: tasks are private to it.
    fn owner(&self) -> Option<String> {
        self.transport.as_ref().and_then(|t| t.identity.clone())
    }

    /// A stateless `tools/call` of a tool that may run as a task: run as one when the client
    /// lists the extension and the tool runs on. Gives the request back when it is to be
    /// dispatched as a plain call.
    pub(super) fn call_as_ext_task(&mut self, router: &Router<S>, request: IncomingRequest) -> Option<IncomingRequest> {
        let Some(support) = called_tool(request.params.as_deref()).and_then(|name| router.task_support(&name)) else {
            return Some(request);
        };
        let wants_progress = request.progress_token.is_some();
        if support == TaskSupport::Forbidden || (support == TaskSupport::Optional && wants_progress) {
            return Some(request);
        }
        if !declares_tasks(request.meta.as_deref()) {
            if support != TaskSupport::Required {
                return Some(request);
            }
            let refusal = extension_required("this tool runs only as a task");
            let _ = self.session.respond(request.reply, Err(refusal));
            return None;
        }
        let board = router.task_board();
        let (created, run) = match board.create(self.owner()) {
            Ok(created) => created,
            Err(error) => {
                let _ = self.session.respond(request.reply, Err(error));
                return None;
            }
        };
        let IncomingRequest { reply, method, params, meta, .. } = request;
        let detached = ReplyToken::detached(RequestId::String(format!("talaria-ext-task/{}", run.id())));
        // Progress is not carried for tasks: the call runs without its token.
        let request = IncomingRequest { reply: detached, method, params, progress_token: None, meta };
        let extras = Extras {
            cancel: run.cancel_flag().clone(),
            transport: self.transport.clone(),
            spawner: self.spawner.clone(),
            task_run: Some(run.clone()),
        };
        let _ = match router.run_tool_as_task(&mut self.session, &mut self.state, request, extras) {
            ToolRun::Deferred => self.session.respond_with(reply, &created),
            // Answered before the task was given out: a plain answer, and no task.
            ToolRun::Answer(_, outcome) => {
                board.discard(run.id());
                answer(&mut self.session, reply, outcome)
            }
            ToolRun::InputRequired(_, needed) => {
                board.discard(run.id());
                respond_adapted(&mut self.session, reply, needed)
            }
        };
        None
    }

    /// The extension's `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(super) fn on_ext_task_request(&mut self, router: &Router<S>, request: IncomingRequest) {
        let IncomingRequest { reply, method, params, meta, .. } = request;
        if !declares_tasks(meta.as_deref()) {
            let refusal = extension_required(&format!("{method} belongs to the tasks extension"));
            let _ = self.session.respond(reply, Err(refusal));
            return;
        }
        let text = params.as_deref().map_or("{}", RawValue::get);
        let invalid = |e: serde_json::Error| ErrorObject::invalid_params(format!("Invalid params for {method}: {e}"));
        let (board, owner) = (router.task_board(), self.owner());
        let owner = owner.as_deref();
        let _ = match method.as_str() {
            "tasks/get" => match serde_json::from_str::<TaskRequestParams>(text).map_err(invalid) {
                Ok(p) => match board.get(&p.task_id, owner) {
                    Ok(task) => respond_adapted(&mut self.session, reply, task),
                    Err(error) => self.session.respond(reply, Err(error)),
                },
                Err(error) => self.session.respond(reply, Err(error)),
            },
            "tasks/update" => {
                let done = serde_json::from_str::<UpdateTaskRequestParams>(text)
                    .map_err(invalid)
                    .and_then(|p| board.update(&p.task_id, owner, p.input_responses));
                self.acknowledge(reply, done)
            }
            _ => {
                let done = serde_json::from_str::<TaskRequestParams>(text)
                    .map_err(invalid)
                    .and_then(|p| board.cancel(&p.task_id, owner));
                self.acknowledge(reply, done)
            }
        };
    }

    /// Answers with an empty result (`resultType: "complete"`), or the error.
    fn acknowledge(
        &mut self,
        reply: ReplyToken,
        done: Result<(), ErrorObject>,
    ) -> Result<(), crate::session::SendError> {
        match done {
            Ok(()) => respond_adapted(&mut self.session, reply, EmptyResult::default()),
            Err(error) => self.session.respond(reply, Err(error)),
        }
    }

    /// The task ids a `subscriptions/listen` may follow: those among `wanted` that this
    /// caller may see.
    ///
    /// # Errors
    ///
    /// -32021 when the request asks for task notifications without the extension.
    pub(super) fn followed_tasks(
        &self,
        router: &Router<S>,
        wanted: Option<Vec<String>>,
        meta: Option<&RequestMeta>,
    ) -> Result<Option<Vec<String>>, ErrorObject> {
        let Some(wanted) = wanted.filter(|ids| !ids.is_empty()) else { return Ok(None) };
        if !declares_tasks(meta) {
            return Err(extension_required("task notifications belong to the tasks extension"));
        }
        Ok(Some(router.task_board().followable(&wanted, self.owner().as_deref())))
    }

    /// Tells the `subscriptions/listen` streams following `task` its new state
    /// (`notifications/tasks`). Returns whether any was told.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use talaria_core::schema::tasks::ext::{Task, TaskStatus};
    /// use talaria_core::server::Endpoint;
    /// use talaria_core::session::ServerConfig;
    /// use talaria_core::schema::Implementation;
    ///
    /// let mut endpoint = Endpoint::new(Arc::new(ServerConfig::new(Implementation::new("s", "1"))), ());
    /// let task = Task::new("t1", TaskStatus::Completed, "2026-07-28T10:00:00Z").into();
    /// assert!(!endpoint.task_changed(&task), "nobody follows it");
    /// ```
    pub fn task_changed(&mut self, task: &DetailedTask) -> bool {
        let mut told = false;
        for (reply, filter) in &self.listens {
            if filter.task_ids.iter().flatten().any(|id| *id == task.task_id) {
                let Ok(params) = serde_json::value::to_raw_value(task) else { return told };
                told |= self.session.notify_related(reply, "notifications/tasks", Some(params)).is_ok();
            }
        }
        told
    }
}
