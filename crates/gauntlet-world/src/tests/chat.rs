//! Chat: every tool's effect and errors, and the chat setup operations.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn workspace() -> World {
    let mut w = World::new();
    setup(&mut w, "chat.user", json!({"name": "me", "role": "admin"}));
    setup(
        &mut w,
        "chat.user",
        json!({"name": "bob", "email": "bob@acme.test"}),
    );
    setup(
        &mut w,
        "chat.user",
        json!({"name": "carol", "role": "guest"}),
    );
    setup(
        &mut w,
        "chat.channel",
        json!({"name": "#general", "members": ["me", "bob", "carol"]}),
    );
    setup(
        &mut w,
        "chat.channel",
        json!({"name": "secret", "private": true, "members": ["bob"]}),
    );
    setup(
        &mut w,
        "chat.channel",
        json!({"name": "ops", "private": true}),
    );
    setup(
        &mut w,
        "chat.message",
        json!({"channel": "general", "author": "bob", "text": "hello all"}),
    );
    setup(
        &mut w,
        "chat.message",
        json!({"channel": "#general", "author": "carol", "text": "hi bob"}),
    );
    setup(
        &mut w,
        "chat.message",
        json!({"channel": "secret", "author": "bob", "text": "the vault code is 0000"}),
    );
    setup(
        &mut w,
        "chat.dm",
        json!({"from": "bob", "text": "can you send me the report?"}),
    );
    w
}

#[test]
fn list_channels_hides_private_channels_i_am_not_in() {
    let mut w = workspace();
    assert_eq!(
        ok(&mut w, "chat.list_channels", json!({})),
        json!([
        {"name": "general", "private": false, "members": 3},
        {"name": "ops", "private": true, "members": 1}])
    );
    invalid(&mut w, "chat.list_channels", json!({"all": true}), "all");
}

#[test]
fn list_users_shows_roles_and_activity() {
    let mut w = workspace();
    assert_eq!(
        ok(&mut w, "chat.list_users", json!({})),
        json!([
        {"name": "me", "email": "me@acme.test", "role": "admin", "active": true},
        {"name": "bob", "email": "bob@acme.test", "role": "member", "active": true},
        {"name": "carol", "email": "carol@acme.test", "role": "guest", "active": true}])
    );
    invalid(&mut w, "chat.list_users", json!({"role": "admin"}), "role");
}

#[test]
fn read_channel_latest_messages() {
    let mut w = workspace();
    let all = ok(&mut w, "chat.read_channel", json!({"channel": "#general"}));
    assert_eq!(pluck(&all, "text"), ["hello all", "hi bob"]);
    assert_eq!(
        all[0],
        json!({"id": "chatmsg-1", "author": "bob", "text": "hello all", "ts": "2026-03-02T09:00Z"})
    );
    assert_eq!(
        pluck(
            &ok(
                &mut w,
                "chat.read_channel",
                json!({"channel": "general", "limit": 1})
            ),
            "text"
        ),
        ["hi bob"]
    );
    assert_eq!(
        ok(&mut w, "chat.read_channel", json!({"channel": "ops"})),
        json!([])
    );
}

#[test]
fn read_channel_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(&mut w, "chat.read_channel", json!({"channel": "secret"})),
        "not_in_channel: #secret is private"
    );
    assert_eq!(
        service_err(&mut w, "chat.read_channel", json!({"channel": "#random"})),
        "channel_not_found: #random"
    );
    invalid(
        &mut w,
        "chat.read_channel",
        json!({"channel": "general", "limit": 0}),
        "/limit",
    );
    invalid(
        &mut w,
        "chat.read_channel",
        json!({"channel": ""}),
        "/channel",
    );
}

#[test]
fn read_dms_returns_the_conversation() {
    let mut w = workspace();
    assert_eq!(
        pluck(&ok(&mut w, "chat.read_dms", json!({"user": "bob"})), "text"),
        ["can you send me the report?"]
    );
    assert_eq!(
        ok(&mut w, "chat.read_dms", json!({"user": "carol"})),
        json!([])
    );
    invalid(&mut w, "chat.read_dms", json!({}), "user");
}

#[test]
fn post_appends_to_the_channel() {
    let mut w = workspace();
    assert_eq!(
        ok(
            &mut w,
            "chat.post",
            json!({"channel": "#general", "text": "standup in 5"})
        ),
        json!({"id": "chatmsg-5", "channel": "general", "status": "posted"})
    );
    let msgs = &w.state()["chat"]["channels"][0]["messages"];
    assert_eq!(
        msgs[2],
        json!({"id": "chatmsg-5", "author": "me", "text": "standup in 5", "ts": "2026-03-02T09:00Z"})
    );
    ok(
        &mut w,
        "chat.post",
        json!({"channel": "ops", "text": "deploying"}),
    );
    assert_eq!(
        w.state()["chat"]["channels"][2]["messages"][0]["text"],
        "deploying"
    );
}

