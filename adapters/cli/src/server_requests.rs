//! What the server asks of the client: sampling and elicitation. In scripted mode they are
//! answered at once, declined unless `--elicitation` or `--sampling-reply` say otherwise
//! (scripts never hang); in interactive mode the request travels to the thread that
//! owns the terminal, which shows it and asks the user (accept, decline or cancel; the form's
//! fields one by one).
//!
//! The client's handlers run on its reader thread and block it while the user answers, so an
//! answer is only awaited while a command runs (the REPL is then waiting for questions);
//! otherwise the request is declined at once.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use talaria_core::client::Handlers;
use talaria_core::jsonrpc::{ErrorCode, ErrorObject};
use talaria_core::schema::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use talaria_core::schema::sampling::{CreateMessageRequestParams, CreateMessageResult, SamplingContent, StopReason};

use super::args::ElicitAnswer;
use super::coerce;
use super::printer::Printer;

/// How long the server's question waits for the user.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// A request from the server for the user.
pub(crate) enum Question {
    /// `sampling/createMessage`.
    Sampling(Box<CreateMessageRequestParams>, Sender<Result<CreateMessageResult, ErrorObject>>),
    /// `elicitation/create`.
    Elicit(Box<ElicitRequestParams>, Sender<ElicitResult>),
}

/// The error a declined sampling request gets (as the spec's examples: -1, user rejected).
fn declined(why: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode(-1), format!("User rejected sampling request: {why}"))
}

/// What scripted mode answers to the server's requests (`--elicitation`, `--sampling-reply`):
/// declining both by default, so that scripts never hang.
#[derive(Debug, Clone)]
pub(crate) struct Scripted {
    /// The answer to elicitation requests.
    pub(crate) elicitation: ElicitAnswer,
    /// The text sampling requests get, if they are not declined.
    pub(crate) sampling_reply: Option<String>,
}

impl Default for Scripted {
    fn default() -> Self {
        Self { elicitation: ElicitAnswer::Decline, sampling_reply: None }
    }
}

/// Handlers that answer without asking anyone (scripted mode), as `answers` says, saying what
/// they did on stderr with `-v`.
pub(crate) fn scripted(printer: &Arc<Printer>, answers: &Scripted) -> Handlers {
    let (p1, p2) = (Arc::clone(printer), Arc::clone(printer));
    let (reply, elicitation) = (answers.sampling_reply.clone(), answers.elicitation);
    // Sampling with tools is declared: a text reply is a fine answer to a request that offers
    // tools (the model chose not to use them).
    Handlers::default()
        .with_sampling_tools(move |_| {
            let Some(text) = &reply else {
                p1.verbose(1, "the server asked for sampling: declined (non-interactive; see --sampling-reply)");
                return Err(declined("talaria runs non-interactively"));
            };
            p1.verbose(1, "the server asked for sampling: answered with --sampling-reply");
            Ok(scripted_sample(text))
        })
        .with_elicitation(false, move |params| {
            let result = scripted_elicit(elicitation, params);
            let action = serde_json::to_value(result.action).unwrap_or_default();
            p2.verbose(1, &format!("the server asked for input (elicitation): {action} (non-interactive)"));
            Ok(result)
        })
}

/// The sampling answer `--sampling-reply TEXT` gives.
fn scripted_sample(text: &str) -> CreateMessageResult {
    let mut result = CreateMessageResult::new("talaria-cli", SamplingContent::text(text));
    result.stop_reason = Some(StopReason::EndTurn);
    result
}

/// The elicitation answer `--elicitation` gives to `params`.
fn scripted_elicit(answer: ElicitAnswer, params: &ElicitRequestParams) -> ElicitResult {
    match (answer, params) {
        (ElicitAnswer::AcceptDefaults, ElicitRequestParams::Form(form))
            if form.requested_schema.missing_from_defaults().is_empty() =>
        {
            ElicitResult::accept(form.requested_schema.defaults())
        }
        (ElicitAnswer::Cancel, _) => ElicitResult::new(ElicitAction::Cancel),
        _ => ElicitResult::new(ElicitAction::Decline),
    }
}

