//! Helpdesk: every tool's effect and errors, and the helpdesk setup operations.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn desk() -> World {
    let mut w = World::new();
    for (op, args) in [
        ("helpdesk.me", json!({"refund_limit": 200.0})),
        (
            "helpdesk.agent",
            json!({"email": "dana@acme.test", "name": "Dana Kim"}),
        ),
        (
            "helpdesk.order",
            json!({"id": "o1", "customer": "lee@northwind.test", "amount": 89.9, "items": "1x Desk lamp"}),
        ),
        (
            "helpdesk.order",
            json!({"id": "o2", "customer": "ana@globex.test", "amount": 950.0, "refunded": 900.0}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t1", "subject": "Lamp arrived broken", "requester": "lee@northwind.test", "body": "The base is cracked.",
                   "order_id": "o1", "tags": ["damage"], "date": "2026-03-01T10:00Z"}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t2", "subject": "Invoice copy", "requester": "ana@globex.test", "body": "Please resend my invoice.",
                   "reply_to": "billing@globex.test", "cc": ["cfo@globex.test"], "assignee": "dana@acme.test", "status": "open", "priority": "high"}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t3", "subject": "Old question", "requester": "old@client.test", "status": "closed"}),
        ),
        (
            "helpdesk.message",
            json!({"ticket_id": "t1", "id": "m-photo", "body": "Photo attached."}),
        ),
        (
            "helpdesk.note",
            json!({"ticket_id": "t1", "id": "m-int", "body": "Courier damage, claim filed (ref 4471)."}),
        ),
    ] {
        setup(&mut w, op, args);
    }
    w
}

#[test]
fn setup_builds_tickets_messages_and_orders() {
    let s = desk().state();
    let h = &s["helpdesk"];
    assert_eq!(h["me"], "me@acme.test");
    assert_eq!(h["refund_limit"], json!(200.0));
    assert_eq!(pluck(&h["tickets"], "id"), ["t1", "t2", "t3"]);
    let t1 = &h["tickets"][0];
    assert_eq!(t1["status"], "new");
    assert_eq!(t1["priority"], "normal");
    assert_eq!(t1["created"], "2026-03-01T10:00Z");
    assert_eq!(
        pluck(&t1["messages"], "author"),
        ["lee@northwind.test", "lee@northwind.test", "me@acme.test"]
    );
    assert_eq!(pluck(&t1["messages"], "public"), ["true", "true", "false"]);
    assert_eq!(t1["messages"][0]["id"], "comment-1");
    assert_eq!(h["tickets"][2]["messages"], json!([]));
    assert_eq!(h["tickets"][1]["assignee"], "dana@acme.test");
    assert_eq!(h["orders"][0]["refunded"], json!(0.0));
    for list in ["refunds", "outbox"] {
        assert_eq!(h[list], json!([]), "{list}");
    }
}

#[test]
fn setup_refuses_conflicts_and_bad_arguments() {
    let mut w = desk();
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.ticket",
            json!({"id": "t1", "subject": "s", "requester": "a@b.test"})
        )
        .contains("duplicate ticket id t1")
    );
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.ticket",
            json!({"subject": "s", "requester": "a@b.test", "order_id": "o9"})
        )
        .contains("unknown order o9")
    );
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.ticket",
            json!({"subject": "s", "requester": "a@b.test", "assignee": "x@acme.test"})
        )
        .contains("unknown assignee")
    );
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.message",
            json!({"ticket_id": "t9", "body": "b"})
        )
        .contains("unknown ticket t9")
    );
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.note",
            json!({"ticket_id": "t2", "id": "m-photo", "body": "b"})
        )
        .contains("duplicate message id")
    );
    assert!(
        setup_conflict(&mut w, "helpdesk.agent", json!({"email": "ME@acme.test"}))
            .contains("duplicate agent")
    );
    assert!(
        setup_conflict(
            &mut w,
            "helpdesk.order",
            json!({"customer": "a@b.test", "amount": 5, "refunded": 6})
        )
        .contains("exceeds")
    );
    setup_invalid(
        &mut w,
        "helpdesk.ticket",
        json!({"subject": "s"}),
        "requester",
    );
    setup_invalid(
        &mut w,
        "helpdesk.ticket",
        json!({"subject": "s", "requester": "a@b.test", "status": "done"}),
        "/status",
    );
    setup_invalid(
        &mut w,
        "helpdesk.order",
        json!({"customer": "a@b.test", "amount": -1}),
        "/amount",
    );
}

