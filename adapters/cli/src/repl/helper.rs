//! Tab completion: command names; tool, prompt, resource and template names; argument names
//! (`key=`) from schemas and prompt declarations; enum values and booleans; and prompt
//! arguments and template variables through the server's own `completion/complete`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use serde_json::Value;
use talaria_core::client::CallOptions;
use talaria_core::schema::completion::{
    CompleteRequestParams, CompletionArgument, PromptReference, ResourceTemplateReference,
};
use talaria_core::schema::prompts::ListPrompts;
use talaria_core::schema::resources::{ListResourceTemplates, ListResources};
use talaria_core::schema::tools::ListTools;
use talaria_core::schema::PaginatedRequestParams;

use crate::catalog::{Catalog, Lists};
use crate::coerce;
use crate::commands::{lookup, COMMANDS};
use crate::split::{split_words, word_start};
use talaria::client::{CallFuture, Client};

/// How long completion waits for the server.
const SERVER_WAIT: Duration = Duration::from_secs(2);

/// The REPL's line-editor helper.
pub(crate) struct ReplHelper {
    /// What the server offers.
    pub(crate) catalog: Arc<Catalog>,
    /// The connection (replaced on `initialize`), for lists not fetched yet and for the
    /// server's completions.
    pub(crate) client: Arc<Mutex<Option<Client>>>,
}

impl ReplHelper {
    fn client(&self) -> Option<Client> {
        self.client.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The lists, fetching (briefly) the ones the completion needs and does not have.
    fn lists(&self, need: Need) -> Lists {
        let lists = self.catalog.lists();
        let Some(client) = self.client() else { return lists };
        let client = client.to_async();
        match need {
            Need::Tools if lists.tools.is_none() => {
                if let Some(page) =
                    within(client.call::<ListTools>(&PaginatedRequestParams::default(), CallOptions::default()))
                {
                    self.catalog.update(|l| l.tools = Some(page.tools));
                }
            }
            Need::Prompts if lists.prompts.is_none() => {
                if let Some(page) =
                    within(client.call::<ListPrompts>(&PaginatedRequestParams::default(), CallOptions::default()))
                {
                    self.catalog.update(|l| l.prompts = Some(page.prompts));
                }
            }
            Need::Resources if lists.resources.is_none() || lists.templates.is_none() => {
                let params = PaginatedRequestParams::default();
                if let Some(page) = within(client.call::<ListResources>(&params, CallOptions::default())) {
                    self.catalog.update(|l| l.resources = Some(page.resources));
                }
                if let Some(page) = within(client.call::<ListResourceTemplates>(&params, CallOptions::default())) {
                    self.catalog.update(|l| l.templates = Some(page.resource_templates));
                }
            }
            _ => return lists,
        }
        self.catalog.lists()
    }

    /// The candidates for the word `current`, after the complete words `before`.
    pub(crate) fn candidates(&self, before: &[String], current: &str) -> Vec<String> {
        let Some(first) = before.first() else {
            let typed = current.replace('-', "_");
            return COMMANDS.iter().map(|c| c.name.to_owned()).filter(|n| n.starts_with(&typed)).collect();
        };
        let Some(spec) = lookup(first) else { return Vec::new() };
        let found = match (spec.name, before.len()) {
            ("help", 1) => COMMANDS.iter().map(|c| c.name.to_owned()).collect(),
            ("call_tool", 1) => self.lists(Need::Tools).tools.unwrap_or_default().into_iter().map(|t| t.name).collect(),
            ("call_tool", _) => self.tool_arguments(&before[1], &before[2..], current),
            ("get_prompt", 1) => {
                self.lists(Need::Prompts).prompts.unwrap_or_default().into_iter().map(|p| p.name).collect()
            }
            ("get_prompt", _) => self.prompt_arguments(&before[1], &before[2..], current),
            ("read_resource" | "subscribe" | "unsubscribe", 1) => {
                let lists = self.lists(Need::Resources);
                let mut uris: Vec<String> = lists.resources.unwrap_or_default().into_iter().map(|r| r.uri).collect();
                // A template offers what comes before its first variable; Tab again asks the
                // server for the variable's values.
                uris.extend(
                    lists
                        .templates
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|t| t.uri_template.find('{').map(|open| t.uri_template[..open].to_owned())),
                );
                uris
            }
            ("complete", 1) => {
                let mut refs: Vec<String> =
                    self.lists(Need::Prompts).prompts.unwrap_or_default().into_iter().map(|p| p.name).collect();
                refs.extend(
                    self.lists(Need::Resources).templates.unwrap_or_default().into_iter().map(|t| t.uri_template),
                );
                refs
            }
            ("complete", 2) => self.reference_arguments(&before[1]),
            ("set_log_level", 1) => ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
                .map(str::to_owned)
                .to_vec(),
            ("roots", 1) => ["list", "add", "remove"].map(str::to_owned).to_vec(),
            ("wire", 1) => ["on", "off"].map(str::to_owned).to_vec(),
            _ => Vec::new(),
        };
        found.into_iter().filter(|c| c.starts_with(current)).collect()
    }

