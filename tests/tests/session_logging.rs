//! Scenarios: logging, through the two-peer simulator: `logging/setLevel` and the server's
//! filter in the legacy era, per-request levels in the stateless era.
//!
//! `TALARIA_SIM_SEED=<n>` replays a failing seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::json;
use talaria_core::jsonrpc::{ErrorCode, RequestId};
use talaria_core::schema::lifecycle::ServerCapabilities;
use talaria_core::schema::{Capability, LoggingLevel};
use talaria_core::session::{Event, RequestOptions, SendError};
use talaria_core::version::ProtocolVersion;
use talaria_tests::sim::{request_frame, Dir, Pair, Setup, SimConfig};

fn logging() -> ServerCapabilities {
    ServerCapabilities { logging: Some(serde_json::Map::new()), ..Default::default() }
}

fn legacy_setups() -> impl Iterator<Item = Setup> {
    Setup::ALL.into_iter().filter(|s| !s.is_stateless())
}

fn stateless_setups() -> impl Iterator<Item = Setup> {
    Setup::ALL.into_iter().filter(|s| s.is_stateless())
}

fn levels_received(pair: &Pair) -> Vec<LoggingLevel> {
    pair.client.logs().map(|l| l.level).collect()
}

#[test]
fn set_level_filters_the_servers_log_and_the_client_gets_log_events() {
    for setup in legacy_setups() {
        let server = setup.server_config().with_capabilities(logging());
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::chaos(1));
        pair.connect();
        // Before any setLevel, everything goes out.
        assert_eq!(pair.server.session.log(LoggingLevel::Debug, Some("db"), json!({"q": 1})), Ok(true), "{setup}");

        let set = pair
            .client_request("logging/setLevel", Some(json!({"level": "warning"})), RequestOptions::default())
            .unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.client.result(&set), Some(json!({})), "{setup}");
        let changed: Vec<_> = pair
            .server
            .events()
            .filter_map(|e| match e {
                Event::LogLevelChanged(l) => Some(*l),
                _ => None,
            })
            .collect();
        assert_eq!(changed, [LoggingLevel::Warning], "{setup}");
        assert!(pair.server.requests.is_empty(), "{setup}: answered by the session");

        assert_eq!(pair.server.session.log(LoggingLevel::Info, None, json!("quiet")), Ok(false), "{setup}");
        assert_eq!(pair.server.session.log(LoggingLevel::Warning, None, json!("w")), Ok(true), "{setup}");
        assert_eq!(pair.server.session.log(LoggingLevel::Emergency, None, json!("e")), Ok(true), "{setup}");
        pair.run_until_quiet();
        let mut levels = levels_received(&pair);
        levels.sort_unstable(); // the chaos pipe reorders
        assert_eq!(levels, [LoggingLevel::Debug, LoggingLevel::Warning, LoggingLevel::Emergency], "{setup}");
        let debug = pair.client.logs().find(|l| l.level == LoggingLevel::Debug).unwrap();
        assert_eq!((debug.logger.as_deref(), &debug.data), (Some("db"), &json!({"q": 1})), "{setup}");
    }
}

#[test]
fn the_configured_default_level_applies_until_set_level() {
    for setup in legacy_setups() {
        let mut server = setup.server_config().with_capabilities(logging());
        server.default_log_level = Some(LoggingLevel::Error);
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::perfect(2));
        pair.connect();
        assert_eq!(pair.server.session.log(LoggingLevel::Warning, None, json!(1)), Ok(false), "{setup}");
        assert_eq!(pair.server.session.log(LoggingLevel::Critical, None, json!(2)), Ok(true), "{setup}");
        pair.client_request("logging/setLevel", Some(json!({"level": "debug"})), RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        assert_eq!(pair.server.session.log(LoggingLevel::Debug, None, json!(3)), Ok(true), "{setup}");
        pair.run_until_quiet();
        assert_eq!(levels_received(&pair), [LoggingLevel::Critical, LoggingLevel::Debug], "{setup}");
    }
}

#[test]
fn logging_needs_the_logging_capability() {
    for setup in Setup::ALL {
        let mut pair = setup.connected(SimConfig::perfect(3));
        let missing =
            |method: &str| SendError::MissingCapability { method: method.into(), capability: Capability::Logging };
        assert_eq!(pair.server.session.log(LoggingLevel::Error, None, json!(1)), Err(missing("notifications/message")));
        if setup.is_stateless() {
            continue;
        }
        assert_eq!(
            pair.client_request("logging/setLevel", Some(json!({"level": "info"})), RequestOptions::default()),
            Err(missing("logging/setLevel")),
            "{setup}"
        );
        // A client that sends it anyway gets -32601.
        pair.inject(Dir::ToServer, &request_frame(json!("lvl"), "logging/setLevel", Some(json!({"level": "info"}))));
        pair.run_until_quiet();
        let errors = pair.server.sent_errors(&RequestId::from("lvl"));
        assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::METHOD_NOT_FOUND], "{setup}");
    }
}