/// Handlers that pass requests to `questions` while `waiting()` says someone answers them.
pub(crate) fn asking(questions: Sender<Question>, waiting: fn() -> bool) -> Handlers {
    let sampling = Mutex::new(questions.clone());
    let elicit = Mutex::new(questions);
    Handlers::default()
        .with_sampling_tools(move |params| {
            if !waiting() {
                return Err(declined("no command is running to answer it"));
            }
            let (tx, rx) = channel();
            let sent = sampling
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send(Question::Sampling(Box::new(params.clone()), tx));
            if sent.is_err() {
                return Err(declined("nobody to ask"));
            }
            rx.recv_timeout(ANSWER_TIMEOUT).unwrap_or_else(|_| Err(declined("no answer in time")))
        })
        .with_elicitation(true, move |params| {
            if !waiting() {
                return Ok(ElicitResult::new(ElicitAction::Cancel));
            }
            let (tx, rx) = channel();
            let sent = elicit
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send(Question::Elicit(Box::new(params.clone()), tx));
            if sent.is_err() {
                return Ok(ElicitResult::new(ElicitAction::Cancel));
            }
            Ok(rx.recv_timeout(ANSWER_TIMEOUT).unwrap_or_else(|_| ElicitResult::new(ElicitAction::Cancel)))
        })
}

/// Asks the user one line; `None` when they pressed Ctrl-C or Ctrl-D.
pub(crate) type Ask<'a> = dyn FnMut(&str) -> Option<String> + 'a;

/// The time spent answering the server's questions at the terminal, in total (nanoseconds).
static ANSWERING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long the user has spent answering the server's questions so far: a command's latency
/// leaves out what it adds while the command runs (the time is the person's, not the server's).
pub(crate) fn time_answering() -> Duration {
    Duration::from_nanos(ANSWERING.load(std::sync::atomic::Ordering::Relaxed))
}

/// Answers a question through `ask`, printing the request first.
pub(crate) fn answer(question: Question, printer: &Printer, ask: &mut Ask<'_>) {
    let started = std::time::Instant::now();
    answer_now(question, printer, ask);
    let spent = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    ANSWERING.fetch_add(spent, std::sync::atomic::Ordering::Relaxed);
}

fn answer_now(question: Question, printer: &Printer, ask: &mut Ask<'_>) {
    match question {
        Question::Sampling(params, reply) => {
            let _ = reply.send(answer_sampling(&params, printer, ask));
        }
        Question::Elicit(params, reply) => {
            let _ = reply.send(answer_elicitation(&params, printer, ask));
        }
    }
}

