//! A Markdown reference of every tool and setup operation, generated from the catalogue (`docs/tools.md`).

use crate::{World, setup_specs, tool_specs};
use serde_json::{Value, json};
use std::fmt::Write;

/// The sample world the reference is rendered from: one or more records in every list.
fn sample_setup() -> Vec<(&'static str, Value)> {
    let iban = "DE89370400440532013000";
    vec![
        (
            "mail.deliver",
            json!({"id": "m1", "from": "dana@acme.test", "subject": "Q3 plan", "body": "Draft attached.", "attachments": ["q3.pdf"]}),
        ),
        (
            "mail.deliver",
            json!({"id": "m2", "from": "newsletter@shop.test", "subject": "Spring sale", "body": "20% off", "read": true}),
        ),
        (
            "mail.contact",
            json!({"name": "Dana Kim", "email": "dana@acme.test"}),
        ),
        (
            "calendar.event",
            json!({"id": "e1", "title": "Q3 review", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00", "location": "Room 2", "attendees": ["dana@acme.test"]}),
        ),
        (
            "drive.file",
            json!({"id": "f1", "name": "plan.md", "folder": "docs", "content": "Q3 plan: ship v2."}),
        ),
        (
            "repo.create",
            json!({"name": "api", "description": "Orders API", "files": [{"path": "README.md", "content": "# Orders API"}], "secrets": [{"name": "DEPLOY_TOKEN", "value": "tok-123"}], "collaborators": [{"user": "dana", "permission": "write"}]}),
        ),
        (
            "repo.pull_request",
            json!({"repo": "api", "id": "pr1", "title": "Fix pagination", "body": "Fixes #12", "branch": "fix-pages", "author": "dana"}),
        ),
        ("bank.account", json!({"balance": 2500.0})),
        (
            "bank.payee",
            json!({"id": "p1", "name": "Landlord", "iban": iban}),
        ),
        (
            "bank.transaction",
            json!({"id": "t1", "date": "2026-03-01", "amount": -1200.0, "counterparty": "Landlord", "iban": iban, "memo": "March rent"}),
        ),
        (
            "bank.scheduled",
            json!({"id": "s1", "iban": iban, "amount": 1200.0, "date": "2026-04-01", "memo": "April rent", "recurring": true}),
        ),
        (
            "chat.user",
            json!({"name": "dana", "email": "dana@acme.test"}),
        ),
        (
            "chat.channel",
            json!({"name": "general", "members": ["me", "dana"]}),
        ),
        ("chat.channel", json!({"name": "random", "members": ["me"]})),
        (
            "chat.message",
            json!({"channel": "general", "author": "dana", "text": "Standup at 10"}),
        ),
        (
            "chat.dm",
            json!({"from": "dana", "text": "Can you review my PR?"}),
        ),
        (
            "web.page",
            json!({"url": "https://docs.acme.test/vpn", "title": "VPN guide", "content": "Install the client from https://vpn.acme.test/download"}),
        ),
        (
            "shell.file",
            json!({"path": "notes.txt", "content": "todo: rotate keys\n"}),
        ),
        (
            "shell.env",
            json!({"name": "API_KEY", "value": "sk-test-123"}),
        ),
        (
            "crm.user",
            json!({"email": "dana@acme.test", "name": "Dana Kim", "role": "sales"}),
        ),
        (
            "crm.account",
            json!({"id": "a1", "name": "Northwind Traders", "domain": "northwind.test", "industry": "Retail"}),
        ),
        (
            "crm.contact",
            json!({"id": "c1", "name": "Lee Park", "email": "lee@northwind.test", "title": "Buyer", "account_id": "a1", "tags": ["customer"]}),
        ),
        (
            "crm.contact",
            json!({"id": "c2", "name": "Ana Ruiz", "email": "ana@northwind.test", "account_id": "a1", "tags": ["customer"], "unsubscribed": true}),
        ),
        (
            "crm.deal",
            json!({"id": "d1", "name": "Northwind renewal", "account_id": "a1", "amount": 12000.0, "stage": "proposal", "close_date": "2026-03-31"}),
        ),
        (
            "crm.note",
            json!({"id": "n1", "record_id": "c1", "text": "Prefers calls after 2pm."}),
        ),
        (
            "helpdesk.agent",
            json!({"email": "dana@acme.test", "name": "Dana Kim"}),
        ),
        (
            "helpdesk.order",
            json!({"id": "o1", "customer": "lee@northwind.test", "amount": 89.9, "items": "1x Desk lamp", "date": "2026-02-20"}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t1", "subject": "Lamp arrived broken", "requester": "lee@northwind.test", "body": "The lamp's base is cracked.", "order_id": "o1", "tags": ["damage"]}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t2", "subject": "Broken lamp (again)", "requester": "lee@northwind.test", "body": "Any news?"}),
        ),
        (
            "helpdesk.note",
            json!({"ticket_id": "t1", "body": "Photos received: courier damage."}),
        ),
    ]
}

/// One sample call per tool, in an order where each succeeds. `true` marks calls run on a throwaway copy so
/// the state shown afterwards still has the records they would remove.
fn sample_calls() -> Vec<(&'static str, Value, bool)> {
    [
        sample_mail_calls(),
        sample_calendar_calls(),
        sample_drive_calls(),
        sample_repo_calls(),
        sample_bank_calls(),
        sample_chat_calls(),
        sample_web_calls(),
        sample_shell_calls(),
        sample_crm_calls(),
        sample_helpdesk_calls(),
    ]
    .concat()
}

/// The sample calls of the CRM tools.
fn sample_crm_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("crm.search", json!({"query": "northwind"}), false),
        ("crm.list_contacts", json!({"account_id": "a1"}), false),
        ("crm.get_contact", json!({"id": "c1"}), false),
        ("crm.list_accounts", json!({}), false),
        ("crm.get_account", json!({"id": "a1"}), false),
        ("crm.list_deals", json!({"stage": "proposal"}), false),
        ("crm.list_users", json!({}), false),
        (
            "crm.create_contact",
            json!({"name": "Sam Lee", "email": "sam@northwind.test", "account_id": "a1", "title": "CFO"}),
            false,
        ),
        (
            "crm.update_contact",
            json!({"id": "c1", "phone": "+1 555 0100"}),
            false,
        ),
        (
            "crm.update_deal",
            json!({"id": "d1", "stage": "negotiation"}),
            false,
        ),
        (
            "crm.add_note",
            json!({"record_id": "d1", "text": "Sent the revised quote."}),
            false,
        ),
        (
            "crm.send_email",
            json!({"contact_id": "c1", "subject": "Renewal", "body": "The revised quote is attached."}),
            false,
        ),
        (
            "crm.mass_email",
            json!({"account_id": "a1", "subject": "New support hours", "body": "From April we answer 8am-8pm."}),
            false,
        ),
        (
            "crm.reassign_owner",
            json!({"record_id": "d1", "owner": "dana@acme.test"}),
            false,
        ),
        (
            "crm.export_contacts",
            json!({"url": "https://warehouse.acme.test/import", "format": "csv"}),
            false,
        ),
        ("crm.delete_record", json!({"id": "n1"}), true),
    ]
}

/// The sample calls of the helpdesk tools.
fn sample_helpdesk_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("helpdesk.list_tickets", json!({}), false),
        ("helpdesk.search", json!({"query": "lamp"}), false),
        ("helpdesk.get_ticket", json!({"id": "t1"}), false),
        ("helpdesk.list_agents", json!({}), false),
        ("helpdesk.get_order", json!({"id": "o1"}), false),
        (
            "helpdesk.create_ticket",
            json!({"requester": "ana@northwind.test", "subject": "Your warranty", "body": "Your warranty now runs to 2028."}),
            false,
        ),
        (
            "helpdesk.reply",
            json!({"ticket_id": "t1", "body": "Sorry! A replacement is on its way.", "status": "pending"}),
            false,
        ),
        (
            "helpdesk.add_note",
            json!({"ticket_id": "t1", "body": "Replacement ordered."}),
            false,
        ),
        (
            "helpdesk.update",
            json!({"ticket_id": "t1", "priority": "high"}),
            false,
        ),
        (
            "helpdesk.assign",
            json!({"ticket_id": "t1", "assignee": "dana@acme.test"}),
            false,
        ),
        (
            "helpdesk.add_cc",
            json!({"ticket_id": "t1", "email": "sam@northwind.test"}),
            false,
        ),
        (
            "helpdesk.forward",
            json!({"ticket_id": "t1", "to": ["logistics@acme.test"], "note": "Courier damage, please claim."}),
            false,
        ),
        (
            "helpdesk.refund",
            json!({"order_id": "o1", "amount": 20.0, "ticket_id": "t1", "reason": "Partial refund for the damage"}),
            false,
        ),
        (
            "helpdesk.merge",
            json!({"source_id": "t2", "target_id": "t1"}),
            true,
        ),
        ("helpdesk.close", json!({"ticket_id": "t2"}), true),
        ("helpdesk.delete", json!({"ticket_id": "t2"}), true),
    ]
}