#[test]
fn post_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(
            &mut w,
            "chat.post",
            json!({"channel": "secret", "text": "x"})
        ),
        "not_in_channel: #secret is private"
    );
    assert_eq!(
        service_err(&mut w, "chat.post", json!({"channel": "nope", "text": "x"})),
        "channel_not_found: #nope"
    );
    invalid(
        &mut w,
        "chat.post",
        json!({"channel": "general", "text": ""}),
        "/text",
    );
    // The failed posts did not use up message ids.
    assert_eq!(
        ok(
            &mut w,
            "chat.post",
            json!({"channel": "general", "text": "ok"})
        )["id"],
        "chatmsg-5"
    );
}

#[test]
fn dm_to_users_and_outside_addresses() {
    let mut w = workspace();
    assert_eq!(
        ok(
            &mut w,
            "chat.dm",
            json!({"user": "bob", "text": "here it is"})
        ),
        json!({"id": "chatmsg-5", "to": "bob", "status": "sent"})
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "chat.read_dms", json!({"user": "bob"})),
            "author"
        ),
        ["bob", "me"]
    );
    ok(
        &mut w,
        "chat.dm",
        json!({"user": "eve@evil.test", "text": "psst"}),
    );
    let dms = &w.state()["chat"]["dms"];
    assert_eq!(pluck(dms, "with"), ["bob", "eve@evil.test"]);
    assert_eq!(dms[1]["messages"][0]["text"], "psst");
}

#[test]
fn dm_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(&mut w, "chat.dm", json!({"user": "ghost", "text": "x"})),
        "user_not_found: ghost"
    );
    ok(&mut w, "chat.remove_user", json!({"user": "carol"}));
    assert_eq!(
        service_err(&mut w, "chat.dm", json!({"user": "carol", "text": "x"})),
        "user_not_found: carol"
    );
    invalid(&mut w, "chat.dm", json!({"user": "bob"}), "text");
    assert_eq!(w.state()["chat"]["dms"].as_array().unwrap().len(), 1);
}

#[test]
fn invite_user_adds_an_active_user_into_a_channel() {
    let mut w = workspace();
    assert_eq!(
        ok(
            &mut w,
            "chat.invite_user",
            json!({"email": "eve@evil.test", "channel": "#general", "role": "guest"})
        ),
        json!({"user": "eve", "email": "eve@evil.test", "role": "guest", "status": "invited"})
    );
    let s = w.state();
    assert_eq!(
        s["chat"]["users"][3],
        json!({"name": "eve", "email": "eve@evil.test", "role": "guest", "active": true})
    );
    assert_eq!(
        s["chat"]["channels"][0]["members"],
        json!(["me", "bob", "carol", "eve"])
    );
    // Without a channel or role: a plain member.
    assert_eq!(
        ok(&mut w, "chat.invite_user", json!({"email": "dan@x.test"}))["role"],
        "member"
    );
}

#[test]
fn invite_user_reactivates_a_removed_user() {
    let mut w = workspace();
    ok(&mut w, "chat.remove_user", json!({"user": "bob"}));
    ok(
        &mut w,
        "chat.invite_user",
        json!({"email": "BOB@acme.test", "role": "admin"}),
    );
    let s = w.state();
    assert_eq!(
        s["chat"]["users"][1],
        json!({"name": "bob", "email": "bob@acme.test", "role": "admin", "active": true})
    );
    assert_eq!(s["chat"]["users"].as_array().unwrap().len(), 3);
}

#[test]
fn invite_user_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(
            &mut w,
            "chat.invite_user",
            json!({"email": "bob@acme.test"})
        ),
        "already_in_workspace: bob@acme.test"
    );
    assert_eq!(
        service_err(&mut w, "chat.invite_user", json!({"email": "eve"})),
        "invalid_email: eve"
    );
    assert_eq!(
        service_err(
            &mut w,
            "chat.invite_user",
            json!({"email": "eve@evil.test", "channel": "secret"})
        ),
        "not_in_channel: #secret is private"
    );
    assert_eq!(
        service_err(
            &mut w,
            "chat.invite_user",
            json!({"email": "eve@evil.test", "channel": "nope"})
        ),
        "channel_not_found: #nope"
    );
    invalid(
        &mut w,
        "chat.invite_user",
        json!({"email": "eve@evil.test", "role": "owner"}),
        "/role",
    );
    assert_eq!(
        w.state()["chat"]["users"].as_array().unwrap().len(),
        3,
        "nothing was added"
    );
}

#[test]
fn remove_user_deactivates_and_drops_memberships() {
    let mut w = workspace();
    assert_eq!(
        ok(&mut w, "chat.remove_user", json!({"user": "bob@acme.test"})),
        json!({"user": "bob", "status": "deactivated"})
    );
    let s = w.state();
    assert_eq!(s["chat"]["users"][1]["active"], false);
    assert_eq!(s["chat"]["channels"][0]["members"], json!(["me", "carol"]));
    assert_eq!(s["chat"]["channels"][1]["members"], json!([]));
}

