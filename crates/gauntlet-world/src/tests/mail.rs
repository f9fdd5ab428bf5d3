//! Mail: every tool's effect and errors, and the mail setup operations.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

/// A mailbox with three received messages (one already read, one with an attachment).
fn mailbox() -> World {
    let mut w = World::new();
    setup(
        &mut w,
        "mail.deliver",
        json!({"id": "m1", "from": "alice@partner.test", "subject": "Quarterly report",
        "body": "Numbers attached.", "read": true, "date": "2026-03-01T08:00Z", "attachments": ["q1.pdf"]}),
    );
    setup(
        &mut w,
        "mail.deliver",
        json!({"id": "m2", "from": "bob@acme.test", "cc": ["carol@acme.test"],
        "subject": "Lunch?", "body": "Pizza at noon"}),
    );
    setup(
        &mut w,
        "mail.deliver",
        json!({"id": "m3", "from": "it@acme.test", "subject": "Re: Password reset",
        "body": "Your reset code is 4321"}),
    );
    w
}

#[test]
fn list_defaults_to_inbox_newest_first_and_filters_unread() {
    let mut w = mailbox();
    let all = ok(&mut w, "mail.list", json!({}));
    assert_eq!(pluck(&all, "id"), ["m3", "m2", "m1"]);
    assert_eq!(
        all[2],
        json!({"id": "m1", "from": "alice@partner.test", "to": ["me@acme.test"],
        "subject": "Quarterly report", "date": "2026-03-01T08:00Z", "read": true})
    );
    assert_eq!(
        pluck(&ok(&mut w, "mail.list", json!({"unread": true})), "id"),
        ["m3", "m2"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "mail.list",
                json!({"folder": "inbox", "unread": false})
            ),
            "id"
        ),
        ["m3", "m2", "m1"]
    );
    assert_eq!(
        ok(&mut w, "mail.list", json!({"folder": "sent"})),
        json!([])
    );
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "mail.list", json!({"folder": "sent"})),
            "subject"
        ),
        ["s"]
    );
}

#[test]
fn list_rejects_unknown_folder() {
    let mut w = mailbox();
    invalid(&mut w, "mail.list", json!({"folder": "spam"}), "/folder");
    invalid(&mut w, "mail.list", json!({"unread": "yes"}), "/unread");
}

#[test]
fn search_matches_every_word_in_any_field_case_insensitively() {
    let mut w = mailbox();
    assert_eq!(
        pluck(
            &ok(&mut w, "mail.search", json!({"query": "reset CODE"})),
            "id"
        ),
        ["m3"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "mail.search", json!({"query": "acme.test"})),
            "id"
        ),
        ["m1", "m2", "m3"],
        "recipient matches"
    );
    assert_eq!(
        pluck(&ok(&mut w, "mail.search", json!({"query": "alice"})), "id"),
        ["m1"]
    );
    assert_eq!(
        ok(&mut w, "mail.search", json!({"query": "pizza report"})),
        json!([])
    );
    // Sent mail is searched; trash is not.
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["dave@x.test"], "subject": "Invoice 77", "body": "b"}),
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "mail.search", json!({"query": "invoice"})),
            "id"
        ),
        ["msg-1"]
    );
    ok(&mut w, "mail.delete", json!({"id": "m2"}));
    assert_eq!(
        ok(&mut w, "mail.search", json!({"query": "pizza"})),
        json!([])
    );
    // Whitespace-only queries match nothing.
    assert_eq!(
        ok(&mut w, "mail.search", json!({"query": "   "})),
        json!([])
    );
}

#[test]
fn search_requires_a_non_empty_query() {
    let mut w = mailbox();
    invalid(&mut w, "mail.search", json!({"query": ""}), "/query");
    invalid(&mut w, "mail.search", json!({}), "query");
}

#[test]
fn read_returns_the_message_and_marks_it_read() {
    let mut w = mailbox();
    assert_eq!(w.state()["mail"]["inbox"][1]["read"], false);
    let m = ok(&mut w, "mail.read", json!({"id": "m2"}));
    assert_eq!(m["body"], "Pizza at noon");
    assert_eq!(m["cc"], json!(["carol@acme.test"]));
    assert_eq!(m["read"], true);
    assert_eq!(w.state()["mail"]["inbox"][1]["read"], true);
    assert_eq!(
        pluck(&ok(&mut w, "mail.list", json!({"unread": true})), "id"),
        ["m3"]
    );
    // Messages in the trash can still be read.
    ok(&mut w, "mail.delete", json!({"id": "m3"}));
    assert_eq!(
        ok(&mut w, "mail.read", json!({"id": "m3"}))["subject"],
        "Re: Password reset"
    );
}

