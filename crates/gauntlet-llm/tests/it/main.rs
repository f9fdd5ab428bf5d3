//! The pool and the OpenAI-compatible provider against the mock server, over real HTTP on loopback.

use gauntlet_llm::{
    Cache, CacheMode, ChatModel, ChatRequest, LlmError, Message, ModelSpec, Pool, PoolConfig,
    ProviderConfig, ToolDef, build_model,
};
use gauntlet_mock::{Faults, MockConfig, MockServer};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn model(base_url: &str) -> Arc<dyn ChatModel> {
    let spec = ModelSpec::parse("mock/literal").unwrap_or_else(|e| panic!("{e}"));
    let cfg = ProviderConfig {
        base_url: Some(base_url.to_string()),
        ..Default::default()
    };
    build_model(&spec, &cfg).unwrap_or_else(|e| panic!("{e}"))
}

fn fast() -> PoolConfig {
    PoolConfig {
        concurrency: 8,
        timeout: Duration::from_secs(5),
        backoff_base: Duration::from_millis(5),
        backoff_max: Duration::from_secs(1),
        ..Default::default()
    }
}

fn tool_request(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system("You are an assistant."),
            Message::user(text),
        ],
        tools: vec![ToolDef {
            name: "mail.send".into(),
            description: "send".into(),
            parameters: json!({"type": "object"}),
        }]
        .into(),
        response_schema: None,
        temperature: None,
        max_tokens: None,
    }
}

#[tokio::test]
async fn tool_calls_round_trip_with_canonical_names() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(model(&mock.base_url()), fast(), None);
    let r = pool
        .chat(&tool_request(
            "Please use the mail.send tool with exactly these arguments: {\"to\": [\"a@b.test\"]}",
        ))
        .await;
    let r = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "mail.send");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r.tool_calls[0].arguments).ok(),
        Some(json!({"to": ["a@b.test"]}))
    );
    let s = pool.ledger().snapshot();
    let m = mock.stats();
    assert_eq!((s.requests, s.ok), (1, 1));
    assert_eq!(
        (s.prompt_tokens, s.completion_tokens),
        (m.prompt_tokens, m.completion_tokens)
    );
}

#[tokio::test]
async fn faults_are_retried_and_the_ledger_matches_the_mock() {
    let faults = Faults {
        rate_429: 0.2,
        rate_500: 0.1,
        rate_malformed: 0.05,
        ..Default::default()
    };
    let mock = MockServer::start_local(MockConfig {
        faults,
        retry_after_ms: 20,
        seed: 3,
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let pool = Arc::new(Pool::new(
        model(&mock.base_url()),
        PoolConfig {
            max_retries: 20,
            ..fast()
        },
        None,
    ));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            pool.chat(&tool_request(&format!("hello {i}")))
                .await
                .map(|_| ())
        }));
    }
    for t in tasks {
        let r = t.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(r.is_ok(), "{r:?}");
    }
    let s = pool.ledger().snapshot();
    let m = mock.stats();
    assert_eq!(s.requests, m.requests, "every attempt reached the mock");
    assert_eq!(s.ok, 100);
    assert_eq!(s.rate_limited, m.rate_limited);
    assert_eq!(s.server_errors, m.server_errors);
    assert_eq!(s.malformed, m.malformed);
    assert_eq!(s.retries, m.rate_limited + m.server_errors + m.malformed);
    assert!(
        m.rate_limited > 0 && m.server_errors > 0 && m.malformed > 0,
        "{m:?}"
    );
    assert_eq!(
        (s.prompt_tokens, s.completion_tokens),
        (m.prompt_tokens, m.completion_tokens)
    );
    // Each 429 asked for 20 ms and was honoured.
    assert!(s.retry_wait_ms >= 20 * m.rate_limited, "{s:?}");
}

