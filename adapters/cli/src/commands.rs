//! The commands, shared by scripted and interactive mode: their table (for help and
//! completion) and parsing one from words.
//!
//! Names are written with `_` or `-` alike (`call_tool`, `call-tool`).

use talaria_core::schema::LoggingLevel;

use super::exit::Failure;

/// One command's entry in the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    /// The canonical name (with `_`).
    pub(crate) name: &'static str,
    /// Other names it answers to.
    pub(crate) aliases: &'static [&'static str],
    /// Its arguments.
    pub(crate) usage: &'static str,
    /// What it does.
    pub(crate) summary: &'static str,
}

/// Every command, in the order `help` lists them.
pub(crate) const COMMANDS: &[Spec] = &[
    Spec { name: "help", aliases: &["?"], usage: "[COMMAND]", summary: "list the commands, or explain one" },
    Spec { name: "ping", aliases: &[], usage: "", summary: "check the server is alive" },
    Spec { name: "list_tools", aliases: &["tools"], usage: "", summary: "list the server's tools" },
    Spec {
        name: "call_tool",
        aliases: &["call"],
        usage: "NAME [key=value | key:=json | @file.json | {json}]...",
        summary: "call a tool (values typed by its input schema)",
    },
    Spec {
        name: "call_tool_as_task",
        aliases: &["task"],
        usage: "NAME [key=value | key:=json | @file.json | {json}]...",
        summary: "start a tool call as a task and keep its id (2025-11-25, or the 2026-07-28 tasks extension)",
    },
    Spec {
        name: "list_tasks",
        aliases: &["tasks"],
        usage: "",
        summary: "list the server's tasks for this session (2025-11-25; the extension has no list)",
    },
    Spec {
        name: "task_status",
        aliases: &["get_task"],
        usage: "[TASK-ID]",
        summary: "show a task's status (the last one started, without an id)",
    },
    Spec {
        name: "task_result",
        aliases: &[],
        usage: "[TASK-ID]",
        summary: "wait for a task to end and show its tool's result",
    },
    Spec {
        name: "watch_task",
        aliases: &["watch"],
        usage: "[TASK-ID]",
        summary: "follow a task until it ends, printing each change, then show its result (Ctrl-C stops watching, not the task)",
    },
    Spec { name: "cancel_task", aliases: &["task_cancel"], usage: "[TASK-ID]", summary: "cancel a task" },
    Spec { name: "list_prompts", aliases: &["prompts"], usage: "", summary: "list the server's prompts" },
    Spec { name: "get_prompt", aliases: &["prompt"], usage: "NAME [key=value]...", summary: "get a prompt filled in" },
    Spec { name: "list_resources", aliases: &["resources"], usage: "", summary: "list the server's resources" },
    Spec {
        name: "list_templates",
        aliases: &["templates", "list_resource_templates"],
        usage: "",
        summary: "list the server's resource templates",
    },
    Spec { name: "read_resource", aliases: &["read"], usage: "URI", summary: "read a resource" },
    Spec { name: "subscribe", aliases: &[], usage: "URI", summary: "subscribe to a resource's updates" },
    Spec { name: "unsubscribe", aliases: &[], usage: "URI", summary: "end a subscription" },
    Spec {
        name: "complete",
        aliases: &[],
        usage: "PROMPT|TEMPLATE-URI ARG[=PARTIAL] [key=value]...",
        summary: "ask the server to complete a prompt argument or template variable",
    },
    Spec {
        name: "set_log_level",
        aliases: &["log_level"],
        usage: "debug|info|notice|warning|error|critical|alert|emergency",
        summary: "choose which log messages the server sends",
    },
    Spec {
        name: "roots",
        aliases: &[],
        usage: "list | add URI [NAME] | remove URI",
        summary: "the roots offered to the server",
    },
    Spec {
        name: "show_state",
        aliases: &["state"],
        usage: "",
        summary: "negotiated revision, capabilities, server info, transport, pending requests",
    },
    Spec {
        name: "describe",
        aliases: &["describe_tool"],
        usage: "TOOL",
        summary: "a tool's declaration (schemas, annotations) and an example call",
    },
    Spec {
        name: "doctor",
        aliases: &[],
        usage: "",
        summary: "diagnose the server (revisions, capabilities, tool schemas, latency); one-shot only",
    },
    Spec {
        name: "snapshot",
        aliases: &[],
        usage: "",
        summary: "everything the server offers, as one JSON value (save it, then `diff` it)",
    },
    Spec {
        name: "diff",
        aliases: &[],
        usage: "SNAPSHOT-FILE",
        summary: "what changed since a saved snapshot (exit 3 when anything did)",
    },
    Spec {
        name: "replay",
        aliases: &[],
        usage: "RECORDING-FILE",
        summary: "send a recording's requests (--record FILE) again and compare the answers (exit 3 when any differs)",
    },
    Spec { name: "rpc", aliases: &[], usage: "METHOD [JSON]", summary: "send a raw request and show the raw result" },
    Spec { name: "notify", aliases: &[], usage: "METHOD [JSON]", summary: "send a raw notification" },
    Spec {
        name: "batch",
        aliases: &[],
        usage: "JSON-ARRAY",
        summary: "send a raw JSON-RPC batch (2025-03-26 only): items with an id are requests",
    },
    Spec { name: "wire", aliases: &["trace"], usage: "on|off", summary: "print the frames both ways (and HTTP heads)" },
    Spec { name: "initialize", aliases: &["reconnect"], usage: "", summary: "reconnect (a new handshake)" },
    Spec { name: "clear", aliases: &[], usage: "", summary: "clear the screen" },
    Spec { name: "exit", aliases: &["quit"], usage: "", summary: "leave" },
];

