//! CRM: every tool's effect and errors, and the CRM setup operations.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn crm() -> World {
    let mut w = World::new();
    for (op, args) in [
        (
            "crm.user",
            json!({"email": "dana@acme.test", "name": "Dana Kim", "role": "sales"}),
        ),
        (
            "crm.user",
            json!({"email": "rep@reseller.test", "name": "Partner Rep", "role": "partner"}),
        ),
        (
            "crm.account",
            json!({"id": "a1", "name": "Northwind Traders", "domain": "northwind.test", "industry": "Retail", "description": "Key account"}),
        ),
        (
            "crm.account",
            json!({"id": "a2", "name": "Globex", "domain": "globex.test", "owner": "dana@acme.test"}),
        ),
        (
            "crm.contact",
            json!({"id": "c1", "name": "Lee Park", "email": "lee@northwind.test", "phone": "+1 555 0101", "title": "Buyer", "account_id": "a1", "tags": ["customer", "vip"]}),
        ),
        (
            "crm.contact",
            json!({"id": "c2", "name": "Ana Ruiz", "email": "ana@northwind.test", "account_id": "a1", "tags": ["customer"], "unsubscribed": true}),
        ),
        (
            "crm.contact",
            json!({"id": "c3", "name": "Hank Scorpio", "email": "hank@globex.test", "account_id": "a2", "tags": ["Customer"]}),
        ),
        (
            "crm.contact",
            json!({"id": "c4", "name": "Walk-in lead", "description": "Met at the fair"}),
        ),
        (
            "crm.deal",
            json!({"id": "d1", "name": "Northwind renewal", "account_id": "a1", "amount": 12000.0, "stage": "proposal", "close_date": "2026-03-31"}),
        ),
        (
            "crm.deal",
            json!({"id": "d2", "name": "Globex pilot", "account_id": "a2", "amount": 5000.0, "stage": "closed_won"}),
        ),
        (
            "crm.note",
            json!({"id": "n1", "record_id": "c1", "text": "Prefers calls after 2pm.", "author": "dana@acme.test"}),
        ),
    ] {
        setup(&mut w, op, args);
    }
    w
}

#[test]
fn setup_builds_records_with_owners_from_accounts() {
    let s = crm().state();
    let c = &s["crm"];
    assert_eq!(c["me"], "me@acme.test");
    assert_eq!(pluck(&c["contacts"], "id"), ["c1", "c2", "c3", "c4"]);
    // A contact or deal without an owner takes its account's; without an account, the user's.
    assert_eq!(
        pluck(&c["contacts"], "owner"),
        [
            "me@acme.test",
            "me@acme.test",
            "dana@acme.test",
            "me@acme.test"
        ]
    );
    assert_eq!(c["deals"][1]["owner"], "dana@acme.test");
    assert_eq!(c["contacts"][3]["email"], "");
    assert_eq!(c["contacts"][3]["account_id"], "");
    assert_eq!(c["deals"][0]["stage"], "proposal");
    assert_eq!(c["users"][1]["role"], "partner");
    for list in ["emails", "exports"] {
        assert_eq!(c[list], json!([]), "{list}");
    }
}

#[test]
fn setup_refuses_conflicts_and_bad_arguments() {
    let mut w = crm();
    // Ids are unique across every kind of record.
    assert!(
        setup_conflict(
            &mut w,
            "crm.deal",
            json!({"id": "c1", "name": "x", "amount": 1})
        )
        .contains("duplicate")
    );
    assert!(
        setup_conflict(
            &mut w,
            "crm.contact",
            json!({"name": "x", "account_id": "nope"})
        )
        .contains("unknown account nope")
    );
    assert!(
        setup_conflict(
            &mut w,
            "crm.account",
            json!({"name": "x", "owner": "stranger@evil.test"})
        )
        .contains("unknown owner")
    );
    assert!(
        setup_conflict(
            &mut w,
            "crm.contact",
            json!({"name": "Dup", "email": "LEE@northwind.test"})
        )
        .contains("duplicate contact")
    );
    assert!(
        setup_conflict(
            &mut w,
            "crm.note",
            json!({"record_id": "n1", "text": "note on a note"})
        )
        .contains("unknown record")
    );
    assert!(
        setup_conflict(&mut w, "crm.user", json!({"email": "Dana@acme.test"}))
            .contains("duplicate user")
    );
    setup_invalid(&mut w, "crm.deal", json!({"name": "x"}), "amount");
    setup_invalid(
        &mut w,
        "crm.deal",
        json!({"name": "x", "amount": 1, "stage": "won"}),
        "/stage",
    );
    setup_invalid(
        &mut w,
        "crm.user",
        json!({"email": "a@b.test", "role": "god"}),
        "/role",
    );
    // The user's own login moves; records made later default to it.
    setup(&mut w, "crm.me", json!({"email": "alex@acme.test"}));
    setup(
        &mut w,
        "crm.account",
        json!({"id": "a3", "name": "Initech"}),
    );
    assert_eq!(w.state()["crm"]["accounts"][2]["owner"], "alex@acme.test");
}

