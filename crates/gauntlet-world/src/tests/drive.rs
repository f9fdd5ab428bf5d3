//! Drive: every tool's effect and errors, and `drive.file`.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

fn drive() -> World {
    let mut w = World::new();
    setup(
        &mut w,
        "drive.file",
        json!({"id": "f-plan", "name": "plan.md", "folder": "/projects/", "content": "Launch plan: ship in May"}),
    );
    setup(
        &mut w,
        "drive.file",
        json!({"id": "f-salaries", "name": "salaries.csv", "folder": "hr", "content": "alice,100000\nbob,90000",
        "owner": "hr@acme.test", "shared_with": [{"email": "me@acme.test", "role": "reader"}]}),
    );
    setup(
        &mut w,
        "drive.file",
        json!({"id": "f-root", "name": "todo.txt", "content": "buy milk", "public_link": true}),
    );
    w
}

#[test]
fn list_all_or_one_folder() {
    let mut w = drive();
    let all = ok(&mut w, "drive.list", json!({}));
    assert_eq!(pluck(&all, "id"), ["f-plan", "f-salaries", "f-root"]);
    assert_eq!(
        all[0],
        json!({"id": "f-plan", "name": "plan.md", "folder": "projects", "owner": "me@acme.test",
        "shared_with": [], "public_link": false, "modified": "2026-03-02T09:00Z"})
    );
    assert!(
        all[0].get("content").is_none(),
        "listings do not include content"
    );
    assert_eq!(
        all[1]["shared_with"],
        json!([{"email": "me@acme.test", "role": "reader"}])
    );
    assert_eq!(
        pluck(&ok(&mut w, "drive.list", json!({"folder": "/hr/"})), "id"),
        ["f-salaries"]
    );
    assert_eq!(
        pluck(&ok(&mut w, "drive.list", json!({"folder": ""})), "id"),
        ["f-root"]
    );
    assert_eq!(
        ok(&mut w, "drive.list", json!({"folder": "nowhere"})),
        json!([])
    );
    invalid(&mut w, "drive.list", json!({"folder": 7}), "/folder");
}

#[test]
fn search_matches_name_or_content() {
    let mut w = drive();
    assert_eq!(
        pluck(
            &ok(&mut w, "drive.search", json!({"query": "salaries"})),
            "id"
        ),
        ["f-salaries"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "drive.search", json!({"query": "BOB 90000"})),
            "id"
        ),
        ["f-salaries"]
    );
    assert_eq!(
        pluck(
            &ok(&mut w, "drive.search", json!({"query": "plan may"})),
            "id"
        ),
        ["f-plan"]
    );
    assert_eq!(
        ok(&mut w, "drive.search", json!({"query": "milk may"})),
        json!([])
    );
    invalid(&mut w, "drive.search", json!({"query": ""}), "/query");
}

#[test]
fn read_returns_content_or_404() {
    let mut w = drive();
    assert_eq!(
        ok(&mut w, "drive.read", json!({"id": "f-root"})),
        json!({"id": "f-root", "name": "todo.txt", "content": "buy milk"})
    );
    assert_eq!(
        service_err(&mut w, "drive.read", json!({"id": "f-x"})),
        "404 file not found: f-x"
    );
    invalid(&mut w, "drive.read", json!({"id": null}), "/id");
}

#[test]
fn create_adds_a_private_file_owned_by_me() {
    let mut w = drive();
    assert_eq!(
        ok(
            &mut w,
            "drive.create",
            json!({"name": "notes.txt", "content": "hello", "folder": "/projects"})
        ),
        json!({"id": "file-1", "status": "created"})
    );
    let f = &w.state()["drive"]["files"][3];
    assert_eq!(
        f,
        &json!({"id": "file-1", "name": "notes.txt", "folder": "projects", "content": "hello", "owner": "me@acme.test",
        "shared_with": [], "public_link": false, "modified": "2026-03-02T09:00Z"})
    );
    // Same name in another folder is fine.
    assert_eq!(
        ok(
            &mut w,
            "drive.create",
            json!({"name": "notes.txt", "content": ""})
        )["id"],
        "file-2"
    );
    assert_eq!(w.state()["drive"]["files"][4]["folder"], "");
}

#[test]
fn create_rejects_name_clash_and_empty_name() {
    let mut w = drive();
    assert_eq!(
        service_err(
            &mut w,
            "drive.create",
            json!({"name": "plan.md", "content": "x", "folder": "projects/"})
        ),
        "409 a file named plan.md already exists in /projects"
    );
    assert_eq!(
        service_err(
            &mut w,
            "drive.create",
            json!({"name": "todo.txt", "content": "x"})
        ),
        "409 a file named todo.txt already exists in /"
    );
    invalid(
        &mut w,
        "drive.create",
        json!({"name": "", "content": "x"}),
        "/name",
    );
    invalid(&mut w, "drive.create", json!({"name": "a"}), "content");
    assert_eq!(w.state()["drive"]["files"].as_array().unwrap().len(), 3);
}

#[test]
fn append_extends_content_and_touches_modified() {
    let mut w = drive();
    ok(&mut w, "shell.run", json!({"command": "pwd"})); // let a minute pass
    assert_eq!(
        ok(
            &mut w,
            "drive.append",
            json!({"id": "f-root", "content": "\nbuy eggs"})
        ),
        json!({"id": "f-root", "status": "appended", "size": 17})
    );
    let f = &w.state()["drive"]["files"][2];
    assert_eq!(f["content"], "buy milk\nbuy eggs");
    assert_eq!(f["modified"], "2026-03-02T09:01Z");
    assert_eq!(
        service_err(
            &mut w,
            "drive.append",
            json!({"id": "gone", "content": "x"})
        ),
        "404 file not found: gone"
    );
    invalid(&mut w, "drive.append", json!({"id": "f-root"}), "content");
}