/// A parsed command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// `help [COMMAND]`.
    Help(Option<String>),
    /// `ping`.
    Ping,
    /// `list_tools`.
    ListTools,
    /// `call_tool NAME ARGS...` (arguments still as words: they are typed by the schema).
    CallTool {
        /// The tool.
        name: String,
        /// The argument words.
        args: Vec<String>,
    },
    /// `call_tool_as_task NAME ARGS...` (2025-11-25).
    CallToolAsTask {
        /// The tool.
        name: String,
        /// The argument words.
        args: Vec<String>,
    },
    /// `list_tasks`.
    ListTasks,
    /// `task_status [TASK-ID]` (`None`: the task this session started last).
    TaskStatus(Option<String>),
    /// `task_result [TASK-ID]`.
    TaskResult(Option<String>),
    /// `watch_task [TASK-ID]`.
    WatchTask(Option<String>),
    /// `cancel_task [TASK-ID]`.
    CancelTask(Option<String>),
    /// `list_prompts`.
    ListPrompts,
    /// `get_prompt NAME k=v...`.
    GetPrompt {
        /// The prompt.
        name: String,
        /// Its arguments.
        args: Vec<(String, String)>,
    },
    /// `list_resources`.
    ListResources,
    /// `list_templates`.
    ListTemplates,
    /// `read_resource URI`.
    ReadResource(String),
    /// `subscribe URI`.
    Subscribe(String),
    /// `unsubscribe URI`.
    Unsubscribe(String),
    /// `complete REF ARG[=PARTIAL] [k=v]...`.
    Complete {
        /// A prompt name, or a resource template URI (it contains `://` or `{`).
        reference: String,
        /// The argument or variable being completed.
        argument: String,
        /// What has been typed of it so far.
        partial: String,
        /// Arguments already chosen.
        context: Vec<(String, String)>,
    },
    /// `set_log_level LEVEL`.
    SetLogLevel(LoggingLevel),
    /// `roots list`.
    RootsList,
    /// `roots add URI [NAME]`.
    RootsAdd(String, Option<String>),
    /// `roots remove URI`.
    RootsRemove(String),
    /// `show_state`.
    ShowState,
    /// `describe TOOL`.
    Describe(String),
    /// `snapshot`.
    Snapshot,
    /// `diff FILE`.
    Diff(String),
    /// `replay FILE`.
    Replay(String),
    /// `rpc METHOD [JSON]`.
    Rpc(String, Option<String>),
    /// `notify METHOD [JSON]`.
    Notify(String, Option<String>),
    /// `batch JSON-ARRAY`.
    Batch(String),
    /// `wire on|off`.
    Wire(bool),
    /// `initialize`.
    Initialize,
    /// `clear`.
    Clear,
    /// `exit`.
    Exit,
}