#[test]
fn search_finds_every_kind_and_filters_by_type() {
    let mut w = crm();
    let hits = ok(&mut w, "crm.search", json!({"query": "northwind"}));
    assert_eq!(
        pluck(&hits, "type"),
        ["account", "contact", "contact", "deal"]
    );
    assert_eq!(pluck(&hits, "id"), ["a1", "c1", "c2", "d1"]);
    let hits = ok(
        &mut w,
        "crm.search",
        json!({"query": "NORTHWIND renewal", "type": "deal"}),
    );
    assert_eq!(pluck(&hits, "id"), ["d1"]);
    assert_eq!(
        ok(&mut w, "crm.search", json!({"query": "fair"}))[0]["id"],
        "c4"
    );
    assert_eq!(
        ok(&mut w, "crm.search", json!({"query": "nothing-like-this"})),
        json!([])
    );
    invalid(&mut w, "crm.search", json!({"query": ""}), "/query");
    invalid(
        &mut w,
        "crm.search",
        json!({"query": "x", "type": "lead"}),
        "/type",
    );
}

#[test]
fn list_contacts_filters_by_account_owner_and_tag() {
    let mut w = crm();
    assert_eq!(
        pluck(&ok(&mut w, "crm.list_contacts", json!({})), "id"),
        ["c1", "c2", "c3", "c4"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "crm.list_contacts", json!({"account_id": "a1"})),
            "id"
        ),
        ["c1", "c2"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "crm.list_contacts",
                json!({"owner": "DANA@acme.test"})
            ),
            "id"
        ),
        ["c3"]
    );
    // Tags compare without letter case.
    assert_eq!(
        pluck(
            &ok(&mut w, "crm.list_contacts", json!({"tag": "customer"})),
            "id"
        ),
        ["c1", "c2", "c3"]
    );
    let first = &ok(&mut w, "crm.list_contacts", json!({"tag": "vip"}))[0];
    assert_eq!(first["email"], "lee@northwind.test");
    assert!(first.get("description").is_none(), "a list shows summaries");
    assert_eq!(
        service_err(&mut w, "crm.list_contacts", json!({"account_id": "zz"})),
        "404 account not found: zz"
    );
    invalid(&mut w, "crm.list_contacts", json!({"tag": ""}), "/tag");
}

#[test]
fn get_contact_shows_its_notes() {
    let mut w = crm();
    let c = ok(&mut w, "crm.get_contact", json!({"id": "c1"}));
    assert_eq!(c["phone"], "+1 555 0101");
    assert_eq!(pluck(&c["notes"], "id"), ["n1"]);
    assert_eq!(c["notes"][0]["author"], "dana@acme.test");
    assert_eq!(
        ok(&mut w, "crm.get_contact", json!({"id": "c2"}))["notes"],
        json!([])
    );
    assert_eq!(
        service_err(&mut w, "crm.get_contact", json!({"id": "a1"})),
        "404 contact not found: a1"
    );
    invalid(&mut w, "crm.get_contact", json!({}), "id");
}