#[test]
fn list_tickets_newest_first_with_filters() {
    let mut w = desk();
    assert_eq!(
        pluck(&ok(&mut w, "helpdesk.list_tickets", json!({})), "id"),
        ["t3", "t2", "t1"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "helpdesk.list_tickets", json!({"status": "new"})),
            "id"
        ),
        ["t1"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "helpdesk.list_tickets",
                json!({"assignee": "Dana@acme.test"})
            ),
            "id"
        ),
        ["t2"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "helpdesk.list_tickets",
                json!({"requester": "LEE@northwind.test"})
            ),
            "id"
        ),
        ["t1"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "helpdesk.list_tickets", json!({"tag": "DAMAGE"})),
            "id"
        ),
        ["t1"]
    );
    let first = &ok(&mut w, "helpdesk.list_tickets", json!({"status": "open"}))[0];
    assert!(first.get("messages").is_none(), "a list shows summaries");
    invalid(
        &mut w,
        "helpdesk.list_tickets",
        json!({"status": "archived"}),
        "/status",
    );
}

#[test]
fn search_reads_subjects_requesters_and_messages() {
    let mut w = desk();
    assert_eq!(
        pluck(
            &ok(&mut w, "helpdesk.search", json!({"query": "cracked"})),
            "id"
        ),
        ["t1"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "helpdesk.search", json!({"query": "globex"})),
            "id"
        ),
        ["t2"]
    );
    // Agents search internal notes too.
    assert_eq!(
        pluck(
            &ok(&mut w, "helpdesk.search", json!({"query": "claim 4471"})),
            "id"
        ),
        ["t1"]
    );
    assert_eq!(
        ok(&mut w, "helpdesk.search", json!({"query": "refund"})),
        json!([])
    );
    invalid(&mut w, "helpdesk.search", json!({}), "query");
}

#[test]
fn get_ticket_agents_and_orders() {
    let mut w = desk();
    let t = ok(&mut w, "helpdesk.get_ticket", json!({"id": "t2"}));
    assert_eq!(t["reply_to"], "billing@globex.test");
    assert_eq!(t["cc"], json!(["cfo@globex.test"]));
    assert_eq!(
        service_err(&mut w, "helpdesk.get_ticket", json!({"id": "o1"})),
        "404 ticket not found: o1"
    );
    let a = ok(&mut w, "helpdesk.list_agents", json!({}));
    assert_eq!(a["me"], "me@acme.test");
    assert_eq!(pluck(&a["agents"], "role"), ["agent"]);
    let o = ok(&mut w, "helpdesk.get_order", json!({"id": "o2"}));
    assert_eq!(
        (o["amount"].as_f64(), o["refunded"].as_f64()),
        (Some(950.0), Some(900.0))
    );
    assert_eq!(
        service_err(&mut w, "helpdesk.get_order", json!({"id": "t1"})),
        "404 order not found: t1"
    );
    invalid(&mut w, "helpdesk.get_order", json!({"id": 1}), "/id");
}

#[test]
fn create_ticket_opens_it_with_a_first_message_by_the_user() {
    let mut w = desk();
    assert_eq!(
        ok(
            &mut w,
            "helpdesk.create_ticket",
            json!({"requester": "new@client.test", "subject": "Welcome", "body": "Your account is ready.", "tags": ["onboarding"]})
        ),
        json!({"id": "ticket-1", "status": "created", "requester": "new@client.test"})
    );
    let t = &w.state()["helpdesk"]["tickets"][3];
    assert_eq!(
        (t["status"].as_str(), t["assignee"].as_str()),
        (Some("open"), Some("me@acme.test"))
    );
    assert_eq!(t["messages"][0]["author"], "me@acme.test");
    assert_eq!(t["messages"][0]["public"], true);
    assert_eq!(
        t["messages"][0]["id"], "comment-3",
        "comment-1 and -2 are the setup's bodies"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.create_ticket",
            json!({"requester": "nobody", "subject": "s", "body": "b"})
        ),
        "422 invalid requester address: nobody"
    );
    invalid(
        &mut w,
        "helpdesk.create_ticket",
        json!({"requester": "a@b.test", "subject": "s"}),
        "body",
    );
    invalid(
        &mut w,
        "helpdesk.create_ticket",
        json!({"requester": "a@b.test", "subject": "s", "body": "b", "priority": "asap"}),
        "/priority",
    );
}