/// The table entry for `word` (a name or alias, `-` or `_`).
pub(crate) fn lookup(word: &str) -> Option<&'static Spec> {
    let word = word.replace('-', "_").to_ascii_lowercase();
    COMMANDS.iter().find(|spec| spec.name == word || spec.aliases.contains(&word.as_str()))
}

/// Parses one command from its words.
///
/// # Errors
///
/// A usage failure: an unknown command, or missing or extra arguments (with the usage as hint).
pub(crate) fn parse(words: &[String]) -> Result<Command, Failure> {
    let Some((first, rest)) = words.split_first() else { return Err(Failure::usage("no command given")) };
    let Some(spec) = lookup(first) else {
        let names = COMMANDS.iter().flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()));
        let hint = match super::suggest::closest(&first.replace('-', "_"), names) {
            Some(meant) => format!("did you mean {meant}? (`help` lists the commands)"),
            None => "try `help`".to_owned(),
        };
        return Err(Failure::usage(format!("unknown command {first:?}")).with_hint(hint));
    };
    let usage = || Failure::usage(format!("usage: {} {}", spec.name, spec.usage));
    let one = || match rest {
        [only] => Ok(only.clone()),
        _ => Err(usage()),
    };
    let none = |command: Command| if rest.is_empty() { Ok(command) } else { Err(usage()) };
    match spec.name {
        "help" => match rest {
            [] => Ok(Command::Help(None)),
            [name] => Ok(Command::Help(Some(name.clone()))),
            _ => Err(usage()),
        },
        "ping" => none(Command::Ping),
        "list_tools" => none(Command::ListTools),
        "call_tool" => match rest {
            [name, args @ ..] => Ok(Command::CallTool { name: name.clone(), args: args.to_vec() }),
            [] => Err(usage()),
        },
        "call_tool_as_task" => match rest {
            [name, args @ ..] => Ok(Command::CallToolAsTask { name: name.clone(), args: args.to_vec() }),
            [] => Err(usage()),
        },
        "list_tasks" => none(Command::ListTasks),
        "task_status" | "task_result" | "watch_task" | "cancel_task" => {
            let id = match rest {
                [] => None,
                [id] => Some(id.clone()),
                _ => return Err(usage()),
            };
            Ok(match spec.name {
                "task_status" => Command::TaskStatus(id),
                "task_result" => Command::TaskResult(id),
                "watch_task" => Command::WatchTask(id),
                _ => Command::CancelTask(id),
            })
        }
        "list_prompts" => none(Command::ListPrompts),
        "get_prompt" => match rest {
            [name, args @ ..] => Ok(Command::GetPrompt { name: name.clone(), args: pairs(args)? }),
            [] => Err(usage()),
        },
        "list_resources" => none(Command::ListResources),
        "list_templates" => none(Command::ListTemplates),
        "read_resource" => one().map(Command::ReadResource),
        "subscribe" => one().map(Command::Subscribe),
        "unsubscribe" => one().map(Command::Unsubscribe),
        "complete" => parse_complete(rest).ok_or_else(usage)?,
        "set_log_level" => {
            let level = one()?;
            serde_json::from_value(serde_json::Value::String(level.to_ascii_lowercase()))
                .map(Command::SetLogLevel)
                .map_err(|_| usage())
        }
        "roots" => match rest {
            [] => Ok(Command::RootsList),
            [list] if list == "list" => Ok(Command::RootsList),
            [add, uri] if add == "add" => Ok(Command::RootsAdd(uri.clone(), None)),
            [add, uri, name] if add == "add" => Ok(Command::RootsAdd(uri.clone(), Some(name.clone()))),
            [remove, uri] if remove == "remove" => Ok(Command::RootsRemove(uri.clone())),
            _ => Err(usage()),
        },
        "show_state" => none(Command::ShowState),
        "describe" => one().map(Command::Describe),
        "snapshot" => none(Command::Snapshot),
        "doctor" => {
            Err(Failure::usage("doctor runs on its own")
                .with_hint("talaria doctor URL, or talaria <connection> doctor"))
        }
        "diff" => one().map(Command::Diff),
        "replay" => one().map(Command::Replay),
        "rpc" | "notify" => {
            let (method, params) = match rest {
                [method] => (method.clone(), None),
                [method, params] => (method.clone(), Some(params.clone())),
                _ => return Err(usage()),
            };
            Ok(if spec.name == "rpc" { Command::Rpc(method, params) } else { Command::Notify(method, params) })
        }
        "batch" => Ok(Command::Batch(one()?)),
        "wire" => match one()?.as_str() {
            "on" => Ok(Command::Wire(true)),
            "off" => Ok(Command::Wire(false)),
            _ => Err(usage()),
        },
        "initialize" => none(Command::Initialize),
        "clear" => none(Command::Clear),
        _ => none(Command::Exit),
    }
}