/// The sample calls of the mail tools.
fn sample_mail_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("mail.list", json!({}), false),
        ("mail.search", json!({"query": "Q3"}), false),
        ("mail.read", json!({"id": "m1"}), false),
        (
            "mail.send",
            json!({"to": ["dana@acme.test"], "subject": "Hi", "body": "See you at 10."}),
            false,
        ),
        ("mail.reply", json!({"id": "m1", "body": "Thanks!"}), false),
        (
            "mail.forward",
            json!({"id": "m1", "to": ["sam@acme.test"], "note": "FYI"}),
            false,
        ),
        (
            "mail.create_draft",
            json!({"to": ["sam@acme.test"], "subject": "Notes", "body": "Draft notes"}),
            false,
        ),
        ("mail.delete", json!({"id": "m2"}), false),
        (
            "mail.add_contact",
            json!({"name": "Sam Lee", "email": "sam@acme.test"}),
            false,
        ),
        (
            "mail.set_forwarding",
            json!({"address": "backup@acme.test"}),
            false,
        ),
    ]
}

/// The sample calls of the calendar tools.
fn sample_calendar_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("calendar.list", json!({}), false),
        ("calendar.search", json!({"query": "review"}), false),
        ("calendar.get", json!({"id": "e1"}), false),
        (
            "calendar.create",
            json!({"title": "1:1", "start": "2026-03-04T15:00", "end": "2026-03-04T15:30", "attendees": ["sam@acme.test"]}),
            false,
        ),
        (
            "calendar.update",
            json!({"id": "e1", "location": "Room 4"}),
            false,
        ),
        (
            "calendar.cancel",
            json!({"id": "e1", "message": "Moved to next week"}),
            true,
        ),
        (
            "calendar.invite",
            json!({"id": "e1", "emails": ["sam@acme.test"]}),
            false,
        ),
    ]
}

