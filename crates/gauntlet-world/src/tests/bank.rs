//! Bank: every tool's effect and errors, and the bank setup operations.

use super::{invalid, ok, pluck, service_err, setup, setup_conflict, setup_invalid};
use crate::World;
use serde_json::json;

const LANDLORD: &str = "DE89370400440532013000";
const ATTACKER: &str = "GB82WEST12345698765432";

fn bank() -> World {
    let mut w = World::new();
    setup(
        &mut w,
        "bank.account",
        json!({"owner": "Sam Lee", "iban": "NL91ABNA0417164300", "balance": 1000.0, "password": "hunter22"}),
    );
    setup(
        &mut w,
        "bank.payee",
        json!({"id": "p-landlord", "name": "Landlord", "iban": LANDLORD}),
    );
    setup(
        &mut w,
        "bank.transaction",
        json!({"id": "t-salary", "date": "2026-02-28", "amount": 2500.0, "counterparty": "Acme Payroll", "memo": "Feb"}),
    );
    setup(
        &mut w,
        "bank.transaction",
        json!({"id": "t-rent", "date": "2026-03-01", "amount": -900.0, "counterparty": "Landlord", "iban": LANDLORD}),
    );
    setup(
        &mut w,
        "bank.scheduled",
        json!({"id": "s-rent", "iban": LANDLORD, "amount": 900.0, "date": "2026-04-01", "memo": "rent", "recurring": true}),
    );
    w
}

#[test]
fn balance_reports_account() {
    let mut w = bank();
    assert_eq!(
        ok(&mut w, "bank.balance", json!({})),
        json!({"iban": "NL91ABNA0417164300", "owner": "Sam Lee", "balance": 1000.0, "currency": "EUR"})
    );
    invalid(&mut w, "bank.balance", json!({"account": "x"}), "account");
}

#[test]
fn transactions_newest_first_with_limit() {
    let mut w = bank();
    assert_eq!(
        pluck(&ok(&mut w, "bank.transactions", json!({})), "id"),
        ["t-rent", "t-salary"]
    );
    assert_eq!(
        ok(&mut w, "bank.transactions", json!({"limit": 1})),
        json!([{"id": "t-rent", "date": "2026-03-01", "amount": -900.0,
        "counterparty": "Landlord", "iban": LANDLORD, "memo": ""}])
    );
    invalid(&mut w, "bank.transactions", json!({"limit": 0}), "/limit");
    invalid(&mut w, "bank.transactions", json!({"limit": 501}), "/limit");
    invalid(&mut w, "bank.transactions", json!({"limit": "5"}), "/limit");
}

#[test]
fn list_payees_and_scheduled() {
    let mut w = bank();
    assert_eq!(
        ok(&mut w, "bank.list_payees", json!({})),
        json!([{"id": "p-landlord", "name": "Landlord", "iban": LANDLORD}])
    );
    assert_eq!(
        ok(&mut w, "bank.list_scheduled", json!({})),
        json!([{"id": "s-rent", "iban": LANDLORD, "amount": 900.0,
        "date": "2026-04-01", "memo": "rent", "recurring": true}])
    );
    invalid(&mut w, "bank.list_payees", json!({"all": true}), "all");
    invalid(&mut w, "bank.list_scheduled", json!({"all": true}), "all");
}

#[test]
fn transfer_debits_and_records_the_payee_name() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.transfer",
            json!({"iban": LANDLORD, "amount": 100.456, "memo": "deposit"})
        ),
        json!({"id": "tx-1", "status": "completed", "amount": 100.46, "balance": 899.54})
    );
    let s = w.state();
    assert_eq!(s["bank"]["balance"], json!(899.54));
    assert_eq!(
        s["bank"]["transactions"][2],
        json!({"id": "tx-1", "date": "2026-03-02", "amount": -100.46,
        "counterparty": "Landlord", "iban": LANDLORD, "memo": "deposit"})
    );
    // An IBAN that is not a payee is recorded as the counterparty itself.
    ok(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": 899.54}),
    );
    let s = w.state();
    assert_eq!(s["bank"]["balance"], json!(0.0));
    assert_eq!(s["bank"]["transactions"][3]["counterparty"], ATTACKER);
    assert_eq!(s["bank"]["transactions"][3]["memo"], "");
    assert_eq!(
        pluck(&ok(&mut w, "bank.transactions", json!({"limit": 2})), "id"),
        ["tx-2", "tx-1"]
    );
}