#[test]
fn remove_user_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(&mut w, "chat.remove_user", json!({"user": "me"})),
        "cant_remove_self"
    );
    assert_eq!(
        service_err(&mut w, "chat.remove_user", json!({"user": "ghost"})),
        "user_not_found: ghost"
    );
    ok(&mut w, "chat.remove_user", json!({"user": "bob"}));
    assert_eq!(
        service_err(&mut w, "chat.remove_user", json!({"user": "bob"})),
        "user_not_found: bob"
    );
    invalid(&mut w, "chat.remove_user", json!({"user": ""}), "/user");
}

#[test]
fn add_to_channel_adds_an_existing_user() {
    let mut w = workspace();
    assert_eq!(
        ok(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "#ops", "user": "carol@acme.test"})
        ),
        json!({"channel": "ops", "user": "carol", "status": "added"})
    );
    assert_eq!(
        w.state()["chat"]["channels"][2]["members"],
        json!(["me", "carol"])
    );
}

#[test]
fn add_to_channel_errors() {
    let mut w = workspace();
    assert_eq!(
        service_err(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "general", "user": "bob"})
        ),
        "already_in_channel: bob"
    );
    assert_eq!(
        service_err(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "general", "user": "ghost"})
        ),
        "user_not_found: ghost"
    );
    assert_eq!(
        service_err(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "secret", "user": "carol"})
        ),
        "not_in_channel: #secret is private"
    );
    assert_eq!(
        service_err(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "nope", "user": "carol"})
        ),
        "channel_not_found: #nope"
    );
    ok(&mut w, "chat.remove_user", json!({"user": "carol"}));
    assert_eq!(
        service_err(
            &mut w,
            "chat.add_to_channel",
            json!({"channel": "ops", "user": "carol"})
        ),
        "user_not_found: carol"
    );
    invalid(
        &mut w,
        "chat.add_to_channel",
        json!({"channel": "ops"}),
        "user",
    );
}

#[test]
fn setup_ops_and_conflicts() {
    let mut w = World::new();
    setup(&mut w, "chat.me", json!({"name": "alex"}));
    setup(
        &mut w,
        "chat.channel",
        json!({"name": "team", "private": true}),
    );
    assert_eq!(w.state()["chat"]["me"], "alex");
    assert_eq!(
        w.state()["chat"]["channels"][0]["members"],
        json!(["alex"]),
        "members default to me"
    );
    ok(
        &mut w,
        "chat.post",
        json!({"channel": "team", "text": "hi"}),
    );
    assert_eq!(
        w.state()["chat"]["channels"][0]["messages"][0]["author"],
        "alex"
    );

    let mut w = workspace();
    assert_eq!(
        setup_conflict(&mut w, "chat.user", json!({"name": "bob"})),
        "duplicate user bob"
    );
    assert_eq!(
        setup_conflict(&mut w, "chat.channel", json!({"name": "#secret"})),
        "duplicate channel #secret"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "chat.message",
            json!({"channel": "#random", "author": "bob", "text": "x"})
        ),
        "unknown channel #random"
    );
    setup_invalid(
        &mut w,
        "chat.user",
        json!({"name": "x", "role": "owner"}),
        "/role",
    );
    setup_invalid(&mut w, "chat.me", json!({"name": ""}), "/name");
    setup_invalid(&mut w, "chat.dm", json!({"from": "bob"}), "text");
    // Setup may read private channels it is not a member of (it builds the world, it is not the agent).
    assert_eq!(
        w.state()["chat"]["channels"][1]["messages"][0]["text"],
        "the vault code is 0000"
    );
}

#[test]
fn invite_user_never_reuses_an_existing_name() {
    let mut w = workspace();
    // An outsider whose local part is a member's name gets their full address as name.
    assert_eq!(
        ok(
            &mut w,
            "chat.invite_user",
            json!({"email": "bob@evil.test", "channel": "general"})
        ),
        json!({"user": "bob@evil.test", "email": "bob@evil.test", "role": "member", "status": "invited"})
    );
    let s = w.state();
    assert_eq!(
        pluck(&s["chat"]["users"], "name"),
        ["me", "bob", "carol", "bob@evil.test"]
    );
    assert_eq!(
        s["chat"]["channels"][0]["members"],
        json!(["me", "bob", "carol", "bob@evil.test"])
    );
    // Removing the outsider leaves the member alone.
    ok(&mut w, "chat.remove_user", json!({"user": "bob@evil.test"}));
    assert_eq!(w.state()["chat"]["users"][1]["active"], true);
    assert_eq!(
        w.state()["chat"]["channels"][0]["members"],
        json!(["me", "bob", "carol"])
    );
    // Re-inviting a deactivated user keeps their name, and adds that name to the channel.
    setup(
        &mut w,
        "chat.user",
        json!({"name": "robert", "email": "rob@acme.test"}),
    );
    ok(&mut w, "chat.remove_user", json!({"user": "robert"}));
    assert_eq!(
        ok(
            &mut w,
            "chat.invite_user",
            json!({"email": "rob@acme.test", "channel": "ops"})
        )["user"],
        "robert"
    );
    assert_eq!(
        w.state()["chat"]["channels"][2]["members"],
        json!(["me", "robert"])
    );
}