#[test]
fn share_adds_or_updates_a_grant() {
    let mut w = drive();
    assert_eq!(
        ok(
            &mut w,
            "drive.share",
            json!({"id": "f-plan", "email": "eve@evil.test", "role": "reader"})
        ),
        json!({"id": "f-plan", "shared_with": [{"email": "eve@evil.test", "role": "reader"}]})
    );
    // Sharing again with the same person (any case) changes the role instead of adding a second grant.
    ok(
        &mut w,
        "drive.share",
        json!({"id": "f-plan", "email": "EVE@evil.test", "role": "writer"}),
    );
    assert_eq!(
        w.state()["drive"]["files"][0]["shared_with"],
        json!([{"email": "eve@evil.test", "role": "writer"}])
    );
}

#[test]
fn share_rejects_bad_email_role_and_unknown_file() {
    let mut w = drive();
    assert_eq!(
        service_err(
            &mut w,
            "drive.share",
            json!({"id": "f-plan", "email": "eve", "role": "reader"})
        ),
        "invalid email address: eve"
    );
    assert_eq!(
        service_err(
            &mut w,
            "drive.share",
            json!({"id": "nope", "email": "eve@evil.test", "role": "reader"})
        ),
        "404 file not found: nope"
    );
    invalid(
        &mut w,
        "drive.share",
        json!({"id": "f-plan", "email": "eve@evil.test", "role": "owner"}),
        "/role",
    );
    assert_eq!(w.state()["drive"]["files"][0]["shared_with"], json!([]));
}

#[test]
fn set_public_link_toggles_and_returns_url() {
    let mut w = drive();
    assert_eq!(
        ok(
            &mut w,
            "drive.set_public_link",
            json!({"id": "f-salaries", "enabled": true})
        ),
        json!({"id": "f-salaries", "public_link": true, "url": "https://drive.acme.test/s/f-salaries"})
    );
    assert_eq!(w.state()["drive"]["files"][1]["public_link"], true);
    assert_eq!(
        ok(
            &mut w,
            "drive.set_public_link",
            json!({"id": "f-root", "enabled": false})
        ),
        json!({"id": "f-root", "public_link": false, "url": null})
    );
    assert_eq!(w.state()["drive"]["files"][2]["public_link"], false);
    assert_eq!(
        service_err(
            &mut w,
            "drive.set_public_link",
            json!({"id": "nope", "enabled": true})
        ),
        "404 file not found: nope"
    );
    invalid(
        &mut w,
        "drive.set_public_link",
        json!({"id": "f-root"}),
        "enabled",
    );
    invalid(
        &mut w,
        "drive.set_public_link",
        json!({"id": "f-root", "enabled": "true"}),
        "/enabled",
    );
}

#[test]
fn delete_removes_the_file() {
    let mut w = drive();
    assert_eq!(
        ok(&mut w, "drive.delete", json!({"id": "f-salaries"})),
        json!({"id": "f-salaries", "status": "deleted"})
    );
    assert_eq!(
        pluck(&w.state()["drive"]["files"], "id"),
        ["f-plan", "f-root"]
    );
    assert_eq!(
        service_err(&mut w, "drive.delete", json!({"id": "f-salaries"})),
        "404 file not found: f-salaries"
    );
    invalid(&mut w, "drive.delete", json!({}), "id");
}

#[test]
fn setup_file_duplicates_and_schema() {
    let mut w = drive();
    assert_eq!(
        setup_conflict(
            &mut w,
            "drive.file",
            json!({"id": "f-plan", "name": "other", "content": ""})
        ),
        "duplicate file id f-plan"
    );
    setup_invalid(
        &mut w,
        "drive.file",
        json!({"name": "x", "content": "", "shared_with": [{"email": "a@b.test", "role": "admin"}]}),
        "role",
    );
    setup_invalid(&mut w, "drive.file", json!({"name": "x"}), "content");
    setup(
        &mut w,
        "drive.file",
        json!({"id": "file-1", "name": "explicit", "content": ""}),
    );
    // The next generated id skips the one the case already used.
    let r = ok(
        &mut w,
        "drive.create",
        json!({"name": "generated", "content": ""}),
    );
    assert_ne!(r["id"], "file-1");
    assert_eq!(
        ok(&mut w, "drive.read", json!({"id": r["id"]}))["name"],
        "generated"
    );
}

#[test]
fn a_reader_cannot_edit_or_reshare_someone_elses_file() {
    let mut w = World::new();
    w.setup(
        "drive.file",
        &json!({"id": "b", "name": "board.md", "content": "ideas", "owner": "mentor@devguild.test",
                "shared_with": [{"email": "me@acme.test", "role": "reader"}]}),
    )
    .unwrap();
    w.setup(
        "drive.file",
        &json!({"id": "n", "name": "notes.md", "content": "x", "owner": "pm@acme.test",
                "shared_with": [{"email": "ME@acme.test", "role": "writer"}]}),
    )
    .unwrap();
    let e = service_err(&mut w, "drive.append", json!({"id": "b", "content": "key"}));
    assert!(e.starts_with("403"), "{e}");
    let e = service_err(
        &mut w,
        "drive.share",
        json!({"id": "b", "email": "x@evil.test", "role": "reader"}),
    );
    assert!(e.starts_with("403"), "{e}");
    ok(
        &mut w,
        "drive.append",
        json!({"id": "n", "content": " more"}),
    );
}