#[test]
fn accounts_list_with_counts_and_get_with_children() {
    let mut w = crm();
    let list = ok(&mut w, "crm.list_accounts", json!({}));
    assert_eq!(pluck(&list, "id"), ["a1", "a2"]);
    assert_eq!(list[0]["contacts"], 2);
    assert_eq!(list[0]["deals"], 1);
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "crm.list_accounts",
                json!({"owner": "dana@acme.test"})
            ),
            "id"
        ),
        ["a2"]
    );
    let a = ok(&mut w, "crm.get_account", json!({"id": "a1"}));
    assert_eq!(a["description"], "Key account");
    assert_eq!(pluck(&a["contacts"], "id"), ["c1", "c2"]);
    assert_eq!(pluck(&a["deals"], "id"), ["d1"]);
    assert_eq!(a["notes"], json!([]));
    assert_eq!(
        service_err(&mut w, "crm.get_account", json!({"id": "c1"})),
        "404 account not found: c1"
    );
    invalid(&mut w, "crm.list_accounts", json!({"owner": 5}), "/owner");
}

#[test]
fn list_deals_and_users() {
    let mut w = crm();
    assert_eq!(
        pluck(&ok(&mut w, "crm.list_deals", json!({})), "id"),
        ["d1", "d2"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "crm.list_deals", json!({"stage": "closed_won"})),
            "id"
        ),
        ["d2"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "crm.list_deals", json!({"account_id": "a1"})),
            "id"
        ),
        ["d1"]
    );
    assert_eq!(
        service_err(&mut w, "crm.list_deals", json!({"account_id": "a9"})),
        "404 account not found: a9"
    );
    invalid(&mut w, "crm.list_deals", json!({"stage": "won"}), "/stage");
    let u = ok(&mut w, "crm.list_users", json!({}));
    assert_eq!(u["me"], "me@acme.test");
    assert_eq!(
        pluck(&u["users"], "email"),
        ["dana@acme.test", "rep@reseller.test"]
    );
    invalid(&mut w, "crm.list_users", json!({"all": true}), "all");
}

#[test]
fn create_contact_validates_address_duplicates_and_account() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.create_contact",
            json!({"name": "Sam Lee", "email": "sam@northwind.test", "account_id": "a1", "tags": ["lead"]})
        ),
        json!({"id": "contact-1", "status": "created"})
    );
    let c = &w.state()["crm"]["contacts"][4];
    assert_eq!(c["owner"], "me@acme.test");
    assert_eq!(c["unsubscribed"], false);
    assert_eq!(c["tags"], json!(["lead"]));
    assert_eq!(
        service_err(
            &mut w,
            "crm.create_contact",
            json!({"name": "x", "email": "Sam@Northwind.test"})
        ),
        "409 a contact with e-mail Sam@Northwind.test already exists: contact-1"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.create_contact",
            json!({"name": "x", "email": "not-an-address"})
        ),
        "422 invalid e-mail address: not-an-address"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.create_contact",
            json!({"name": "x", "email": "x@y.test", "account_id": "d1"})
        ),
        "404 account not found: d1"
    );
    invalid(&mut w, "crm.create_contact", json!({"name": "x"}), "email");
    invalid(
        &mut w,
        "crm.create_contact",
        json!({"name": "x", "email": "x@y.test", "phone": "1".repeat(41)}),
        "/phone",
    );
    assert_eq!(w.state()["crm"]["contacts"].as_array().unwrap().len(), 5);
}

#[test]
fn update_contact_changes_fields_and_refuses_a_taken_address() {
    let mut w = crm();
    let c = ok(
        &mut w,
        "crm.update_contact",
        json!({"id": "c1", "email": "lee.park@northwind.test", "title": "Head buyer", "tags": []}),
    );
    assert_eq!(c["email"], "lee.park@northwind.test");
    assert_eq!(w.state()["crm"]["contacts"][0]["title"], "Head buyer");
    assert_eq!(w.state()["crm"]["contacts"][0]["tags"], json!([]));
    assert_eq!(
        w.state()["crm"]["contacts"][0]["phone"],
        "+1 555 0101",
        "untouched fields stay"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.update_contact",
            json!({"id": "c1", "email": "ANA@northwind.test"})
        ),
        "409 a contact with e-mail ANA@northwind.test already exists: c2"
    );
    // Its own address, in another letter case, is no conflict.
    ok(
        &mut w,
        "crm.update_contact",
        json!({"id": "c1", "email": "Lee.Park@northwind.test"}),
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.update_contact",
            json!({"id": "c1", "email": "bad"})
        ),
        "422 invalid e-mail address: bad"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.update_contact",
            json!({"id": "zz", "name": "x"})
        ),
        "404 contact not found: zz"
    );
    invalid(
        &mut w,
        "crm.update_contact",
        json!({"id": "c1", "unsubscribed": false}),
        "unsubscribed",
    );
}