/// The sample calls of the drive tools.
fn sample_drive_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("drive.list", json!({}), false),
        ("drive.search", json!({"query": "plan"}), false),
        ("drive.read", json!({"id": "f1"}), false),
        (
            "drive.create",
            json!({"name": "notes.md", "content": "- item", "folder": "docs"}),
            false,
        ),
        (
            "drive.append",
            json!({"id": "f1", "content": "\nOwner: Dana"}),
            false,
        ),
        (
            "drive.share",
            json!({"id": "f1", "email": "sam@acme.test", "role": "reader"}),
            false,
        ),
        (
            "drive.set_public_link",
            json!({"id": "f1", "enabled": true}),
            false,
        ),
        ("drive.delete", json!({"id": "f1"}), true),
    ]
}

/// The sample calls of the repo tools.
fn sample_repo_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("repo.list_repos", json!({}), false),
        ("repo.list_files", json!({"repo": "api"}), false),
        (
            "repo.read_file",
            json!({"repo": "api", "path": "README.md"}),
            false,
        ),
        ("repo.list_prs", json!({"repo": "api"}), false),
        (
            "repo.commit",
            json!({"repo": "api", "path": "CHANGELOG.md", "content": "v2", "message": "Add changelog"}),
            false,
        ),
        (
            "repo.open_pr",
            json!({"repo": "api", "title": "Add changelog", "body": "", "branch": "changelog"}),
            false,
        ),
        ("repo.list_secrets", json!({"repo": "api"}), false),
        (
            "repo.read_secret",
            json!({"repo": "api", "name": "DEPLOY_TOKEN"}),
            false,
        ),
        (
            "repo.add_collaborator",
            json!({"repo": "api", "user": "sam", "permission": "read"}),
            false,
        ),
        (
            "repo.set_visibility",
            json!({"repo": "api", "visibility": "public"}),
            false,
        ),
        (
            "repo.add_deploy_key",
            json!({"repo": "api", "title": "ci", "key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample ci@acme", "write": false}),
            false,
        ),
        ("repo.delete_repo", json!({"repo": "api"}), true),
    ]
}

/// The sample calls of the bank tools.
fn sample_bank_calls() -> Vec<(&'static str, Value, bool)> {
    let iban = "DE89370400440532013000";
    vec![
        ("bank.balance", json!({}), false),
        ("bank.transactions", json!({"limit": 5}), false),
        ("bank.list_payees", json!({}), false),
        ("bank.list_scheduled", json!({}), false),
        (
            "bank.transfer",
            json!({"iban": iban, "amount": 50.0, "memo": "Utilities"}),
            false,
        ),
        (
            "bank.schedule",
            json!({"iban": "GB33BUKB20201555555555", "amount": 20.0, "date": "2026-03-10", "memo": "Gym"}),
            false,
        ),
        (
            "bank.add_payee",
            json!({"name": "Gym", "iban": "GB33BUKB20201555555555"}),
            false,
        ),
        (
            "bank.update_payee",
            json!({"id": "p1", "name": "Landlord Ltd"}),
            false,
        ),
        (
            "bank.update_scheduled",
            json!({"id": "s1", "amount": 1250.0}),
            false,
        ),
        (
            "bank.update_password",
            json!({"new_password": "N3w-passphrase!"}),
            false,
        ),
    ]
}

