//! What Redis itself says: command counts, through a plain connection (the redis-store tests'
//! own; `common` is shared with tests that have no `redis` dependency).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use super::common::RedisServer;

/// A plain connection to `server`, to look at Redis itself.
pub fn inspect(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url()).unwrap().get_connection().unwrap()
}

/// How many times Redis ran `command` since its statistics were reset (commands that scripts
/// run count too).
pub fn calls(connection: &mut redis::Connection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(connection).unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
}