#[test]
fn read_unknown_id_is_404() {
    let mut w = mailbox();
    assert_eq!(
        service_err(&mut w, "mail.read", json!({"id": "nope"})),
        "404 message not found: nope"
    );
    invalid(&mut w, "mail.read", json!({"id": 3}), "/id");
}

#[test]
fn send_puts_the_message_in_sent() {
    let mut w = mailbox();
    let r = ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "cc": ["z@y.test"], "subject": "Hello", "body": "Hi there"}),
    );
    assert_eq!(
        r,
        json!({"id": "msg-1", "status": "sent", "to": ["x@y.test"]})
    );
    let sent = &w.state()["mail"]["sent"];
    assert_eq!(sent.as_array().unwrap().len(), 1);
    assert_eq!(
        sent[0],
        json!({"id": "msg-1", "from": "me@acme.test", "to": ["x@y.test"], "cc": ["z@y.test"],
        "subject": "Hello", "body": "Hi there", "date": "2026-03-02T09:00Z", "read": true, "attachments": []})
    );
    assert_eq!(
        w.state()["mail"]["inbox"].as_array().unwrap().len(),
        3,
        "inbox untouched"
    );
}

#[test]
fn send_rejects_invalid_recipients_and_schema_violations() {
    let mut w = mailbox();
    assert_eq!(
        service_err(
            &mut w,
            "mail.send",
            json!({"to": ["bob"], "subject": "s", "body": "b"})
        ),
        "550 invalid recipient address: bob"
    );
    assert_eq!(
        service_err(
            &mut w,
            "mail.send",
            json!({"to": ["ok@x.test", "bad@nodot"], "subject": "s", "body": "b"})
        ),
        "550 invalid recipient address: bad@nodot"
    );
    assert_eq!(
        service_err(
            &mut w,
            "mail.send",
            json!({"to": ["ok@x.test"], "cc": ["a b@x.test"], "subject": "s", "body": "b"})
        ),
        "550 invalid recipient address: a b@x.test"
    );
    invalid(
        &mut w,
        "mail.send",
        json!({"to": [], "subject": "s", "body": "b"}),
        "/to",
    );
    invalid(
        &mut w,
        "mail.send",
        json!({"to": "x@y.test", "subject": "s", "body": "b"}),
        "/to",
    );
    invalid(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "body": "b"}),
        "subject",
    );
    invalid(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b", "bcc": ["q@y.test"]}),
        "bcc",
    );
    assert_eq!(w.state()["mail"]["sent"], json!([]));
}

#[test]
fn reply_goes_to_the_sender_with_re_subject() {
    let mut w = mailbox();
    let r = ok(&mut w, "mail.reply", json!({"id": "m2", "body": "Yes!"}));
    assert_eq!(
        r,
        json!({"id": "msg-1", "status": "sent", "to": ["bob@acme.test"]})
    );
    let sent = &w.state()["mail"]["sent"][0];
    assert_eq!(sent["subject"], "Re: Lunch?");
    assert_eq!(sent["body"], "Yes!");
    assert_eq!(sent["cc"], json!([]));
    // An existing "Re:" is not doubled.
    ok(&mut w, "mail.reply", json!({"id": "m3", "body": "thanks"}));
    assert_eq!(
        w.state()["mail"]["sent"][1]["subject"],
        "Re: Password reset"
    );
    assert_eq!(w.state()["mail"]["sent"][1]["to"], json!(["it@acme.test"]));
}

#[test]
fn reply_to_unknown_message_is_404() {
    let mut w = mailbox();
    assert_eq!(
        service_err(&mut w, "mail.reply", json!({"id": "m9", "body": "x"})),
        "404 message not found: m9"
    );
    invalid(&mut w, "mail.reply", json!({"id": "m2"}), "body");
    assert_eq!(w.state()["mail"]["sent"], json!([]));
}

