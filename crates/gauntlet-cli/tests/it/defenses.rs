//! `gauntlet run --defense`: the realized view of a defense in the gateway.

use crate::{gauntlet, stderr};
use serde_json::Value;

fn run(defense: &str) -> Value {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("run.json");
    let o = gauntlet(&[
        "run",
        "-q",
        "--agent",
        "reference",
        "--agent",
        "compliant",
        "--defense",
        defense,
        "--json",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&std::fs::read(&out).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn rate(v: &Value, target: &str, setting: &str, key: &str) -> f64 {
    v["summary"]["by_target_setting"]
        .as_array()
        .and_then(|r| {
            r.iter()
                .find(|r| r["target"] == target && r["setting"] == setting)
        })
        .and_then(|r| r[key]["value"].as_f64())
        .unwrap_or_else(|| panic!("no {key} for {target}/{setting}"))
}

#[test]
fn baselines_bound_the_realized_view() {
    let v = run("exact-args");
    assert_eq!(v["defense"], "exact-args");
    assert_eq!(rate(&v, "reference", "benign", "utility"), 1.0);
    for s in ["direct", "indirect", "multi"] {
        assert_eq!(
            rate(&v, "compliant", s, "asr"),
            0.0,
            "exact-args lets no attack through ({s})"
        );
    }
    let v = run("deny-all");
    assert_eq!(rate(&v, "reference", "benign", "utility"), 0.0);
    assert_eq!(rate(&v, "compliant", "direct", "asr"), 0.0);
    let v = run("tool-allowlist");
    assert_eq!(rate(&v, "reference", "benign", "utility"), 1.0);
    let leak = rate(&v, "compliant", "direct", "asr");
    assert!(
        leak > 0.0 && leak < 1.0,
        "attacks with the task's own tools get through: {leak}"
    );
}

#[test]
fn policy_and_external_defenses_run_in_the_gateway() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("examples/defenses/allowlist.py");
    let v = run(&format!("external:python3 {}", script.display()));
    assert_eq!(v["defense"], "external:python-allowlist");
    assert_eq!(rate(&v, "reference", "benign", "utility"), 1.0);
    assert!(rate(&v, "compliant", "direct", "asr") < 0.5);
    let policy = root.join("examples/defenses/policy.yaml");
    let v = run(&format!("policy:{}", policy.display()));
    assert_eq!(rate(&v, "reference", "benign", "utility"), 1.0);
    assert!(
        rate(&v, "compliant", "indirect", "asr")
            < rate(&run("allow-all"), "compliant", "indirect", "asr")
    );
}

#[test]
fn a_failing_defense_errors_the_episode_and_bad_specs_are_named() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("run.json");
    // Answers the handshake and the first prepare, then dies.
    let script = dir.path().join("dies.sh");
    std::fs::write(
        &script,
        "read l; echo '{\"name\": \"dies\"}'; read l; echo '{\"policy\": 1}'; exit 0\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = gauntlet(&[
        "run",
        "-q",
        "--agent",
        "reference",
        "--settings",
        "benign",
        "--defense",
        &format!("external:sh {}", script.display()),
        "--json",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let eps = v["episodes"].as_array().cloned().unwrap_or_default();
    assert!(
        eps.iter()
            .all(|e| e["status"] == "errored" && e["verdict"]["outcome"] == "undetermined"),
        "{}",
        eps[0]
    );
    assert!(
        eps[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("defense")),
        "{}",
        eps[0]
    );
    let o = gauntlet(&["run", "--defense", "firewall"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--defense: defense firewall: unknown defense"),
        "{}",
        stderr(&o)
    );
    let o = gauntlet(&["run", "--defense", "policy:/nonexistent.yaml"]);
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
}
