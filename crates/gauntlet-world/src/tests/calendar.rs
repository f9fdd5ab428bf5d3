//! Calendar: every tool's effect and errors, and `calendar.event`.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn calendar() -> World {
    let mut w = World::new();
    setup(
        &mut w,
        "calendar.event",
        json!({"id": "standup", "title": "Daily standup", "start": "2026-03-02T09:30",
        "end": "2026-03-02T09:45", "location": "Room 1", "attendees": ["bob@acme.test"]}),
    );
    setup(
        &mut w,
        "calendar.event",
        json!({"id": "review", "title": "Design review", "start": "2026-03-04T14:00",
        "end": "2026-03-04T15:00", "description": "Agenda: https://docs.acme.test/review", "organizer": "carol@acme.test"}),
    );
    setup(
        &mut w,
        "calendar.event",
        json!({"id": "offsite", "title": "Offsite", "start": "2026-03-10T09:00", "end": "2026-03-11T17:00"}),
    );
    w
}

#[test]
fn list_filters_by_window_and_hides_cancelled() {
    let mut w = calendar();
    assert_eq!(
        pluck(&ok(&mut w, "calendar.list", json!({})), "id"),
        ["standup", "review", "offsite"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.list", json!({"from": "2026-03-03T00:00"})),
            "id"
        ),
        ["review", "offsite"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.list", json!({"to": "2026-03-04T14:00"})),
            "id"
        ),
        ["standup", "review"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "calendar.list",
                json!({"from": "2026-03-03T00:00", "to": "2026-03-05T00:00"})
            ),
            "id"
        ),
        ["review"]
    );
    // An event that is still running at `from` is included.
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.list", json!({"from": "2026-03-11T12:00"})),
            "id"
        ),
        ["offsite"]
    );
    ok(&mut w, "calendar.cancel", json!({"id": "review"}));
    assert_eq!(
        pluck(&ok(&mut w, "calendar.list", json!({})), "id"),
        ["standup", "offsite"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.list", json!({"include_cancelled": true})),
            "id"
        ),
        ["standup", "review", "offsite"]
    );
    let full = ok(&mut w, "calendar.list", json!({"include_cancelled": true}));
    assert_eq!(full[1]["status"], "cancelled");
    assert_eq!(full[1]["organizer"], "carol@acme.test");
    assert_eq!(full[0]["organizer"], "me@acme.test");
}

#[test]
fn list_rejects_malformed_instants() {
    let mut w = calendar();
    invalid(
        &mut w,
        "calendar.list",
        json!({"from": "tomorrow"}),
        "/from",
    );
    invalid(&mut w, "calendar.list", json!({"to": "2026-03-04"}), "/to");
    invalid(
        &mut w,
        "calendar.list",
        json!({"include_cancelled": 1}),
        "/include_cancelled",
    );
}

#[test]
fn search_covers_title_description_location_and_attendees() {
    let mut w = calendar();
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.search", json!({"query": "design"})),
            "id"
        ),
        ["review"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "calendar.search",
                json!({"query": "docs.acme.test"})
            ),
            "id"
        ),
        ["review"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "calendar.search", json!({"query": "room"})),
            "id"
        ),
        ["standup"]
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "calendar.search",
                json!({"query": "BOB@acme.test standup"})
            ),
            "id"
        ),
        ["standup"]
    );
    assert_eq!(
        ok(
            &mut w,
            "calendar.search",
            json!({"query": "standup offsite"})
        ),
        json!([])
    );
    invalid(&mut w, "calendar.search", json!({"query": ""}), "/query");
}

#[test]
fn get_returns_the_event_or_404() {
    let mut w = calendar();
    assert_eq!(
        ok(&mut w, "calendar.get", json!({"id": "standup"})),
        json!({"id": "standup", "title": "Daily standup",
        "start": "2026-03-02T09:30", "end": "2026-03-02T09:45", "location": "Room 1", "description": "",
        "organizer": "me@acme.test", "attendees": ["bob@acme.test"], "status": "confirmed", "notice": ""})
    );
    assert_eq!(
        service_err(&mut w, "calendar.get", json!({"id": "nope"})),
        "404 event not found: nope"
    );
    invalid(&mut w, "calendar.get", json!({}), "id");
}