#[test]
fn a_malformed_set_level_is_invalid_params() {
    for setup in legacy_setups() {
        let server = setup.server_config().with_capabilities(logging());
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::perfect(4));
        pair.connect();
        pair.inject(Dir::ToServer, &request_frame(json!("bad"), "logging/setLevel", Some(json!({"level": "loud"}))));
        pair.run_until_quiet();
        let errors = pair.server.sent_errors(&RequestId::from("bad"));
        assert_eq!(errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::INVALID_PARAMS], "{setup}");
        assert!(pair.server.events().all(|e| !matches!(e, Event::LogLevelChanged(_))), "{setup}");
    }
}

#[test]
fn stateless_logs_go_only_to_requests_that_asked() {
    for setup in stateless_setups() {
        let server = setup.server_config().with_capabilities(logging());
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::chaos(5));
        pair.connect();
        assert_eq!(
            pair.client_request("logging/setLevel", Some(json!({"level": "info"})), RequestOptions::default()),
            Err(SendError::NotInRevision { method: "logging/setLevel".into(), version: ProtocolVersion::V2026_07_28 }),
            "{setup}"
        );
        let id = pair.client_request("test/work", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let req = pair.server.take_request("test/work").unwrap();
        assert_eq!(req.meta.as_ref().unwrap().log_level, None, "{setup}");
        assert_eq!(pair.server.session.log_for(&req.reply, LoggingLevel::Emergency, None, json!(1)), Ok(false));
        assert_eq!(pair.server.session.log(LoggingLevel::Emergency, None, json!(2)), Ok(false), "{setup}");
        pair.server.respond(req, Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        assert!(pair.client.result(&id).is_some(), "{setup}");
        assert!(pair.client.logs().next().is_none(), "{setup}");
    }
}

#[test]
fn stateless_logs_follow_the_level_the_request_asked_for() {
    for setup in stateless_setups() {
        let mut client = setup.client_config();
        client.log_level = Some(LoggingLevel::Warning);
        let server = setup.server_config().with_capabilities(logging());
        let mut pair = Pair::new(client, server, SimConfig::perfect(6));
        pair.connect();
        let id = pair.client_request("test/work", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let req = pair.server.take_request("test/work").unwrap();
        assert_eq!(req.meta.as_ref().unwrap().log_level, Some(LoggingLevel::Warning), "{setup}");
        assert_eq!(pair.server.session.log_for(&req.reply, LoggingLevel::Info, None, json!("no")), Ok(false));
        assert_eq!(pair.server.session.log_for(&req.reply, LoggingLevel::Error, Some("job"), json!("yes")), Ok(true));
        pair.server.respond(req, Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        let logs: Vec<_> = pair.client.logs().map(|l| (l.level, l.logger.clone(), l.data.clone())).collect();
        assert_eq!(logs, [(LoggingLevel::Error, Some("job".to_owned()), json!("yes"))], "{setup}");
        assert!(pair.client.result(&id).is_some(), "{setup}");
        // The log came before the result it belongs to.
        let log_at =
            pair.client.log.iter().position(|l| matches!(&l.seen, talaria_tests::sim::Seen::Event(Event::Log(_))));
        let resp_at = pair
            .client
            .log
            .iter()
            .position(|l| matches!(&l.seen, talaria_tests::sim::Seen::Event(Event::Response { .. })));
        assert!(log_at < resp_at, "{setup}");
    }
}

#[test]
fn legacy_log_for_follows_the_session_level() {
    for setup in legacy_setups() {
        let server = setup.server_config().with_capabilities(logging());
        let mut pair = Pair::new(setup.client_config(), server, SimConfig::perfect(7));
        pair.connect();
        pair.client_request("logging/setLevel", Some(json!({"level": "error"})), RequestOptions::default()).unwrap();
        pair.client_request("test/work", None, RequestOptions::default()).unwrap();
        pair.run_until_quiet();
        let req = pair.server.take_request("test/work").unwrap();
        assert_eq!(req.meta, None, "{setup}: no per-request meta in the legacy era");
        assert_eq!(pair.server.session.log_for(&req.reply, LoggingLevel::Info, None, json!(1)), Ok(false), "{setup}");
        assert_eq!(pair.server.session.log_for(&req.reply, LoggingLevel::Error, None, json!(2)), Ok(true), "{setup}");
        pair.server.respond(req, Ok(json!({}))).unwrap();
        pair.run_until_quiet();
        assert_eq!(levels_received(&pair), [LoggingLevel::Error], "{setup}");
    }
}