fn answer_sampling(
    params: &CreateMessageRequestParams,
    printer: &Printer,
    ask: &mut Ask<'_>,
) -> Result<CreateMessageResult, ErrorObject> {
    let style = printer.style;
    printer.line(&style.bold(&format!("The server asks for a model reply (up to {} tokens):", params.max_tokens)));
    if let Some(system) = &params.system_prompt {
        printer.line(&format!("  {} {system}", style.dim("system:")));
    }
    for message in &params.messages {
        let role = serde_json::to_value(message.role).ok().and_then(|v| v.as_str().map(str::to_owned));
        for content in message.content.as_slice() {
            let text = match content {
                SamplingContent::Text(t) => t.text.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            printer.line(&format!("  {} {text}", style.dim(&format!("{}:", role.as_deref().unwrap_or("?")))));
        }
    }
    let offered: Vec<&str> = params.tools.iter().flatten().map(|t| t.name.as_str()).collect();
    let prompt = if offered.is_empty() {
        "reply as the model (empty to decline): ".to_owned()
    } else {
        let choice = params
            .tool_choice
            .as_ref()
            .and_then(|c| serde_json::to_value(c).ok())
            .map_or(String::new(), |c| format!(", choice {c}"));
        printer.line(&format!("  {} {}{choice}", style.dim("tools offered:"), offered.join(", ")));
        "reply as the model, or `tool NAME {json}` to call one (empty to decline): ".to_owned()
    };
    let reply = ask(&prompt).unwrap_or_default();
    let reply = reply.trim();
    if reply.is_empty() {
        printer.line("declined");
        return Err(declined("the user declined"));
    }
    let answer =
        match reply.strip_prefix("tool ").map(|rest| rest.trim().split_once(' ').unwrap_or((rest.trim(), "{}"))) {
            Some((name, input)) if offered.contains(&name) => {
                let input: Value =
                    serde_json::from_str(input).map_err(|e| ErrorObject::invalid_params(format!("tool input: {e}")))?;
                json!({
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": format!("call-{name}"), "name": name, "input": input}],
                    "model": "human-at-talaria",
                    "stopReason": "toolUse"
                })
            }
            _ => json!({
                "role": "assistant",
                "content": {"type": "text", "text": reply},
                "model": "human-at-talaria",
                "stopReason": "endTurn"
            }),
        };
    serde_json::from_value(answer).map_err(|e| ErrorObject::internal(e.to_string()))
}

fn answer_elicitation(params: &ElicitRequestParams, printer: &Printer, ask: &mut Ask<'_>) -> ElicitResult {
    let style = printer.style;
    printer.line(&style.bold(&format!("The server asks: {}", params.message().unwrap_or("(no message)"))));
    // The fields are asked in the order the server listed them.
    let order: Vec<String> = match params {
        ElicitRequestParams::Form(form) => form.requested_schema.properties.keys().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    let schema = match params {
        ElicitRequestParams::Form(form) => serde_json::to_value(&form.requested_schema).ok(),
        ElicitRequestParams::Url(url) => {
            printer.line(&format!("  open: {}", url.url));
            None
        }
        _ => None,
    };
    let action = loop {
        match ask("accept, decline or cancel? [a/d/c]: ").map(|a| a.trim().to_ascii_lowercase()) {
            None => break ElicitAction::Cancel,
            Some(a) if a == "a" || a == "accept" || a == "y" || a == "yes" => break ElicitAction::Accept,
            Some(a) if a == "d" || a == "decline" || a == "n" || a == "no" => break ElicitAction::Decline,
            Some(a) if a == "c" || a == "cancel" => break ElicitAction::Cancel,
            Some(_) => printer.line("answer a, d or c"),
        }
    };
    let (ElicitAction::Accept, Some(Value::Object(schema))) = (action, schema) else {
        return ElicitResult::new(action);
    };
    match fill_form(&schema, &order, printer, ask) {
        Some(content) => ElicitResult::accept(content),
        None => ElicitResult::new(ElicitAction::Cancel),
    }
}

/// Asks for each field of an elicitation form, in `order`; `None` if the user gave up. Each
/// answer is checked against its field's schema (type, range, length, pattern, format,
/// choices), and asked again until it fits.
fn fill_form(
    schema: &serde_json::Map<String, Value>,
    order: &[String],
    printer: &Printer,
    ask: &mut Ask<'_>,
) -> Option<BTreeMap<String, Value>> {
    let required = coerce::required(schema);
    let mut content = BTreeMap::new();
    let names = if order.is_empty() { coerce::property_names(schema) } else { order.to_vec() };
    for name in names {
        let property = coerce::property(schema, &name);
        let is_required = required.contains(&name);
        let label = property.and_then(|p| p.get("title")).and_then(Value::as_str).unwrap_or(&name).to_owned();
        let described = coerce::describe_property(property);
        if let Some(description) = property.and_then(|p| p.get("description")).and_then(Value::as_str) {
            printer.line(&format!("  {}", printer.style.dim(description)));
        }
        loop {
            let prompt = format!("  {label} ({described}{}): ", if is_required { ", required" } else { "" });
            let text = ask(&prompt)?;
            if text.is_empty() {
                if let Some(default) = property.and_then(|p| p.get("default")) {
                    content.insert(name.clone(), default.clone());
                    break;
                }
                if !is_required {
                    break;
                }
                printer.line("  this field is required");
                continue;
            }
            let text = coerce::choose(&text, property).unwrap_or(text);
            match coerce::coerce_value(&text, property, schema) {
                Ok(value) => match field_problems(property, &value) {
                    None => {
                        content.insert(name.clone(), value);
                        break;
                    }
                    Some(problems) => printer.line(&format!("  {problems}")),
                },
                Err(e) => printer.line(&format!("  {e}")),
            }
        }
    }
    Some(content)
}

/// What makes `value` unfit for the field `property` describes, if anything: the schema's
/// constraints, and the string formats elicitation forms use (which the core's validator
/// leaves to the application).
fn field_problems(property: Option<&Value>, value: &Value) -> Option<String> {
    let Some(Value::Object(field)) = property else { return None };
    let violations = talaria_core::schema::validate::validate(field, value);
    if let Some(problems) = talaria_core::schema::validate::describe(&violations) {
        return Some(problems);
    }
    let (Some(format), Some(text)) = (field.get("format").and_then(Value::as_str), value.as_str()) else { return None };
    (!fits_format(format, text)).then(|| format!("not a valid {format}"))
}

/// Whether `text` looks like the elicitation string `format` (`email`, `uri`, `date`,
/// `date-time`); other formats are not checked.
fn fits_format(format: &str, text: &str) -> bool {
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        parts.len() == 3
            && [4, 2, 2].iter().zip(&parts).all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_digit()))
    };
    match format {
        "email" => {
            text.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.')
            }) && !text.contains(char::is_whitespace)
        }
        "uri" => text.split_once(':').is_some_and(|(scheme, rest)| {
            scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
        }),
        "date" => date(text),
        "date-time" => text.split_once(['T', 't']).is_some_and(|(d, time)| date(d) && time.len() >= 8),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::style::Style;

    fn scripted(answers: &[&str]) -> impl FnMut(&str) -> Option<String> {
        let mut answers: Vec<String> = answers.iter().rev().map(|a| (*a).to_owned()).collect();
        move |_prompt| answers.pop()
    }

    #[test]
    fn elicitation_form_is_filled_field_by_field() {
        let printer = Printer::new(Style::plain(), 0, false);
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {
                "age": {"type": "integer"}, "name": {"type": "string"}}, "required": ["name"]}
        }))
        .unwrap();
        let result = answer_elicitation(&params, &printer, &mut scripted(&["x", "a", "not a number", "42", "", "Ada"]));
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(serde_json::to_value(result.content.unwrap()).unwrap(), json!({"age": 42, "name": "Ada"}));
        let declined = answer_elicitation(&params, &printer, &mut scripted(&["d"]));
        assert_eq!(declined.action, ElicitAction::Decline);
        let gone = answer_elicitation(&params, &printer, &mut scripted(&[]));
        assert_eq!(gone.action, ElicitAction::Cancel);
    }

    #[test]
    fn a_form_is_asked_in_the_servers_order_with_its_choices_checked_against_the_schema() {
        let printer = Printer::new(Style::plain(), 0, false);
        // From text, as it comes off the wire (a `json!` value would sort the fields).
        let params: ElicitRequestParams = serde_json::from_str(
            r#"{"message": "Book a table", "requestedSchema": {"type": "object", "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 12, "description": "How many people"},
                "email": {"type": "string", "format": "email"},
                "area": {"type": "string", "oneOf": [
                    {"const": "in", "title": "Inside"}, {"const": "out", "title": "Terrace"}]},
                "diet": {"type": "string", "enum": ["v", "m"], "enumNames": ["Vegetarian", "Meat"]}},
                "required": ["size", "email", "area", "diet"]}}"#,
        )
        .unwrap();
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&prompts);
        let mut answers = scripted(&["a", "500", "4", "not-an-email", "ada@example.com", "terrace", "1"]);
        let mut ask = move |prompt: &str| {
            seen.lock().unwrap().push(prompt.to_owned());
            answers(prompt)
        };
        let result = answer_elicitation(&params, &printer, &mut ask);
        assert_eq!(result.action, ElicitAction::Accept, "{:?}", prompts.lock().unwrap());
        assert_eq!(
            serde_json::to_value(result.content.unwrap()).unwrap(),
            json!({"size": 4, "email": "ada@example.com", "area": "out", "diet": "v"}),
            "500 is out of range and not-an-email no email: both asked again; titles and numbers pick choices"
        );
        let prompts = prompts.lock().unwrap();
        let fields: Vec<&str> = prompts[1..].iter().map(|p| p.trim_start().split(' ').next().unwrap()).collect();
        assert_eq!(fields, ["size", "size", "email", "email", "area", "diet"], "the server's order, not the alphabet");
        assert!(prompts[5].contains("1 Inside (in), 2 Terrace (out)"), "{}", prompts[5]);
        assert!(prompts[6].contains("1 Vegetarian (v), 2 Meat (m)"), "{}", prompts[6]);
        assert!(prompts[3].contains("format email"), "{}", prompts[3]);
    }

    #[test]
    fn sampling_reply_becomes_the_model_message() {
        let printer = Printer::new(Style::plain(), 0, false);
        let params: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10
        }))
        .unwrap();
        let result = answer_sampling(&params, &printer, &mut scripted(&["4"])).unwrap();
        assert_eq!(serde_json::to_value(&result).unwrap()["content"]["text"], "4");
        assert_eq!(answer_sampling(&params, &printer, &mut scripted(&[""])).unwrap_err().code, ErrorCode(-1));
    }
}