    /// `key=` for unused properties, or `key=value` for enum and boolean values.
    fn tool_arguments(&self, tool: &str, used: &[String], current: &str) -> Vec<String> {
        let tools = self.lists(Need::Tools).tools.unwrap_or_default();
        let Some(tool) = tools.into_iter().find(|t| t.name == tool) else { return Vec::new() };
        let schema = &tool.input_schema;
        if let Some((key, _)) = current.split_once('=') {
            let Some(property) = coerce::property(schema, key) else { return Vec::new() };
            let mut values = coerce::enum_values(property);
            if values.is_empty() && coerce::types(property).iter().any(|t| t == "boolean") {
                values = vec!["true".into(), "false".into()];
            }
            return values.into_iter().map(|v| format!("{key}={v}")).collect();
        }
        let given: Vec<&str> =
            used.iter().filter_map(|w| w.split_once('=').map(|(k, _)| k.trim_end_matches(':'))).collect();
        coerce::property_names(schema)
            .into_iter()
            .filter(|n| !given.contains(&n.as_str()))
            .map(|n| format!("{n}="))
            .collect()
    }

    /// `name=` for undeclared-yet arguments, or the server's completions of `name=partial`.
    fn prompt_arguments(&self, prompt: &str, used: &[String], current: &str) -> Vec<String> {
        let context: Vec<(String, String)> =
            used.iter().filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned()))).collect();
        if let Some((key, partial)) = current.split_once('=') {
            let reference = PromptReference::new(prompt);
            let mut params = CompleteRequestParams::new(reference, CompletionArgument::new(key, partial));
            if !context.is_empty() {
                let arguments: serde_json::Map<String, Value> =
                    context.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
                params.context = serde_json::from_value(serde_json::json!({"arguments": arguments})).ok();
            }
            return self.server_values(params).into_iter().map(|v| format!("{key}={v}")).collect();
        }
        let prompts = self.lists(Need::Prompts).prompts.unwrap_or_default();
        let Some(prompt) = prompts.into_iter().find(|p| p.name == prompt) else { return Vec::new() };
        prompt
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| a.name)
            .filter(|n| !context.iter().any(|(k, _)| k == n))
            .map(|n| format!("{n}="))
            .collect()
    }

    /// The arguments of a prompt, or the variables of a template, `complete REF <here>`.
    fn reference_arguments(&self, reference: &str) -> Vec<String> {
        if reference.contains('{') {
            return template_variables(reference);
        }
        let prompts = self.lists(Need::Prompts).prompts.unwrap_or_default();
        prompts
            .into_iter()
            .find(|p| p.name == reference)
            .and_then(|p| p.arguments)
            .unwrap_or_default()
            .into_iter()
            .map(|a| a.name)
            .collect()
    }

    /// The server's completion values, or none if it does not answer in time.
    fn server_values(&self, params: CompleteRequestParams) -> Vec<String> {
        let Some(client) = self.client() else { return Vec::new() };
        within(client.to_async().complete(params)).map(|r| r.completion.values).unwrap_or_default()
    }

    /// Completes a template variable through the server: `read_resource notes://<TAB>`.
    pub(crate) fn template_values(&self, template: &str, variable: &str, partial: &str) -> Vec<String> {
        let params = CompleteRequestParams::new(
            ResourceTemplateReference::new(template),
            CompletionArgument::new(variable, partial),
        );
        self.server_values(params)
    }
}