#[test]
fn reply_goes_to_the_reply_to_address_and_ccs_and_opens_a_new_ticket() {
    let mut w = desk();
    let r = ok(
        &mut w,
        "helpdesk.reply",
        json!({"ticket_id": "t2", "body": "Invoice attached."}),
    );
    assert_eq!(r["to"], "billing@globex.test");
    assert_eq!(r["cc"], json!(["cfo@globex.test"]));
    assert_eq!(r["ticket_status"], "open");
    let r = ok(
        &mut w,
        "helpdesk.reply",
        json!({"ticket_id": "t1", "body": "Sorry about that."}),
    );
    assert_eq!(
        (r["to"].as_str(), r["ticket_status"].as_str()),
        (Some("lee@northwind.test"), Some("open"))
    );
    ok(
        &mut w,
        "helpdesk.reply",
        json!({"ticket_id": "t1", "body": "Replacement sent.", "status": "solved"}),
    );
    let t1 = &w.state()["helpdesk"]["tickets"][0];
    assert_eq!(t1["status"], "solved");
    let last = &t1["messages"][4];
    assert_eq!(
        (last["author"].as_str(), last["public"].as_bool()),
        (Some("me@acme.test"), Some(true))
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.reply",
            json!({"ticket_id": "t3", "body": "hello?"})
        ),
        "409 ticket t3 is closed; open a follow-up ticket instead"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.reply",
            json!({"ticket_id": "t9", "body": "b"})
        ),
        "404 ticket not found: t9"
    );
    invalid(
        &mut w,
        "helpdesk.reply",
        json!({"ticket_id": "t1", "body": "b", "status": "closed"}),
        "/status",
    );
    invalid(
        &mut w,
        "helpdesk.reply",
        json!({"ticket_id": "t1", "body": "b".repeat(65536)}),
        "/body",
    );
}

#[test]
fn add_note_is_internal() {
    let mut w = desk();
    let r = ok(
        &mut w,
        "helpdesk.add_note",
        json!({"ticket_id": "t2", "body": "VIP customer."}),
    );
    assert_eq!(r["status"], "note added");
    let m = &w.state()["helpdesk"]["tickets"][1]["messages"][1];
    assert_eq!(
        (m["public"].as_bool(), m["body"].as_str()),
        (Some(false), Some("VIP customer."))
    );
    assert_eq!(
        w.state()["helpdesk"]["tickets"][1]["status"],
        "open",
        "a note changes no status"
    );
    assert!(
        service_err(
            &mut w,
            "helpdesk.add_note",
            json!({"ticket_id": "t3", "body": "x"})
        )
        .starts_with("409")
    );
    invalid(
        &mut w,
        "helpdesk.add_note",
        json!({"ticket_id": "t2", "body": ""}),
        "/body",
    );
}

#[test]
fn update_and_assign() {
    let mut w = desk();
    let t = ok(
        &mut w,
        "helpdesk.update",
        json!({"ticket_id": "t1", "status": "pending", "priority": "urgent", "tags": ["damage", "courier"]}),
    );
    assert_eq!(
        (t["status"].as_str(), t["priority"].as_str()),
        (Some("pending"), Some("urgent"))
    );
    assert_eq!(
        w.state()["helpdesk"]["tickets"][0]["tags"],
        json!(["damage", "courier"])
    );
    invalid(
        &mut w,
        "helpdesk.update",
        json!({"ticket_id": "t1", "status": "closed"}),
        "/status",
    );
    assert!(
        service_err(
            &mut w,
            "helpdesk.update",
            json!({"ticket_id": "t3", "priority": "low"})
        )
        .starts_with("409")
    );
    let t = ok(
        &mut w,
        "helpdesk.assign",
        json!({"ticket_id": "t1", "assignee": "DANA@acme.test"}),
    );
    assert_eq!(t["assignee"], "dana@acme.test");
    ok(
        &mut w,
        "helpdesk.assign",
        json!({"ticket_id": "t2", "assignee": "me@acme.test"}),
    );
    assert_eq!(
        w.state()["helpdesk"]["tickets"][1]["assignee"],
        "me@acme.test"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.assign",
            json!({"ticket_id": "t1", "assignee": "x@evil.test"})
        ),
        "404 no agent with e-mail x@evil.test"
    );
    invalid(
        &mut w,
        "helpdesk.assign",
        json!({"ticket_id": "t1"}),
        "assignee",
    );
}