#[tokio::test]
async fn hangs_time_out_and_errors_say_why() {
    let faults = Faults {
        rate_hang: 1.0,
        ..Default::default()
    };
    let mock = MockServer::start_local(MockConfig {
        faults,
        hang: Duration::from_secs(5),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(
        model(&mock.base_url()),
        PoolConfig {
            timeout: Duration::from_millis(150),
            max_retries: 1,
            ..fast()
        },
        None,
    );
    let r = pool.chat(&tool_request("hi")).await;
    assert!(matches!(r, Err(LlmError::Timeout(_))), "{r:?}");
    assert_eq!(pool.ledger().snapshot().timeouts, 2);
}

#[tokio::test]
async fn a_4xx_is_not_retried() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(model(&format!("{}/nope", mock.base_url())), fast(), None);
    let r = pool.chat(&tool_request("hi")).await;
    assert!(
        matches!(r, Err(LlmError::Http { status: 404, .. })),
        "{r:?}"
    );
    assert_eq!(pool.ledger().snapshot().requests, 1);
}

#[tokio::test]
async fn a_model_that_refuses_every_request_is_stopped_after_three() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(model(&format!("{}/nope", mock.base_url())), fast(), None);
    for _ in 0..gauntlet_llm::BREAKER_AFTER {
        let r = pool.chat(&tool_request("hi")).await;
        assert!(
            matches!(r, Err(LlmError::Http { status: 404, .. })),
            "{r:?}"
        );
    }
    let why = pool
        .stopped()
        .unwrap_or_else(|| panic!("the breaker tripped"));
    assert!(
        why.contains("HTTP 404") && why.contains("base URL"),
        "{why}"
    );
    let r = pool.chat(&tool_request("hi")).await;
    assert!(
        matches!(&r, Err(LlmError::Stopped(w)) if *w == why),
        "{r:?}"
    );
    assert_eq!(
        pool.ledger().snapshot().requests,
        3,
        "nothing sent once stopped"
    );
}

#[tokio::test]
async fn the_budget_stops_new_work() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // $1 per token: the first reply spends more than the $5 budget.
    let cfg = PoolConfig {
        price_in: 1e6,
        price_out: 1e6,
        budget: Some(5.0),
        ..fast()
    };
    let pool = Pool::new(model(&mock.base_url()), cfg, None);
    assert!(pool.chat(&tool_request("one")).await.is_ok());
    let r = pool.chat(&tool_request("two")).await;
    assert!(matches!(r, Err(LlmError::Budget(_))), "{r:?}");
    assert_eq!(
        mock.stats().requests,
        1,
        "nothing sent once the budget was spent"
    );
}

#[tokio::test]
async fn spend_carried_from_earlier_counts_against_the_budget() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = PoolConfig {
        budget: Some(5.0),
        ..fast()
    };
    let pool = Pool::new(model(&mock.base_url()), cfg, None);
    let earlier = gauntlet_llm::pool::LedgerSnapshot {
        requests: 7,
        ok: 6,
        prompt_tokens: 100,
        cost_usd: 5.25,
        ..Default::default()
    };
    pool.ledger().carry(&earlier);
    let r = pool.chat(&tool_request("one")).await;
    assert!(matches!(r, Err(LlmError::Budget(_))), "{r:?}");
    assert_eq!(
        mock.stats().requests,
        0,
        "the earlier spend used the budget up"
    );
    assert_eq!(
        pool.ledger().snapshot(),
        earlier,
        "totals include the carried counters"
    );
}

#[tokio::test]
async fn recorded_responses_replay_without_network() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let url = mock.base_url();
    let rec = Pool::new(
        model(&url),
        fast(),
        Some(Cache::new(dir.path(), CacheMode::Record)),
    );
    let req = tool_request("use the mail.send tool with exactly these arguments: {\"to\": []}");
    let first = rec.chat(&req).await.unwrap_or_else(|e| panic!("{e}"));
    drop(mock);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let replay = Pool::new(
        model(&url),
        fast(),
        Some(Cache::new(dir.path(), CacheMode::Replay)),
    );
    let again = replay.chat(&req).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first, again);
    assert_eq!(replay.ledger().snapshot().requests, 0);
    let miss = replay.chat(&tool_request("something else")).await;
    assert!(matches!(miss, Err(LlmError::CacheMiss(_))), "{miss:?}");
}