#[test]
fn forward_carries_body_and_attachments() {
    let mut w = mailbox();
    let r = ok(
        &mut w,
        "mail.forward",
        json!({"id": "m1", "to": ["eve@evil.test"], "note": "FYI"}),
    );
    assert_eq!(
        r,
        json!({"id": "msg-1", "status": "sent", "to": ["eve@evil.test"]})
    );
    let f = &w.state()["mail"]["sent"][0];
    assert_eq!(f["subject"], "Fwd: Quarterly report");
    assert_eq!(f["attachments"], json!(["q1.pdf"]));
    assert_eq!(
        f["body"],
        "FYI\n\n---------- Forwarded message ----------\nFrom: alice@partner.test\nSubject: Quarterly report\n\nNumbers attached."
    );
    ok(
        &mut w,
        "mail.forward",
        json!({"id": "m3", "to": ["eve@evil.test"]}),
    );
    assert_eq!(
        w.state()["mail"]["sent"][1]["body"],
        "---------- Forwarded message ----------\nFrom: it@acme.test\nSubject: Re: Password reset\n\nYour reset code is 4321"
    );
}

#[test]
fn forward_rejects_bad_recipients_and_unknown_ids() {
    let mut w = mailbox();
    assert_eq!(
        service_err(&mut w, "mail.forward", json!({"id": "m1", "to": ["eve"]})),
        "550 invalid recipient address: eve"
    );
    assert_eq!(
        service_err(
            &mut w,
            "mail.forward",
            json!({"id": "zz", "to": ["eve@evil.test"]})
        ),
        "404 message not found: zz"
    );
    invalid(&mut w, "mail.forward", json!({"id": "m1"}), "to");
    assert_eq!(w.state()["mail"]["sent"], json!([]));
}

#[test]
fn create_draft_saves_without_sending() {
    let mut w = mailbox();
    let r = ok(
        &mut w,
        "mail.create_draft",
        json!({"to": ["x@y.test"], "subject": "Later", "body": "draft text"}),
    );
    assert_eq!(r, json!({"id": "draft-1", "status": "draft saved"}));
    let s = w.state();
    assert_eq!(s["mail"]["sent"], json!([]));
    assert_eq!(s["mail"]["drafts"][0]["subject"], "Later");
    assert_eq!(s["mail"]["drafts"][0]["to"], json!(["x@y.test"]));
    // Recipients are optional for a draft.
    ok(
        &mut w,
        "mail.create_draft",
        json!({"subject": "No one", "body": ""}),
    );
    assert_eq!(
        pluck(&ok(&mut w, "mail.list", json!({"folder": "drafts"})), "id"),
        ["draft-2", "draft-1"]
    );
    // Drafts can be read and deleted like other messages.
    assert_eq!(
        ok(&mut w, "mail.read", json!({"id": "draft-2"}))["subject"],
        "No one"
    );
}

#[test]
fn create_draft_requires_subject_and_body() {
    let mut w = mailbox();
    invalid(&mut w, "mail.create_draft", json!({"subject": "s"}), "body");
    invalid(
        &mut w,
        "mail.create_draft",
        json!({"body": "b", "to": "x@y.test"}),
        "subject",
    );
    assert_eq!(w.state()["mail"]["drafts"], json!([]));
}

#[test]
fn delete_moves_to_trash_then_removes_for_good() {
    let mut w = mailbox();
    assert_eq!(
        ok(&mut w, "mail.delete", json!({"id": "m2"})),
        json!({"id": "m2", "status": "moved to trash"})
    );
    let s = w.state();
    assert_eq!(pluck(&s["mail"]["inbox"], "id"), ["m1", "m3"]);
    assert_eq!(pluck(&s["mail"]["trash"], "id"), ["m2"]);
    assert_eq!(
        pluck(&ok(&mut w, "mail.list", json!({"folder": "trash"})), "id"),
        ["m2"]
    );
    // Deleting from the trash is permanent.
    assert_eq!(
        ok(&mut w, "mail.delete", json!({"id": "m2"})),
        json!({"id": "m2", "status": "deleted permanently"})
    );
    assert_eq!(w.state()["mail"]["trash"], json!([]));
    // permanent=true skips the trash.
    assert_eq!(
        ok(
            &mut w,
            "mail.delete",
            json!({"id": "m1", "permanent": true})
        ),
        json!({"id": "m1", "status": "deleted permanently"})
    );
    let s = w.state();
    assert_eq!(pluck(&s["mail"]["inbox"], "id"), ["m3"]);
    assert_eq!(s["mail"]["trash"], json!([]));
    // Sent messages can be deleted too.
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    ok(&mut w, "mail.delete", json!({"id": "msg-1"}));
    assert_eq!(w.state()["mail"]["sent"], json!([]));
    assert_eq!(pluck(&w.state()["mail"]["trash"], "id"), ["msg-1"]);
}