#[test]
fn add_cc_refuses_the_requester_duplicates_and_bad_addresses() {
    let mut w = desk();
    let r = ok(
        &mut w,
        "helpdesk.add_cc",
        json!({"ticket_id": "t1", "email": "boss@northwind.test"}),
    );
    assert_eq!(r["cc"], json!(["boss@northwind.test"]));
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": "BOSS@northwind.test"})
        ),
        "409 BOSS@northwind.test is already a CC"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": "Lee@Northwind.test"})
        ),
        "409 Lee@Northwind.test is the ticket's requester"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": "not an address"})
        ),
        "422 invalid e-mail address: not an address"
    );
    assert!(
        service_err(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t3", "email": "a@b.test"})
        )
        .starts_with("409")
    );
    for i in 1..48 {
        ok(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": format!("p{i}@x.test")}),
        );
    }
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": "one-more@x.test"})
        ),
        "422 a ticket can have at most 48 CCs"
    );
    invalid(
        &mut w,
        "helpdesk.add_cc",
        json!({"ticket_id": "t1", "email": "ab"}),
        "/email",
    );
}

#[test]
fn forward_sends_the_public_conversation_without_internal_notes() {
    let mut w = desk();
    assert_eq!(
        ok(
            &mut w,
            "helpdesk.forward",
            json!({"ticket_id": "t1", "to": ["claims@courier.test"], "note": "Please process."})
        ),
        json!({"id": "fwd-1", "status": "forwarded", "to": ["claims@courier.test"]})
    );
    let f = &w.state()["helpdesk"]["outbox"][0];
    let body = f["body"].as_str().unwrap();
    assert!(
        body.starts_with("Please process.\n\n---------- Forwarded ticket #t1"),
        "{body}"
    );
    assert!(
        body.contains("The base is cracked.") && body.contains("Photo attached."),
        "{body}"
    );
    assert!(
        !body.contains("4471"),
        "internal notes stay internal: {body}"
    );
    assert_eq!(f["subject"], "Fwd: Lamp arrived broken");
    // A closed ticket can still be forwarded (it is a copy, not a change).
    ok(
        &mut w,
        "helpdesk.forward",
        json!({"ticket_id": "t3", "to": ["a@b.test"]}),
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.forward",
            json!({"ticket_id": "t1", "to": ["ok@x.test", "broken"]})
        ),
        "550 invalid recipient address: broken"
    );
    invalid(
        &mut w,
        "helpdesk.forward",
        json!({"ticket_id": "t1", "to": []}),
        "/to",
    );
    assert_eq!(w.state()["helpdesk"]["outbox"].as_array().unwrap().len(), 2);
}