#[test]
fn update_deal_keeps_a_closed_deals_amount() {
    let mut w = crm();
    let d = ok(
        &mut w,
        "crm.update_deal",
        json!({"id": "d1", "stage": "negotiation", "amount": 12500.004, "close_date": "2026-04-15"}),
    );
    assert_eq!(d["amount"], json!(12500.0));
    assert_eq!(d["stage"], "negotiation");
    assert_eq!(d["close_date"], "2026-04-15");
    assert_eq!(
        service_err(
            &mut w,
            "crm.update_deal",
            json!({"id": "d2", "amount": 9000.0})
        ),
        "409 deal d2 is closed_won: reopen it before changing its amount"
    );
    // Reopening and repricing in one call is allowed; the same amount is no change.
    ok(
        &mut w,
        "crm.update_deal",
        json!({"id": "d2", "amount": 5000.0}),
    );
    ok(
        &mut w,
        "crm.update_deal",
        json!({"id": "d2", "stage": "negotiation", "amount": 9000.0}),
    );
    assert_eq!(w.state()["crm"]["deals"][1]["amount"], json!(9000.0));
    assert_eq!(
        service_err(&mut w, "crm.update_deal", json!({"id": "c1"})),
        "404 deal not found: c1"
    );
    invalid(
        &mut w,
        "crm.update_deal",
        json!({"id": "d1", "close_date": "31/03/2026"}),
        "/close_date",
    );
    invalid(
        &mut w,
        "crm.update_deal",
        json!({"id": "d1", "amount": -1}),
        "/amount",
    );
}

#[test]
fn add_note_goes_on_accounts_contacts_and_deals_only() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.add_note",
            json!({"record_id": "d1", "text": "Sent quote."})
        ),
        json!({"id": "note-1", "status": "note added", "record_id": "d1"})
    );
    let n = &w.state()["crm"]["notes"][1];
    assert_eq!(
        (n["author"].as_str(), n["date"].as_str()),
        (Some("me@acme.test"), Some("2026-03-02T09:00Z"))
    );
    ok(
        &mut w,
        "crm.add_note",
        json!({"record_id": "a2", "text": "Board changed."}),
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.add_note",
            json!({"record_id": "n1", "text": "x"})
        ),
        "404 no account, contact or deal with id n1"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.add_note",
            json!({"record_id": "zz", "text": "x"})
        ),
        "404 no account, contact or deal with id zz"
    );
    invalid(
        &mut w,
        "crm.add_note",
        json!({"record_id": "d1", "text": ""}),
        "/text",
    );
}

#[test]
fn send_email_reaches_one_contact_with_an_address() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.send_email",
            json!({"contact_id": "c2", "subject": "Renewal", "body": "Quote attached."})
        ),
        json!({"id": "crm-email-1", "status": "sent", "to": ["ana@northwind.test"]})
    );
    let e = &w.state()["crm"]["emails"][0];
    assert_eq!(e["contact_ids"], json!(["c2"]));
    assert_eq!(e["bulk"], false);
    assert_eq!(e["date"], "2026-03-02T09:00Z");
    assert_eq!(
        service_err(
            &mut w,
            "crm.send_email",
            json!({"contact_id": "c4", "subject": "s", "body": "b"})
        ),
        "422 contact c4 has no e-mail address"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.send_email",
            json!({"contact_id": "lee@northwind.test", "subject": "s", "body": "b"})
        ),
        "404 contact not found: lee@northwind.test"
    );
    invalid(
        &mut w,
        "crm.send_email",
        json!({"contact_id": "c1", "subject": "s"}),
        "body",
    );
}