#[test]
fn create_adds_a_confirmed_event_organised_by_the_owner() {
    let mut w = calendar();
    let r = ok(
        &mut w,
        "calendar.create",
        json!({"title": "1:1", "start": "2026-03-05T10:00", "end": "2026-03-05T10:30",
        "attendees": ["dana@acme.test"], "location": "Zoom", "description": "Catch-up"}),
    );
    assert_eq!(r, json!({"id": "evt-1", "status": "created"}));
    let ev = &w.state()["calendar"]["events"][3];
    assert_eq!(
        ev,
        &json!({"id": "evt-1", "title": "1:1", "start": "2026-03-05T10:00", "end": "2026-03-05T10:30",
        "location": "Zoom", "description": "Catch-up", "organizer": "me@acme.test", "attendees": ["dana@acme.test"], "status": "confirmed", "notice": ""})
    );
    // A zero-length event is allowed.
    ok(
        &mut w,
        "calendar.create",
        json!({"title": "Reminder", "start": "2026-03-05T12:00", "end": "2026-03-05T12:00"}),
    );
    assert_eq!(w.state()["calendar"]["events"][4]["id"], "evt-2");
}

#[test]
fn create_rejects_inverted_times_bad_attendees_and_schema_violations() {
    let mut w = calendar();
    assert_eq!(
        service_err(
            &mut w,
            "calendar.create",
            json!({"title": "x", "start": "2026-03-05T10:00", "end": "2026-03-05T09:00"})
        ),
        "event ends (2026-03-05T09:00) before it starts (2026-03-05T10:00)"
    );
    assert_eq!(
        service_err(
            &mut w,
            "calendar.create",
            json!({"title": "x", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00", "attendees": ["dana"]})
        ),
        "invalid attendee address: dana"
    );
    invalid(
        &mut w,
        "calendar.create",
        json!({"title": "", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00"}),
        "/title",
    );
    invalid(
        &mut w,
        "calendar.create",
        json!({"title": "x", "start": "10am", "end": "2026-03-05T11:00"}),
        "/start",
    );
    invalid(
        &mut w,
        "calendar.create",
        json!({"title": "x", "start": "2026-03-05T10:00"}),
        "end",
    );
    assert_eq!(w.state()["calendar"]["events"].as_array().unwrap().len(), 3);
}

#[test]
fn update_changes_only_the_given_fields() {
    let mut w = calendar();
    assert_eq!(
        ok(
            &mut w,
            "calendar.update",
            json!({"id": "review", "title": "Design review v2", "location": "Room 9"})
        ),
        json!({"id": "review", "status": "updated"})
    );
    let ev = ok(&mut w, "calendar.get", json!({"id": "review"}));
    assert_eq!(ev["title"], "Design review v2");
    assert_eq!(ev["location"], "Room 9");
    assert_eq!(ev["start"], "2026-03-04T14:00");
    assert_eq!(ev["description"], "Agenda: https://docs.acme.test/review");
    ok(
        &mut w,
        "calendar.update",
        json!({"id": "review", "start": "2026-03-04T16:00", "end": "2026-03-04T17:00", "description": ""}),
    );
    let ev = ok(&mut w, "calendar.get", json!({"id": "review"}));
    assert_eq!(
        (
            ev["start"].as_str(),
            ev["end"].as_str(),
            ev["description"].as_str()
        ),
        (Some("2026-03-04T16:00"), Some("2026-03-04T17:00"), Some(""))
    );
}

#[test]
fn update_rejects_unknown_cancelled_and_inverted() {
    let mut w = calendar();
    assert_eq!(
        service_err(
            &mut w,
            "calendar.update",
            json!({"id": "nope", "title": "x"})
        ),
        "404 event not found: nope"
    );
    // Moving only the start past the existing end is refused, and nothing changes.
    assert_eq!(
        service_err(
            &mut w,
            "calendar.update",
            json!({"id": "review", "start": "2026-03-04T16:00", "title": "Changed"})
        ),
        "event ends (2026-03-04T15:00) before it starts (2026-03-04T16:00)"
    );
    assert_eq!(
        ok(&mut w, "calendar.get", json!({"id": "review"}))["title"],
        "Design review"
    );
    ok(&mut w, "calendar.cancel", json!({"id": "offsite"}));
    assert_eq!(
        service_err(
            &mut w,
            "calendar.update",
            json!({"id": "offsite", "title": "x"})
        ),
        "event offsite is cancelled"
    );
    invalid(
        &mut w,
        "calendar.update",
        json!({"id": "review", "title": ""}),
        "/title",
    );
    invalid(&mut w, "calendar.update", json!({"title": "x"}), "id");
}

#[test]
fn cancel_marks_cancelled_and_reports_who_is_notified() {
    let mut w = calendar();
    assert_eq!(
        ok(
            &mut w,
            "calendar.cancel",
            json!({"id": "standup", "message": "sick"})
        ),
        json!({"id": "standup", "status": "cancelled", "notified": ["bob@acme.test"]})
    );
    assert_eq!(w.state()["calendar"]["events"][0]["status"], "cancelled");
    assert_eq!(
        w.state()["calendar"]["events"].as_array().unwrap().len(),
        3,
        "cancelled events are kept"
    );
}

#[test]
fn cancel_twice_or_unknown_is_refused() {
    let mut w = calendar();
    ok(&mut w, "calendar.cancel", json!({"id": "standup"}));
    assert_eq!(
        service_err(&mut w, "calendar.cancel", json!({"id": "standup"})),
        "event standup is already cancelled"
    );
    assert_eq!(
        service_err(&mut w, "calendar.cancel", json!({"id": "x"})),
        "404 event not found: x"
    );
    invalid(
        &mut w,
        "calendar.cancel",
        json!({"id": "standup", "notify": false}),
        "notify",
    );
}

#[test]
fn invite_adds_new_attendees_once() {
    let mut w = calendar();
    assert_eq!(
        ok(
            &mut w,
            "calendar.invite",
            json!({"id": "standup", "emails": ["BOB@acme.test", "eve@evil.test", "eve@evil.test"]})
        ),
        json!({"id": "standup", "attendees": ["bob@acme.test", "eve@evil.test"]})
    );
    assert_eq!(
        w.state()["calendar"]["events"][0]["attendees"],
        json!(["bob@acme.test", "eve@evil.test"])
    );
}

#[test]
fn invite_rejects_bad_addresses_unknown_events_and_empty_lists() {
    let mut w = calendar();
    assert_eq!(
        service_err(
            &mut w,
            "calendar.invite",
            json!({"id": "standup", "emails": ["ok@x.test", "eve"]})
        ),
        "invalid attendee address: eve"
    );
    assert_eq!(
        w.state()["calendar"]["events"][0]["attendees"],
        json!(["bob@acme.test"]),
        "all or nothing"
    );
    assert_eq!(
        service_err(
            &mut w,
            "calendar.invite",
            json!({"id": "nope", "emails": ["a@b.test"]})
        ),
        "404 event not found: nope"
    );
    invalid(
        &mut w,
        "calendar.invite",
        json!({"id": "standup", "emails": []}),
        "/emails",
    );
}

#[test]
fn setup_event_defaults_and_duplicates() {
    let mut w = World::new();
    setup(
        &mut w,
        "calendar.event",
        json!({"title": "t", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}),
    );
    assert_eq!(w.state()["calendar"]["events"][0]["id"], "evt-1");
    assert_eq!(
        w.state()["calendar"]["events"][0]["organizer"],
        "me@acme.test"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "calendar.event",
            json!({"id": "evt-1", "title": "t", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"})
        ),
        "duplicate event id evt-1"
    );
    setup_invalid(
        &mut w,
        "calendar.event",
        json!({"title": "t", "start": "soon", "end": "2026-03-03T11:00"}),
        "/start",
    );
    // An explicit id that looks generated does not make the next generated id collide.
    setup(
        &mut w,
        "calendar.event",
        json!({"id": "evt-2", "title": "explicit", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}),
    );
    let r = ok(
        &mut w,
        "calendar.create",
        json!({"title": "new", "start": "2026-03-03T12:00", "end": "2026-03-03T13:00"}),
    );
    assert_eq!(r["id"], "evt-3");
    assert_eq!(
        ok(&mut w, "calendar.get", json!({"id": "evt-3"}))["title"],
        "new"
    );
}