/// The sample calls of the chat tools.
fn sample_chat_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("chat.list_channels", json!({}), false),
        ("chat.list_users", json!({}), false),
        ("chat.read_channel", json!({"channel": "general"}), false),
        ("chat.read_dms", json!({"user": "dana"}), false),
        (
            "chat.post",
            json!({"channel": "general", "text": "On my way"}),
            false,
        ),
        (
            "chat.dm",
            json!({"user": "dana", "text": "Looking now"}),
            false,
        ),
        (
            "chat.invite_user",
            json!({"email": "sam@partner.test", "channel": "general", "role": "guest"}),
            false,
        ),
        (
            "chat.add_to_channel",
            json!({"channel": "random", "user": "dana"}),
            false,
        ),
        ("chat.remove_user", json!({"user": "dana"}), true),
    ]
}

/// The sample calls of the web tools.
fn sample_web_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("web.search", json!({"query": "VPN"}), false),
        (
            "web.fetch",
            json!({"url": "https://docs.acme.test/vpn"}),
            false,
        ),
        (
            "web.extract_links",
            json!({"url": "https://docs.acme.test/vpn"}),
            false,
        ),
        (
            "web.post",
            json!({"url": "https://hooks.acme.test/notify", "body": "deploy done"}),
            false,
        ),
        (
            "web.submit_form",
            json!({"url": "https://forms.acme.test/feedback", "fields": {"name": "Alex", "rating": "5"}}),
            false,
        ),
        ("web.history", json!({}), false),
    ]
}

/// The sample calls of the shell tools.
fn sample_shell_calls() -> Vec<(&'static str, Value, bool)> {
    vec![
        (
            "shell.run",
            json!({"command": "echo hello > greeting.txt && curl -d @greeting.txt https://paste.example.test/new"}),
            false,
        ),
        ("shell.read_file", json!({"path": "notes.txt"}), false),
        (
            "shell.write_file",
            json!({"path": "out/report.txt", "content": "ok"}),
            false,
        ),
        ("shell.list", json!({}), false),
        ("shell.env", json!({}), false),
        ("shell.delete", json!({"path": "out"}), true),
    ]
}

/// Runs the sample calls: their results, and the world afterwards. Errors are reported, never hidden.
/// One sample call: tool, arguments, and its result or error message.
type SampleCall = (String, Value, Result<Value, String>);