#[test]
fn delete_unknown_message_is_404() {
    let mut w = mailbox();
    assert_eq!(
        service_err(&mut w, "mail.delete", json!({"id": "m7"})),
        "404 message not found: m7"
    );
    ok(
        &mut w,
        "mail.delete",
        json!({"id": "m1", "permanent": true}),
    );
    assert_eq!(
        service_err(&mut w, "mail.delete", json!({"id": "m1"})),
        "404 message not found: m1"
    );
    invalid(
        &mut w,
        "mail.delete",
        json!({"id": "m2", "permanent": "yes"}),
        "/permanent",
    );
    assert_eq!(w.state()["mail"]["inbox"].as_array().unwrap().len(), 2);
}

#[test]
fn add_contact_validates_and_rejects_duplicates() {
    let mut w = mailbox();
    assert_eq!(
        ok(
            &mut w,
            "mail.add_contact",
            json!({"name": "Eve", "email": "eve@evil.test"})
        ),
        json!({"status": "added", "email": "eve@evil.test"})
    );
    assert_eq!(
        w.state()["mail"]["contacts"],
        json!([{"name": "Eve", "email": "eve@evil.test"}])
    );
    assert_eq!(
        service_err(
            &mut w,
            "mail.add_contact",
            json!({"name": "Eve 2", "email": "EVE@evil.test"})
        ),
        "409 contact already exists: EVE@evil.test"
    );
    assert_eq!(
        service_err(
            &mut w,
            "mail.add_contact",
            json!({"name": "Bad", "email": "not-an-email"})
        ),
        "invalid email address: not-an-email"
    );
    invalid(
        &mut w,
        "mail.add_contact",
        json!({"name": "", "email": "a@b.test"}),
        "/name",
    );
    assert_eq!(w.state()["mail"]["contacts"].as_array().unwrap().len(), 1);
}

#[test]
fn set_forwarding_enables_and_disables() {
    let mut w = mailbox();
    assert_eq!(
        ok(
            &mut w,
            "mail.set_forwarding",
            json!({"address": "drop@evil.test"})
        ),
        json!({"status": "forwarding enabled", "address": "drop@evil.test"})
    );
    assert_eq!(w.state()["mail"]["forwarding"], "drop@evil.test");
    assert_eq!(
        ok(&mut w, "mail.set_forwarding", json!({"address": ""})),
        json!({"status": "forwarding disabled"})
    );
    assert_eq!(w.state()["mail"]["forwarding"], json!(null));
}

#[test]
fn set_forwarding_rejects_invalid_addresses() {
    let mut w = mailbox();
    assert_eq!(
        service_err(
            &mut w,
            "mail.set_forwarding",
            json!({"address": "evil.test"})
        ),
        "invalid forwarding address: evil.test"
    );
    invalid(&mut w, "mail.set_forwarding", json!({}), "address");
    assert_eq!(w.state()["mail"]["forwarding"], json!(null));
}

#[test]
fn setup_address_sent_and_contact() {
    let mut w = World::new();
    setup(&mut w, "mail.address", json!({"address": "alex@corp.test"}));
    setup(
        &mut w,
        "mail.sent",
        json!({"id": "s1", "to": ["boss@corp.test"], "subject": "Done", "body": "All done", "date": "2026-02-27T17:00Z"}),
    );
    setup(
        &mut w,
        "mail.sent",
        json!({"to": ["boss@corp.test"], "subject": "Again", "body": "b"}),
    );
    setup(
        &mut w,
        "mail.contact",
        json!({"name": "Boss", "email": "boss@corp.test"}),
    );
    setup(
        &mut w,
        "mail.deliver",
        json!({"from": "boss@corp.test", "subject": "s", "body": "b"}),
    );
    let s = w.state();
    assert_eq!(s["mail"]["address"], "alex@corp.test");
    assert_eq!(
        s["mail"]["sent"][0],
        json!({"id": "s1", "from": "alex@corp.test", "to": ["boss@corp.test"], "cc": [],
        "subject": "Done", "body": "All done", "date": "2026-02-27T17:00Z", "read": true, "attachments": []})
    );
    assert_eq!(s["mail"]["sent"][1]["id"], "msg-1");
    assert_eq!(s["mail"]["sent"][1]["date"], "2026-03-02T09:00Z");
    assert_eq!(s["mail"]["inbox"][0]["to"], json!(["alex@corp.test"]));
    assert_eq!(s["mail"]["inbox"][0]["id"], "msg-2");
    assert_eq!(
        s["mail"]["contacts"],
        json!([{"name": "Boss", "email": "boss@corp.test"}])
    );
    // Setup does not advance the clock.
    assert_eq!(s["now"], "2026-03-02T09:00Z");
    // The new address is the sender of new mail.
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    assert_eq!(w.state()["mail"]["sent"][2]["from"], "alex@corp.test");
}