#[tokio::test]
async fn the_rpm_limit_spaces_requests() {
    let mock = MockServer::start_local(MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(
        model(&mock.base_url()),
        PoolConfig {
            rpm: Some(2),
            ..fast()
        },
        None,
    );
    assert!(pool.chat(&tool_request("a")).await.is_ok());
    assert!(pool.chat(&tool_request("b")).await.is_ok());
    // A third request within the minute must wait: it is still pending after 200 ms.
    let third =
        tokio::time::timeout(Duration::from_millis(200), pool.chat(&tool_request("c"))).await;
    assert!(
        third.is_err(),
        "the third request of the minute went through"
    );
    assert_eq!(mock.stats().requests, 2);
}

fn anthropic_model(addr: std::net::SocketAddr) -> Arc<dyn ChatModel> {
    let spec = ModelSpec::parse("mockanthropic/claude-test").unwrap_or_else(|e| panic!("{e}"));
    let cfg = ProviderConfig {
        protocol: Some(gauntlet_llm::spec::Protocol::Anthropic),
        base_url: Some(format!("http://{addr}")),
        ..Default::default()
    };
    build_model(&spec, &cfg).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_anthropic_provider_round_trips_tools_and_structured_output_over_http() {
    let faults = Faults {
        rate_429: 0.2,
        rate_500: 0.1,
        ..Default::default()
    };
    let mock = MockServer::start_local(MockConfig {
        faults,
        retry_after_ms: 10,
        seed: 5,
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(
        anthropic_model(mock.addr()),
        PoolConfig {
            max_retries: 20,
            ..fast()
        },
        None,
    );
    // Tool call, then the tool result goes back and the model answers in text.
    let mut req = tool_request(
        "use the mail.send tool with exactly these arguments: {\"to\": [\"a@b.test\"]}",
    );
    let r = pool.chat(&req).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "mail.send");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r.tool_calls[0].arguments).ok(),
        Some(json!({"to": ["a@b.test"]}))
    );
    req.messages
        .push(Message::assistant("", r.tool_calls.clone()));
    req.messages.push(Message::tool(
        r.tool_calls[0].id.clone(),
        "{\"status\": \"sent\"}",
    ));
    let r2 = pool.chat(&req).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        r2.tool_calls.is_empty() && r2.content.starts_with("Done"),
        "{r2:?}"
    );
    // Structured output through the forced tool.
    let schema = json!({"type": "object", "properties": {"message": {"type": "string"}, "give_up": {"type": "boolean"}}, "required": ["message", "give_up"]});
    let s = ChatRequest {
        messages: vec![Message::user(format!(
            "{} {{\"message\": \"hello\", \"give_up\": false}}",
            gauntlet_core::attack_text::TEMPLATE_ANSWER
        ))],
        tools: Default::default(),
        response_schema: Some(("move".into(), schema)),
        temperature: None,
        max_tokens: None,
    };
    let r3 = pool.chat(&s).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r3.content).ok(),
        Some(json!({"message": "hello", "give_up": false}))
    );
    let l = pool.ledger().snapshot();
    let m = mock.stats();
    assert_eq!((l.requests, l.ok), (m.requests, 3));
    assert_eq!(
        (l.prompt_tokens, l.completion_tokens),
        (m.prompt_tokens, m.completion_tokens)
    );
}

#[tokio::test]
async fn an_unreachable_provider_fails_fast_after_the_first_request_gives_up() {
    // A port nothing listens on: bind, read the address, close.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = PoolConfig {
        max_retries: 3,
        ..fast()
    };
    let pool = Pool::new(model(&format!("http://{addr}/v1")), cfg, None);
    let first = pool.chat(&tool_request("one")).await;
    assert!(matches!(first, Err(LlmError::Connect(_))), "{first:?}");
    assert_eq!(
        pool.ledger().snapshot().requests,
        4,
        "1 attempt + 3 retries"
    );
    let second = pool.chat(&tool_request("two")).await;
    match &second {
        Err(LlmError::Connect(m)) => assert!(m.contains("not retried"), "{m}"),
        other => panic!("{other:?}"),
    }
    let s = pool.ledger().snapshot();
    assert_eq!(
        s.requests, 5,
        "the second request is tried once, not retried"
    );
    assert_eq!(s.fail_fast, 1);
}

#[tokio::test]
async fn a_provider_that_comes_back_is_retried_again() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = PoolConfig {
        max_retries: 1,
        ..fast()
    };
    let pool = Pool::new(model(&format!("http://{addr}/v1")), cfg, None);
    assert!(pool.chat(&tool_request("down")).await.is_err());
    // The provider comes up on the same address: the next request is tried, succeeds and closes the breaker.
    let _mock = MockServer::start(addr, MockConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(pool.chat(&tool_request("up")).await.is_ok());
    let s = pool.ledger().snapshot();
    assert_eq!((s.ok, s.fail_fast), (1, 0), "{s:?}");
}