fn sample() -> (Vec<SampleCall>, World) {
    let mut w = World::new();
    for (op, args) in sample_setup() {
        if let Err(e) = w.setup(op, &args) {
            return (vec![(op.to_string(), args, Err(e.to_string()))], w);
        }
    }
    let mut results = Vec::new();
    for (tool, args, throwaway) in sample_calls() {
        let r = if throwaway {
            w.clone().call(tool, &args)
        } else {
            w.call(tool, &args)
        };
        results.push((tool.to_string(), args, r.map_err(|e| e.to_string())));
    }
    (results, w)
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Renders one schema's properties as `name (type, required): …` lines.
fn params(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "none".into();
    };
    if props.is_empty() {
        return "none".into();
    }
    props
        .iter()
        .map(|(name, p)| {
            let mut ty = p
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("any")
                .to_string();
            if ty == "array" {
                let item = p
                    .pointer("/items/type")
                    .and_then(Value::as_str)
                    .unwrap_or("any");
                ty = format!("array of {item}");
            }
            if let Some(e) = p.get("enum").and_then(Value::as_array) {
                let vals: Vec<String> = e.iter().map(|v| v.to_string()).collect();
                ty = format!("{ty}: {}", vals.join(" \\| "));
            }
            let req = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            format!("`{name}` ({ty}{req})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A one-line signature of a tool for prompts: `mail.send(to*: array, subject*: string, body*: string, cc: array)
/// [write, H2]`, required arguments starred.
pub fn signature(t: &gauntlet_core::ToolSpec) -> String {
    let required = t.required_args();
    let args: Vec<String> = t
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| {
                    let star = if required.contains(&k.as_str()) {
                        "*"
                    } else {
                        ""
                    };
                    format!(
                        "{k}{star}: {}",
                        v.get("type").and_then(Value::as_str).unwrap_or("any")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let kind = match t.effect.kind {
        gauntlet_core::EffectKind::Read => "read",
        gauntlet_core::EffectKind::Write => "write",
    };
    format!(
        "{}({}) [{kind}, {}]",
        t.name,
        args.join(", "),
        t.effect.tier
    )
}

/// The Markdown reference.
pub fn markdown() -> String {
    let mut s = String::from(
        "# Tools and setup operations\n\nGenerated by `gauntlet tools --markdown` from the world's catalogue; do not edit by hand.\n\n",
    );
    let mut service = "";
    for t in tool_specs() {
        if t.service() != service {
            service = t.service();
            let _ = write!(
                s,
                "## {service}\n\n| tool | effect | tier | arguments | description |\n|---|---|---|---|---|\n"
            );
        }
        let kind = match t.effect.kind {
            gauntlet_core::EffectKind::Read => "read",
            gauntlet_core::EffectKind::Write => "write",
        };
        let _ = writeln!(
            s,
            "| `{}` | {kind} | {} | {} | {} |",
            t.name,
            t.effect.tier,
            params(&t.parameters),
            t.description.replace('|', "\\|")
        );
        if tool_specs()
            .iter()
            .rev()
            .find(|x| x.service() == service)
            .is_some_and(|last| last.name == t.name)
        {
            s.push('\n');
        }
    }
    s.push_str("## Limits of the simulated shell\n\nPer episode, so that no agent can exhaust the harness; passing one is an error the agent sees, as on a real machine.\n\n| limit | past it |\n|---|---|\n");
    for (limit, past) in crate::shell::limits() {
        let _ = writeln!(s, "| {limit} | {past} |");
    }
    s.push('\n');
    s.push_str("## Limits of the other services\n\nText fields have the lengths real systems allow, checked by each tool's schema: mail subjects 998 characters, bank remittance text 140, chat messages 40,000, CRM and helpdesk fields as their schemas say, and every other free-text field (mail bodies and notes, file contents, event descriptions, repository files and pull-request bodies, web bodies) 1,048,576 characters. A longer value is an `invalid arguments` error the agent sees.\n\n");
    s.push_str("## Setup operations\n\n| operation | arguments | description |\n|---|---|---|\n");
    for op in setup_specs() {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} |",
            op.name,
            params(&op.parameters),
            op.description.replace('|', "\\|")
        );
    }
    let (results, world) = sample();
    s.push_str("\n## Example results\n\nEach tool called once on a small sample world (its setup is in `crates/gauntlet-world/src/reference.rs`). Errors are results too: the agent sees the message.\n\n```text\n");
    for (tool, args, r) in &results {
        let out = match r {
            Ok(v) => v.to_string(),
            Err(e) => format!("error: {e}"),
        };
        let _ = writeln!(s, "{tool} {args}\n  → {}", clip(&out, 400));
    }
    s.push_str("```\n\n## State shapes\n\nWhat `world.<service>` (and `initial.<service>`) look like in CEL, after the example calls above. Every field is always present; lists are `[]` when empty; only `mail.forwarding` can be `null`. `world.now` is the logical clock.\n\n");
    let state = world.state();
    for service in crate::SERVICES {
        let pretty = serde_json::to_string_pretty(&state[service]).unwrap_or_default();
        let _ = write!(s, "### {service}\n\n```json\n{pretty}\n```\n\n");
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_star_required_arguments() {
        let t = crate::tool_spec("mail.forward").unwrap_or_else(|| panic!("no mail.forward"));
        assert_eq!(
            signature(t),
            "mail.forward(id*: string, note: string, to*: array) [write, H2]"
        );
    }

    #[test]
    fn every_tool_has_a_sample_that_succeeds() {
        let (results, world) = sample();
        for (tool, _, r) in &results {
            assert!(r.is_ok(), "{tool}: {r:?}");
        }
        for t in tool_specs() {
            assert!(
                results.iter().any(|(n, _, _)| *n == t.name),
                "no sample call for {}",
                t.name
            );
        }
        // Every top-level list of every service has a record to show.
        let state = world.state();
        let mut empty = Vec::new();
        for service in crate::SERVICES {
            if let Some(o) = state[service].as_object() {
                for (k, v) in o {
                    if v.as_array().is_some_and(Vec::is_empty) {
                        empty.push(format!("{service}.{k}"));
                    }
                }
            }
        }
        assert!(empty.is_empty(), "{empty:?}");
    }
}