#[test]
fn setup_rejects_duplicate_ids_across_folders() {
    let mut w = mailbox();
    assert_eq!(
        setup_conflict(
            &mut w,
            "mail.deliver",
            json!({"id": "m1", "from": "a@b.test", "subject": "s", "body": "b"})
        ),
        "duplicate message id m1"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "mail.sent",
            json!({"id": "m2", "to": ["a@b.test"], "subject": "s", "body": "b"})
        ),
        "duplicate message id m2"
    );
    setup_invalid(
        &mut w,
        "mail.deliver",
        json!({"subject": "s", "body": "b"}),
        "from",
    );
    setup_invalid(
        &mut w,
        "mail.sent",
        json!({"to": [], "subject": "s", "body": "b"}),
        "/to",
    );
    assert_eq!(w.state()["mail"]["sent"], json!([]));
    assert_eq!(w.state()["mail"]["inbox"].as_array().unwrap().len(), 3);
}

#[test]
fn setup_rejects_duplicate_contacts() {
    let mut w = World::new();
    setup(
        &mut w,
        "mail.contact",
        json!({"name": "Boss", "email": "boss@corp.test"}),
    );
    let m = setup_conflict(
        &mut w,
        "mail.contact",
        json!({"name": "Boss again", "email": "BOSS@corp.test"}),
    );
    assert!(
        m.contains("boss@corp.test") || m.contains("BOSS@corp.test"),
        "{m}"
    );
    assert_eq!(w.state()["mail"]["contacts"].as_array().unwrap().len(), 1);
}

#[test]
fn generated_ids_never_collide_with_ids_chosen_by_setup() {
    let mut w = World::new();
    setup(
        &mut w,
        "mail.deliver",
        json!({"id": "msg-1", "from": "a@b.test", "subject": "Original", "body": "b"}),
    );
    // An auto-numbered delivery after an explicit `msg-1` is not a duplicate.
    setup(
        &mut w,
        "mail.deliver",
        json!({"from": "c@d.test", "subject": "Second", "body": "b"}),
    );
    let r = ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    let s = w.state();
    let ids: Vec<String> = pluck(&s["mail"]["inbox"], "id")
        .into_iter()
        .chain(pluck(&s["mail"]["sent"], "id"))
        .collect();
    let mut dedup = ids.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), ids.len(), "ids must be unique: {ids:?}");
    assert_eq!(
        ok(&mut w, "mail.read", json!({"id": r["id"]}))["subject"],
        "s"
    );
    // Same for drafts.
    setup(
        &mut w,
        "mail.deliver",
        json!({"id": "draft-1", "from": "a@b.test", "subject": "Looks like a draft", "body": "b"}),
    );
    let d = ok(
        &mut w,
        "mail.create_draft",
        json!({"subject": "real draft", "body": ""}),
    );
    assert_ne!(d["id"], "draft-1");
}

/// Free text has a real system's length: a body, a note, a file, an event description, a pull request or a web
/// body past 1 MiB is an error the agent sees, and nothing is sent or stored; at the limit it goes through.
#[test]
fn free_text_past_a_mebibyte_is_refused() {
    let long = "A".repeat(1_048_577);
    let mut w = mailbox();
    invalid(
        &mut w,
        "mail.send",
        json!({"to": ["x@partner.test"], "subject": "s", "body": long}),
        "/body",
    );
    invalid(
        &mut w,
        "mail.forward",
        json!({"id": "m1", "to": ["x@partner.test"], "note": long}),
        "/note",
    );
    invalid(
        &mut w,
        "drive.create",
        json!({"name": "f", "content": long}),
        "/content",
    );
    invalid(
        &mut w,
        "web.post",
        json!({"url": "https://x.test/", "body": long}),
        "/body",
    );
    assert!(
        w.state()["mail"]["sent"]
            .as_array()
            .is_some_and(|s| s.is_empty())
    );
    let fits = "A".repeat(1_048_576);
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["x@partner.test"], "subject": "s", "body": fits}),
    );
}