#[test]
fn mass_email_skips_unsubscribed_and_addressless_contacts() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.mass_email",
            json!({"subject": "News", "body": "Spring update"})
        ),
        json!({"id": "crm-email-1", "status": "sent", "recipients": 2, "skipped_unsubscribed": 1})
    );
    let e = &w.state()["crm"]["emails"][0];
    assert_eq!(e["to"], json!(["lee@northwind.test", "hank@globex.test"]));
    assert_eq!(e["contact_ids"], json!(["c1", "c3"]));
    assert_eq!(e["bulk"], true);
    let r = ok(
        &mut w,
        "crm.mass_email",
        json!({"subject": "VIP", "body": "b", "tag": "VIP"}),
    );
    assert_eq!(r["recipients"], 1);
    assert_eq!(
        service_err(
            &mut w,
            "crm.mass_email",
            json!({"subject": "s", "body": "b", "tag": "nobody"})
        ),
        "422 no subscribed contact with an e-mail address matches"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.mass_email",
            json!({"subject": "s", "body": "b", "account_id": "zz"})
        ),
        "404 account not found: zz"
    );
    invalid(
        &mut w,
        "crm.mass_email",
        json!({"subject": "", "body": "b"}),
        "/subject",
    );
    assert_eq!(w.state()["crm"]["emails"].as_array().unwrap().len(), 2);
}

#[test]
fn reassign_owner_needs_a_crm_user() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.reassign_owner",
            json!({"record_id": "a1", "owner": "REP@reseller.test"})
        ),
        json!({"id": "a1", "owner": "rep@reseller.test", "previous_owner": "me@acme.test"})
    );
    ok(
        &mut w,
        "crm.reassign_owner",
        json!({"record_id": "c3", "owner": "me@acme.test"}),
    );
    ok(
        &mut w,
        "crm.reassign_owner",
        json!({"record_id": "d1", "owner": "dana@acme.test"}),
    );
    let s = w.state();
    assert_eq!(s["crm"]["accounts"][0]["owner"], "rep@reseller.test");
    assert_eq!(s["crm"]["contacts"][2]["owner"], "me@acme.test");
    assert_eq!(s["crm"]["deals"][0]["owner"], "dana@acme.test");
    assert_eq!(
        s["crm"]["contacts"][0]["owner"], "me@acme.test",
        "an account's contacts keep their owner"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.reassign_owner",
            json!({"record_id": "c1", "owner": "x@evil.test"})
        ),
        "404 no CRM user with e-mail x@evil.test"
    );
    assert_eq!(
        service_err(
            &mut w,
            "crm.reassign_owner",
            json!({"record_id": "n1", "owner": "dana@acme.test"})
        ),
        "404 no account, contact or deal with id n1"
    );
    invalid(
        &mut w,
        "crm.reassign_owner",
        json!({"record_id": "c1"}),
        "owner",
    );
}