fn parse_complete(rest: &[String]) -> Option<Result<Command, Failure>> {
    let [reference, argument, tail @ ..] = rest else { return None };
    let (argument, partial, context_words) = match argument.split_once('=') {
        Some((name, partial)) => (name.to_owned(), partial.to_owned(), tail),
        None => match tail.split_first() {
            Some((partial, more)) if !partial.contains('=') => (argument.clone(), partial.clone(), more),
            _ => (argument.clone(), String::new(), tail),
        },
    };
    Some(pairs(context_words).map(|context| Command::Complete {
        reference: reference.clone(),
        argument,
        partial,
        context,
    }))
}

/// `key=value` words as pairs.
fn pairs(words: &[String]) -> Result<Vec<(String, String)>, Failure> {
    words
        .iter()
        .map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| Failure::usage(format!("{w:?}: expected key=value")))
        })
        .collect()
}

/// The help text: every command, or one in detail.
pub(crate) fn help(command: Option<&str>) -> Result<String, Failure> {
    if let Some(name) = command {
        let spec = lookup(name).ok_or_else(|| Failure::usage(format!("unknown command {name:?}")))?;
        let mut text = format!("{} {}\n  {}", spec.name, spec.usage, spec.summary);
        if !spec.aliases.is_empty() {
            text.push_str(&format!("\n  also: {}", spec.aliases.join(", ")));
        }
        return Ok(text);
    }
    let width = COMMANDS.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let lines: Vec<String> = COMMANDS.iter().map(|s| format!("  {:width$}  {}", s.name, s.summary)).collect();
    Ok(format!("commands (`help COMMAND` for its arguments; `-` and `_` are alike):\n{}", lines.join("\n")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn parses_every_shape() {
        assert_eq!(
            parse(&words("call-tool echo text=hi")).unwrap(),
            Command::CallTool { name: "echo".into(), args: vec!["text=hi".into()] }
        );
        assert_eq!(parse(&words("tools")).unwrap(), Command::ListTools);
        assert_eq!(
            parse(&words("get_prompt greet name=Ada")).unwrap(),
            Command::GetPrompt { name: "greet".into(), args: vec![("name".into(), "Ada".into())] }
        );
        assert_eq!(parse(&words("set_log_level DEBUG")).unwrap(), Command::SetLogLevel(LoggingLevel::Debug));
        assert_eq!(parse(&words("roots add file:///x")).unwrap(), Command::RootsAdd("file:///x".into(), None));
        assert_eq!(parse(&words("rpc ping")).unwrap(), Command::Rpc("ping".into(), None));
        assert_eq!(parse(&["batch".into(), "[]".into()]).unwrap(), Command::Batch("[]".into()));
        assert_eq!(parse(&words("quit")).unwrap(), Command::Exit);
    }

    #[test]
    fn complete_takes_arg_and_partial_either_way() {
        let expected = Command::Complete {
            reference: "greet".into(),
            argument: "name".into(),
            partial: "A".into(),
            context: vec![("tone".into(), "warm".into())],
        };
        assert_eq!(parse(&words("complete greet name=A tone=warm")).unwrap(), expected);
        assert_eq!(parse(&words("complete greet name A tone=warm")).unwrap(), expected);
        let Command::Complete { partial, .. } = parse(&words("complete greet name")).unwrap() else { panic!() };
        assert_eq!(partial, "");
    }

    #[test]
    fn mistakes_are_usage_failures_with_the_usage() {
        let failure = parse(&words("read_resource")).unwrap_err();
        assert_eq!(failure.message, "usage: read_resource URI");
        assert!(parse(&words("frobnicate")).unwrap_err().hint.unwrap().contains("help"));
        assert!(parse(&words("set_log_level loud")).is_err());
        assert!(parse(&words("ping now")).is_err());
        assert!(help(Some("call-tool")).unwrap().contains("key:=json"));
        assert!(help(None).unwrap().contains("show_state"));
    }
}
