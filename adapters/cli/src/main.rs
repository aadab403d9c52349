//! The `talaria` command-line tool: explore and test any MCP server from a terminal. See
//! [`talaria_cli`] (`talaria --help` for the modes, commands and exit codes).

fn main() -> std::process::ExitCode {
    talaria_cli::run(std::env::args_os()).into()
}
