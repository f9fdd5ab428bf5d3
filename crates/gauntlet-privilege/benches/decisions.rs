//! `cargo bench -p gauntlet-privilege`: generating and labelling the built-in probe suite, and decisions per
//! second in process and over the external stdio protocol (the Python example defense).

use gauntlet_defense::{Defense, ExactArgs, External, PolicyFile, ToolAllowlist};
use std::time::Instant;

fn main() {
    let loaded = gauntlet_cases::load(&gauntlet_cases::Source::Builtin);
    let t = Instant::now();
    let suite = gauntlet_privilege::generate(&loaded.cases);
    let generation = t.elapsed().as_secs_f64();
    let probes = suite.probes().count();
    println!(
        "generate + label: {probes} probes of {} tasks in {:.3} s",
        suite.tasks.len(),
        generation
    );
    let t = Instant::now();
    let _ = gauntlet_privilege::score(&suite, &ExactArgs);
    println!(
        "end to end (generate, label, score one defense): {:.3} s",
        generation + t.elapsed().as_secs_f64()
    );

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let policy = PolicyFile::load(&root.join("examples/defenses/policy.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let defenses: Vec<(&str, Box<dyn Defense>, usize)> = vec![
        ("exact-args (in process)", Box::new(ExactArgs), 400),
        ("tool-allowlist (in process)", Box::new(ToolAllowlist), 400),
        ("policy file (in process, CEL)", Box::new(policy), 10),
    ];
    for (name, d, reps) in defenses {
        let t = Instant::now();
        let mut n = 0u64;
        for _ in 0..reps {
            n += gauntlet_privilege::score(&suite, d.as_ref())
                .map(|s| s.decisions)
                .unwrap_or(0);
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name}: {n} decisions in {secs:.3} s = {:.0} decisions/s",
            n as f64 / secs
        );
    }
    let cmd = format!(
        "python3 {}",
        root.join("examples/defenses/allowlist.py").display()
    );
    match External::start(&cmd) {
        Ok(ext) => {
            let t = Instant::now();
            let mut n = 0u64;
            for _ in 0..4 {
                n += gauntlet_privilege::score(&suite, &ext)
                    .map(|s| s.decisions)
                    .unwrap_or(0);
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "external stdio (python example): {n} decisions in {secs:.3} s = {:.0} decisions/s",
                n as f64 / secs
            );
        }
        Err(e) => println!("external stdio: not measured ({e})"),
    }
}