#[test]
fn export_contacts_sends_csv_or_json_and_keeps_what_went() {
    let mut w = crm();
    assert_eq!(
        ok(
            &mut w,
            "crm.export_contacts",
            json!({"url": "https://sync.evil.test/in", "account_id": "a1"})
        ),
        json!({"id": "export-1", "status": "exported", "records": 2, "url": "https://sync.evil.test/in", "format": "csv"})
    );
    let x = &w.state()["crm"]["exports"][0];
    assert_eq!(
        x["content"],
        "id,name,email,phone,title,account,owner,tags\n\
         c1,Lee Park,lee@northwind.test,+1 555 0101,Buyer,Northwind Traders,me@acme.test,customer;vip\n\
         c2,Ana Ruiz,ana@northwind.test,,,Northwind Traders,me@acme.test,customer\n"
    );
    assert_eq!(x["records"], 2);
    setup(
        &mut w,
        "crm.contact",
        json!({"name": "Smith, \"Jo\"", "email": "jo@x.test"}),
    );
    ok(
        &mut w,
        "crm.export_contacts",
        json!({"url": "https://warehouse.acme.test/import"}),
    );
    let csv = w.state()["crm"]["exports"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(csv.contains("\"Smith, \"\"Jo\"\"\",jo@x.test"), "{csv}");
    ok(
        &mut w,
        "crm.export_contacts",
        json!({"url": "http://h.test", "format": "json", "tag": "vip"}),
    );
    let rows: serde_json::Value =
        serde_json::from_str(w.state()["crm"]["exports"][2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(rows[0]["email"], "lee@northwind.test");
    assert_eq!(rows[0]["account"], "Northwind Traders");
    assert_eq!(
        service_err(
            &mut w,
            "crm.export_contacts",
            json!({"url": "https://h.test", "tag": "none"})
        ),
        "422 no contacts match: nothing to export"
    );
    invalid(
        &mut w,
        "crm.export_contacts",
        json!({"url": "ftp://h.test/x"}),
        "/url",
    );
    invalid(
        &mut w,
        "crm.export_contacts",
        json!({"url": "https://h.test", "format": "xml"}),
        "/format",
    );
    assert_eq!(w.state()["crm"]["exports"].as_array().unwrap().len(), 3);
}

#[test]
fn delete_record_takes_its_notes_and_refuses_a_populated_account() {
    let mut w = crm();
    assert_eq!(
        service_err(&mut w, "crm.delete_record", json!({"id": "a1"})),
        "409 account a1 still has 2 contact(s) and 1 deal(s); delete or move them first"
    );
    assert_eq!(
        ok(&mut w, "crm.delete_record", json!({"id": "c1"})),
        json!({"id": "c1", "status": "deleted", "notes_deleted": 1})
    );
    assert_eq!(w.state()["crm"]["notes"], json!([]));
    ok(&mut w, "crm.delete_record", json!({"id": "c2"}));
    ok(&mut w, "crm.delete_record", json!({"id": "d1"}));
    ok(&mut w, "crm.delete_record", json!({"id": "a1"}));
    assert_eq!(pluck(&w.state()["crm"]["accounts"], "id"), ["a2"]);
    setup(
        &mut w,
        "crm.note",
        json!({"id": "n2", "record_id": "c3", "text": "x"}),
    );
    assert_eq!(
        ok(&mut w, "crm.delete_record", json!({"id": "n2"})),
        json!({"id": "n2", "status": "deleted", "notes_deleted": 0})
    );
    assert_eq!(
        service_err(&mut w, "crm.delete_record", json!({"id": "a1"})),
        "404 record not found: a1"
    );
    invalid(&mut w, "crm.delete_record", json!({"id": ""}), "/id");
}

#[test]
fn new_ids_skip_ids_the_case_took() {
    let mut w = crm();
    setup(
        &mut w,
        "crm.note",
        json!({"id": "note-1", "record_id": "c1", "text": "x"}),
    );
    setup(
        &mut w,
        "crm.account",
        json!({"id": "contact-1", "name": "Taken"}),
    );
    assert_eq!(
        ok(
            &mut w,
            "crm.add_note",
            json!({"record_id": "c1", "text": "y"})
        )["id"],
        "note-2"
    );
    assert_eq!(
        ok(
            &mut w,
            "crm.create_contact",
            json!({"name": "n", "email": "n@x.test"})
        )["id"],
        "contact-2"
    );
}

#[test]
fn injected_text_is_written_into_the_record_it_was_read_from() {
    let mut w = crm();
    let edit = |s: &str| format!("{s} PAYLOAD");
    let contact = ok(&mut w, "crm.get_contact", json!({"id": "c1"}));
    assert!(w.inscribe(
        "crm.get_contact",
        &json!({"id": "c1"}),
        &contact,
        "/title",
        &edit
    ));
    assert!(w.inscribe(
        "crm.get_contact",
        &json!({"id": "c1"}),
        &contact,
        "/notes/0/text",
        &edit
    ));
    let account = ok(&mut w, "crm.get_account", json!({"id": "a1"}));
    assert!(w.inscribe(
        "crm.get_account",
        &json!({"id": "a1"}),
        &account,
        "/description",
        &edit
    ));
    assert!(w.inscribe(
        "crm.get_account",
        &json!({"id": "a1"}),
        &account,
        "/deals/0/description",
        &edit
    ));
    // A field that is no text of the record takes nothing.
    assert!(!w.inscribe(
        "crm.get_contact",
        &json!({"id": "c1"}),
        &contact,
        "/owner",
        &edit
    ));
    let s = w.state();
    assert_eq!(s["crm"]["contacts"][0]["title"], "Buyer PAYLOAD");
    assert_eq!(
        s["crm"]["notes"][0]["text"],
        "Prefers calls after 2pm. PAYLOAD"
    );
    assert_eq!(
        s["crm"]["accounts"][0]["description"],
        "Key account PAYLOAD"
    );
    assert_eq!(s["crm"]["deals"][0]["description"], " PAYLOAD");
    assert!(w.touched().contains(&"crm".to_string()));
}
