//! A short server: three tools (typed arguments; one long-running, with progress and
//! cancellation; one with structured output), a prompt with typed arguments and a resource
//! template, served over stdio. `cargo run -p talaria-examples --bin short-server`.
use talaria::prelude::*;

talaria::args! {
    struct Greet { name: String }
    struct Count { to: u32 }
    struct Add { a: i64, b: i64 }
    struct Sum { sum: i64 }
    struct Review { code: String }
}

fn main() -> std::io::Result<()> {
    let router = Router::<()>::builder()
        .typed_tool("greet", "Greets someone", |_, a: Greet| Ok(CallToolResult::text(format!("Hello, {}!", a.name))))
        .async_tool(Tool::for_args::<Count>("count").with_description("Counts, slowly"), |job, a: Count| async move {
            for i in 1..=a.to {
                if job.is_cancelled() {
                    break;
                }
                job.progress(f64::from(i), Some(f64::from(a.to)), None);
                smol::Timer::after(std::time::Duration::from_millis(100)).await;
            }
            Ok(CallToolResult::text(format!("counted to {}", a.to)))
        })
        .typed_structured_tool("add", "Adds two integers", |_, a: Add| Ok(Sum { sum: a.a + a.b }))
        .typed_prompt(Prompt::new("review").with_argument(PromptArgument::required("code")), |_, a: Review| {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Review this code:\n{}", a.code))]))
        })
        .resource_template(ResourceTemplate::new("notes://{id}", "notes"), |_, uri, vars| {
            Ok(vec![TextResourceContents::new(uri, format!("note {}", vars["id"])).into()])
        })
        .map_err(std::io::Error::other)?
        .build();
    talaria::stdio::serve(&Server::new("short", "1.0", router))
}