/// Which list a completion needs.
#[derive(Clone, Copy)]
enum Need {
    Tools,
    Prompts,
    Resources,
}

/// The call's result if it comes within [`SERVER_WAIT`] (dropping it cancels it otherwise).
fn within<T>(future: CallFuture<T>) -> Option<T> {
    smol::block_on(smol::future::or(async { future.await.ok() }, async {
        smol::Timer::after(SERVER_WAIT).await;
        None
    }))
}

/// The variable names of a URI template: `notes://{id}` -> `id`.
pub(crate) fn template_variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else { break };
        let inner = rest[open + 1..open + close].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        names.extend(inner.split(',').map(|n| n.trim_end_matches('*').split(':').next().unwrap_or("").to_owned()));
        rest = &rest[open + close + 1..];
    }
    names.retain(|n| !n.is_empty());
    names
}

/// If `current` starts like a template's expansion (`notes://` of `notes://{id}`), the
/// template and its first variable with what was typed of it.
fn template_prefix(templates: &[String], current: &str) -> Option<(String, String, String, String)> {
    templates.iter().find_map(|template| {
        let open = template.find('{')?;
        let prefix = &template[..open];
        let partial = current.strip_prefix(prefix)?;
        let variable = template_variables(template).into_iter().next()?;
        Some((template.clone(), prefix.to_owned(), variable, partial.to_owned()))
    })
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let line = &line[..pos];
        let start = word_start(line);
        let before = split_words(&line[..start]).unwrap_or_default();
        let current = &line[start..];
        let mut found = self.candidates(&before, current);
        let is_resource_command = before.len() == 1
            && lookup(&before[0]).is_some_and(|s| matches!(s.name, "read_resource" | "subscribe" | "unsubscribe"));
        if is_resource_command {
            let templates: Vec<String> =
                self.catalog.lists().templates.unwrap_or_default().into_iter().map(|t| t.uri_template).collect();
            if let Some((template, prefix, variable, partial)) = template_prefix(&templates, current) {
                found.retain(|c| c != &prefix);
                found.extend(
                    self.template_values(&template, &variable, &partial).into_iter().map(|v| format!("{prefix}{v}")),
                );
            }
        }
        let pairs = found
            .into_iter()
            .map(|c| {
                // Unfinished words (`key=`, `notes://`) take no space after them.
                let replacement = if c.ends_with(['=', '/', ':']) { c.clone() } else { format!("{c} ") };
                Pair { display: c, replacement }
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {}

impl Validator for ReplHelper {}

impl Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables_are_found() {
        assert_eq!(template_variables("notes://{id}"), ["id"]);
        assert_eq!(template_variables("x://{+path}/{a,b*}{?q}"), ["path", "a", "b", "q"]);
        let templates = vec!["notes://{id}".to_owned()];
        assert_eq!(
            template_prefix(&templates, "notes://4"),
            Some(("notes://{id}".into(), "notes://".into(), "id".into(), "4".into()))
        );
        assert_eq!(template_prefix(&templates, "file://"), None);
    }

    #[test]
    fn commands_complete_without_a_server() {
        let helper = ReplHelper { catalog: Arc::new(Catalog::default()), client: Arc::new(Mutex::new(None)) };
        assert_eq!(helper.candidates(&[], "list_t"), ["list_tools", "list_tasks", "list_templates"]);
        assert_eq!(helper.candidates(&[], "call-"), ["call_tool", "call_tool_as_task"]);
        assert_eq!(helper.candidates(&["set_log_level".into()], "w"), ["warning"]);
        assert!(helper.candidates(&["call_tool".into()], "").is_empty());
    }
}