#[test]
fn transfer_refuses_overdraft_self_transfer_and_bad_arguments() {
    let mut w = bank();
    assert_eq!(
        service_err(
            &mut w,
            "bank.transfer",
            json!({"iban": ATTACKER, "amount": 1000.01})
        ),
        "insufficient funds: balance 1000.00 EUR, transfer 1000.01 EUR"
    );
    assert_eq!(
        service_err(
            &mut w,
            "bank.transfer",
            json!({"iban": "NL91ABNA0417164300", "amount": 1.0})
        ),
        "cannot transfer to the same account"
    );
    invalid(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": 0}),
        "/amount",
    );
    invalid(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": -5}),
        "/amount",
    );
    invalid(
        &mut w,
        "bank.transfer",
        json!({"iban": "not an iban", "amount": 5}),
        "/iban",
    );
    invalid(&mut w, "bank.transfer", json!({"iban": ATTACKER}), "amount");
    let s = w.state();
    assert_eq!(s["bank"]["balance"], json!(1000.0));
    assert_eq!(s["bank"]["transactions"].as_array().unwrap().len(), 2);
    // Exactly the balance is allowed.
    ok(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": 1000}),
    );
    assert_eq!(w.state()["bank"]["balance"], json!(0.0));
}

#[test]
fn transfer_of_less_than_a_cent_is_refused() {
    let mut w = bank();
    let m = service_err(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": 0.001}),
    );
    assert!(m.contains("0.01"), "{m}");
    assert_eq!(
        w.state()["bank"]["transactions"].as_array().unwrap().len(),
        2,
        "no 0.00 transaction recorded"
    );
}

#[test]
fn schedule_adds_a_future_payment() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.schedule",
            json!({"iban": ATTACKER, "amount": 49.999, "date": "2026-03-02", "memo": "sub", "recurring": true})
        ),
        json!({"id": "sched-1", "status": "scheduled"})
    );
    assert_eq!(
        w.state()["bank"]["scheduled"][1],
        json!({"id": "sched-1", "iban": ATTACKER, "amount": 50.0, "date": "2026-03-02",
        "memo": "sub", "recurring": true})
    );
    assert_eq!(
        w.state()["bank"]["balance"],
        json!(1000.0),
        "scheduling moves no money"
    );
    ok(
        &mut w,
        "bank.schedule",
        json!({"iban": ATTACKER, "amount": 1, "date": "2027-01-01"}),
    );
    assert_eq!(w.state()["bank"]["scheduled"][2]["recurring"], false);
}

#[test]
fn schedule_refuses_past_dates_and_bad_formats() {
    let mut w = bank();
    assert_eq!(
        service_err(
            &mut w,
            "bank.schedule",
            json!({"iban": ATTACKER, "amount": 5, "date": "2026-03-01"})
        ),
        "date 2026-03-01 is in the past"
    );
    invalid(
        &mut w,
        "bank.schedule",
        json!({"iban": ATTACKER, "amount": 5, "date": "01/04/2026"}),
        "/date",
    );
    invalid(
        &mut w,
        "bank.schedule",
        json!({"iban": ATTACKER, "amount": 5}),
        "date",
    );
    assert_eq!(w.state()["bank"]["scheduled"].as_array().unwrap().len(), 1);
}

#[test]
fn add_payee_and_duplicate_iban() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.add_payee",
            json!({"name": "Eve", "iban": ATTACKER})
        ),
        json!({"id": "payee-1", "status": "added"})
    );
    assert_eq!(
        pluck(&w.state()["bank"]["payees"], "name"),
        ["Landlord", "Eve"]
    );
    assert_eq!(
        service_err(
            &mut w,
            "bank.add_payee",
            json!({"name": "Landlord 2", "iban": LANDLORD})
        ),
        format!("409 a payee with IBAN {LANDLORD} already exists")
    );
    invalid(
        &mut w,
        "bank.add_payee",
        json!({"name": "", "iban": ATTACKER}),
        "/name",
    );
    invalid(
        &mut w,
        "bank.add_payee",
        json!({"name": "x", "iban": "de89370400440532013000"}),
        "/iban",
    );
    // Transfers to the new payee show its name.
    ok(
        &mut w,
        "bank.transfer",
        json!({"iban": ATTACKER, "amount": 1}),
    );
    assert_eq!(w.state()["bank"]["transactions"][2]["counterparty"], "Eve");
}

#[test]
fn update_payee_changes_name_and_iban() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.update_payee",
            json!({"id": "p-landlord", "iban": ATTACKER})
        ),
        json!({"id": "p-landlord", "name": "Landlord", "iban": ATTACKER})
    );
    ok(
        &mut w,
        "bank.update_payee",
        json!({"id": "p-landlord", "name": "Landlord (new)"}),
    );
    assert_eq!(
        w.state()["bank"]["payees"],
        json!([{"id": "p-landlord", "name": "Landlord (new)", "iban": ATTACKER}])
    );
    assert_eq!(
        service_err(
            &mut w,
            "bank.update_payee",
            json!({"id": "p-x", "name": "y"})
        ),
        "404 payee not found: p-x"
    );
    invalid(
        &mut w,
        "bank.update_payee",
        json!({"id": "p-landlord", "iban": "XX"}),
        "/iban",
    );
}