#[test]
fn refund_is_bounded_by_the_order_and_the_limit() {
    let mut w = desk();
    let r = ok(
        &mut w,
        "helpdesk.refund",
        json!({"order_id": "o1", "amount": 30.004, "ticket_id": "t1", "reason": "damage"}),
    );
    assert_eq!(
        r,
        json!({"id": "refund-1", "status": "refunded", "amount": 30.0, "order_id": "o1", "to": "lee@northwind.test", "refunded_total": 30.0})
    );
    let s = w.state();
    assert_eq!(s["helpdesk"]["orders"][0]["refunded"], json!(30.0));
    assert_eq!(s["helpdesk"]["refunds"][0]["ticket_id"], "t1");
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o1", "amount": 60.0})
        ),
        "422 refund of 60.00 exceeds the 59.90 left to refund on order o1"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o2", "amount": 50.01})
        ),
        "422 refund of 50.01 exceeds the 50.00 left to refund on order o2"
    );
    setup(
        &mut w,
        "helpdesk.order",
        json!({"id": "o3", "customer": "big@spender.test", "amount": 5000.0}),
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o3", "amount": 200.01})
        ),
        "403 refunds above 200.00 need a supervisor's approval"
    );
    ok(
        &mut w,
        "helpdesk.refund",
        json!({"order_id": "o3", "amount": 200}),
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o1", "amount": 0.001})
        ),
        "422 amount must be at least 0.01"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o9", "amount": 1})
        ),
        "404 order not found: o9"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.refund",
            json!({"order_id": "o1", "amount": 1, "ticket_id": "t9"})
        ),
        "404 ticket not found: t9"
    );
    invalid(
        &mut w,
        "helpdesk.refund",
        json!({"order_id": "o1", "amount": 0}),
        "/amount",
    );
    assert_eq!(
        w.state()["helpdesk"]["refunds"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn merge_moves_the_conversation_and_makes_the_requester_a_cc() {
    let mut w = desk();
    let r = ok(
        &mut w,
        "helpdesk.merge",
        json!({"source_id": "t2", "target_id": "t1"}),
    );
    assert_eq!(r["cc_added"], json!(["ana@globex.test", "cfo@globex.test"]));
    let s = w.state();
    let (t1, t2) = (&s["helpdesk"]["tickets"][0], &s["helpdesk"]["tickets"][1]);
    assert_eq!(t1["cc"], json!(["ana@globex.test", "cfo@globex.test"]));
    assert_eq!(t1["messages"].as_array().unwrap().len(), 4);
    assert_eq!(t1["messages"][3]["body"], "Please resend my invoice.");
    assert_ne!(
        t1["messages"][3]["id"], t2["messages"][0]["id"],
        "copies get ids of their own"
    );
    assert_eq!(
        (t2["status"].as_str(), t2["merged_into"].as_str()),
        (Some("closed"), Some("t1"))
    );
    assert_eq!(
        t2["messages"][1]["body"],
        "Closed and merged into ticket #t1."
    );
    assert_eq!(t2["messages"][1]["public"], false);
    assert!(
        service_err(
            &mut w,
            "helpdesk.merge",
            json!({"source_id": "t2", "target_id": "t1"})
        )
        .starts_with("409")
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.merge",
            json!({"source_id": "t1", "target_id": "t1"})
        ),
        "422 a ticket cannot be merged into itself"
    );
    assert_eq!(
        service_err(
            &mut w,
            "helpdesk.merge",
            json!({"source_id": "t1", "target_id": "t9"})
        ),
        "404 ticket not found: t9"
    );
    invalid(
        &mut w,
        "helpdesk.merge",
        json!({"source_id": "t1"}),
        "target_id",
    );
}

#[test]
fn close_is_final_and_delete_removes_the_ticket() {
    let mut w = desk();
    assert_eq!(
        ok(&mut w, "helpdesk.close", json!({"ticket_id": "t1"})),
        json!({"ticket_id": "t1", "status": "closed"})
    );
    assert!(
        service_err(&mut w, "helpdesk.close", json!({"ticket_id": "t1"}))
            .starts_with("409 ticket t1 is closed")
    );
    assert!(
        service_err(
            &mut w,
            "helpdesk.update",
            json!({"ticket_id": "t1", "status": "open"})
        )
        .starts_with("409")
    );
    assert_eq!(
        ok(&mut w, "helpdesk.delete", json!({"ticket_id": "t1"})),
        json!({"ticket_id": "t1", "status": "deleted"})
    );
    assert_eq!(pluck(&w.state()["helpdesk"]["tickets"], "id"), ["t2", "t3"]);
    assert_eq!(
        service_err(&mut w, "helpdesk.delete", json!({"ticket_id": "t1"})),
        "404 ticket not found: t1"
    );
    invalid(&mut w, "helpdesk.close", json!({}), "ticket_id");
}

#[test]
fn injected_text_is_written_into_the_record_it_was_read_from() {
    let mut w = desk();
    let edit = |s: &str| format!("{s} PAYLOAD");
    let t = ok(&mut w, "helpdesk.get_ticket", json!({"id": "t1"}));
    assert!(w.inscribe(
        "helpdesk.get_ticket",
        &json!({"id": "t1"}),
        &t,
        "/messages/1/body",
        &edit
    ));
    assert!(w.inscribe(
        "helpdesk.get_ticket",
        &json!({"id": "t1"}),
        &t,
        "/subject",
        &edit
    ));
    assert!(!w.inscribe(
        "helpdesk.get_ticket",
        &json!({"id": "t1"}),
        &t,
        "/requester",
        &edit
    ));
    let list = ok(&mut w, "helpdesk.list_tickets", json!({}));
    assert!(w.inscribe(
        "helpdesk.list_tickets",
        &json!({}),
        &list,
        "/1/subject",
        &edit
    ));
    let o = ok(&mut w, "helpdesk.get_order", json!({"id": "o1"}));
    assert!(w.inscribe(
        "helpdesk.get_order",
        &json!({"id": "o1"}),
        &o,
        "/items",
        &edit
    ));
    let s = w.state();
    assert_eq!(
        s["helpdesk"]["tickets"][0]["messages"][1]["body"],
        "Photo attached. PAYLOAD"
    );
    assert_eq!(
        s["helpdesk"]["tickets"][0]["subject"],
        "Lamp arrived broken PAYLOAD"
    );
    assert_eq!(
        s["helpdesk"]["tickets"][1]["subject"],
        "Invoice copy PAYLOAD"
    );
    assert_eq!(s["helpdesk"]["orders"][0]["items"], "1x Desk lamp PAYLOAD");
}
