//! Model catalogs fetched from loopback servers.

use cocode_agent::{ModelInfo, ProviderConfig, Transport, fetch_models};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::{MockServer, Reply, fast_retries};

fn ids(models: &[ModelInfo]) -> Vec<&str> {
    models.iter().map(|m| m.id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openrouter_lists_tool_capable_models_and_filters_free_ones() {
    let body = json!({"data": [
        {"id": "meta/free:free", "name": "Free", "supported_parameters": ["tools"], "pricing": {"prompt": "0", "completion": "0"}},
        {"id": "x/paid", "name": "Paid", "supported_parameters": ["tools"], "pricing": {"prompt": "0.000003", "completion": "0.000015"}},
        {"id": "y/chat-only", "name": "No tools", "supported_parameters": ["temperature"], "pricing": {"prompt": "0", "completion": "0"}}
    ]});
    let server = MockServer::start(vec![Reply::json(200, &body), Reply::json(200, &body)]).await;
    let mut provider = ProviderConfig::openrouter(cocode_agent::wire::openai::DataPolicy::Zdr);
    provider.base_url = Some(format!("{}/api/v1", server.base_url));
    let transport = Transport::new(fast_retries()).unwrap();
    let cancel = CancellationToken::new();
    let all = fetch_models(&transport, &provider, Some("or-key"), false, &cancel)
        .await
        .unwrap();
    assert_eq!(ids(&all), vec!["meta/free:free", "x/paid"]);
    let free = fetch_models(&transport, &provider, Some("or-key"), true, &cancel)
        .await
        .unwrap();
    assert_eq!(ids(&free), vec!["meta/free:free"]);
    let requests = server.requests();
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("GET", "/api/v1/models")
    );
    assert_eq!(requests[0].headers["authorization"], "Bearer or-key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_lists_local_models_from_its_native_api() {
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b"}, {"name": "llama3.1:8b"}]}),
    )])
    .await;
    let mut provider = ProviderConfig::ollama(32_768);
    provider.base_url = Some(format!("{}/v1", server.base_url));
    let transport = Transport::new(fast_retries()).unwrap();
    let models = fetch_models(
        &transport,
        &provider,
        None,
        false,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(ids(&models), vec!["qwen2.5-coder:7b", "llama3.1:8b"]);
    let requests = server.requests();
    assert_eq!(requests[0].path, "/api/tags");
    assert!(!requests[0].headers.contains_key("authorization"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_lists_models_with_its_headers() {
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"data": [{"id": "claude-a", "type": "model"}, {"id": "claude-b", "type": "model"}], "has_more": false}),
    )])
    .await;
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = Some(server.base_url.clone());
    let transport = Transport::new(fast_retries()).unwrap();
    let models = fetch_models(
        &transport,
        &provider,
        Some("sk-ant"),
        false,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(ids(&models), vec!["claude-a", "claude-b"]);
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/models?limit=1000");
    assert_eq!(
        (
            r.headers["x-api-key"].as_str(),
            r.headers["anthropic-version"].as_str()
        ),
        ("sk-ant", "2023-06-01")
    );
    // Without a key the catalog is not fetched at all.
    let err = fetch_models(
        &transport,
        &provider,
        None,
        false,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, cocode_agent::ProviderErrorCode::Auth);
    assert_eq!(server.requests().len(), 1);
}