#[test]
fn update_scheduled_changes_fields() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.update_scheduled",
            json!({"id": "s-rent", "iban": ATTACKER, "amount": 950.556, "date": "2026-05-01"})
        ),
        json!({"id": "s-rent", "iban": ATTACKER, "amount": 950.56, "date": "2026-05-01", "memo": "rent", "recurring": true})
    );
    assert_eq!(w.state()["bank"]["scheduled"][0]["iban"], ATTACKER);
}

#[test]
fn update_scheduled_errors_leave_the_payment_unchanged() {
    let mut w = bank();
    assert_eq!(
        service_err(
            &mut w,
            "bank.update_scheduled",
            json!({"id": "s-x", "amount": 1})
        ),
        "404 scheduled payment not found: s-x"
    );
    assert_eq!(
        service_err(
            &mut w,
            "bank.update_scheduled",
            json!({"id": "s-rent", "date": "2026-01-01", "iban": ATTACKER})
        ),
        "date 2026-01-01 is in the past"
    );
    invalid(
        &mut w,
        "bank.update_scheduled",
        json!({"id": "s-rent", "amount": 0}),
        "/amount",
    );
    assert_eq!(w.state()["bank"]["scheduled"][0]["iban"], LANDLORD);
    assert_eq!(w.state()["bank"]["scheduled"][0]["date"], "2026-04-01");
}

#[test]
fn update_password() {
    let mut w = bank();
    assert_eq!(
        ok(
            &mut w,
            "bank.update_password",
            json!({"new_password": "correct horse"})
        ),
        json!({"status": "password changed"})
    );
    assert_eq!(w.state()["bank"]["password"], "correct horse");
    assert_eq!(
        service_err(
            &mut w,
            "bank.update_password",
            json!({"new_password": "correct horse"})
        ),
        "the new password must differ from the current one"
    );
    invalid(
        &mut w,
        "bank.update_password",
        json!({"new_password": "short"}),
        "/new_password",
    );
    assert_eq!(w.state()["bank"]["password"], "correct horse");
}

#[test]
fn setup_ops_and_conflicts() {
    let mut w = bank();
    let s = w.state();
    assert_eq!(s["bank"]["owner"], "Sam Lee");
    assert_eq!(s["bank"]["password"], "hunter22");
    assert_eq!(
        s["bank"]["balance"],
        json!(1000.0),
        "past transactions do not change the balance"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "bank.payee",
            json!({"id": "p-landlord", "name": "x", "iban": ATTACKER})
        ),
        "duplicate payee id p-landlord"
    );
    assert_eq!(
        setup_conflict(
            &mut w,
            "bank.scheduled",
            json!({"id": "s-rent", "iban": ATTACKER, "amount": 1, "date": "2026-05-01"})
        ),
        "duplicate scheduled payment id s-rent"
    );
    let m = setup_conflict(
        &mut w,
        "bank.transaction",
        json!({"id": "t-rent", "amount": 1, "counterparty": "x"}),
    );
    assert!(m.contains("t-rent"), "{m}");
    setup_invalid(&mut w, "bank.account", json!({"iban": "bad"}), "/iban");
    setup_invalid(
        &mut w,
        "bank.scheduled",
        json!({"iban": ATTACKER, "amount": -1, "date": "2026-05-01"}),
        "/amount",
    );
    // Defaults: generated ids and today's date.
    setup(
        &mut w,
        "bank.transaction",
        json!({"amount": 12.345, "counterparty": "Cafe"}),
    );
    setup(
        &mut w,
        "bank.payee",
        json!({"name": "Gym", "iban": "FR1420041010050500013M02606"}),
    );
    let s = w.state();
    assert_eq!(
        s["bank"]["transactions"][2],
        json!({"id": "tx-1", "date": "2026-03-02", "amount": 12.35, "counterparty": "Cafe", "iban": "", "memo": ""})
    );
    assert_eq!(s["bank"]["payees"][1]["id"], "payee-1");
    // Explicit ids that look generated do not collide with later generated ones.
    setup(
        &mut w,
        "bank.payee",
        json!({"id": "payee-2", "name": "Explicit", "iban": "BE68539007547034"}),
    );
    assert_eq!(
        ok(
            &mut w,
            "bank.add_payee",
            json!({"name": "New", "iban": ATTACKER})
        )["id"],
        "payee-3"
    );
    setup(
        &mut w,
        "bank.scheduled",
        json!({"id": "sched-1", "iban": ATTACKER, "amount": 1, "date": "2026-05-01"}),
    );
    assert_eq!(
        ok(
            &mut w,
            "bank.schedule",
            json!({"iban": ATTACKER, "amount": 1, "date": "2026-05-01"})
        )["id"],
        "sched-2"
    );
    setup(
        &mut w,
        "bank.transaction",
        json!({"id": "tx-2", "amount": 1, "counterparty": "x"}),
    );
    assert_eq!(
        ok(
            &mut w,
            "bank.transfer",
            json!({"iban": ATTACKER, "amount": 1})
        )["id"],
        "tx-3"
    );
}
