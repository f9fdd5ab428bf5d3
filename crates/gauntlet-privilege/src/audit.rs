//! Audit samples: a seeded, stratified draw of probes with everything a reviewer needs to check the oracle —
//! the task, the point, the call, what executing it showed, the label, the tier and the rule.

use crate::probe::{Probe, ProbeSuite};
use gauntlet_core::rng::SplitMix64;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The stratum of a probe: its source of probes (built-in or AgentDojo), family, label, label source and tier.
fn stratum(p: &Probe) -> (String, String, String, String, String) {
    let origin = if p.task.starts_with("agentdojo.") {
        "agentdojo"
    } else {
        "builtin"
    };
    (
        origin.to_string(),
        p.family.to_string(),
        p.label.as_str().to_string(),
        format!("{:?}", p.source).to_lowercase(),
        p.tier.to_string(),
    )
}

/// Draws `n` probes, spread over the strata (family × label × source × tier, per origin) as evenly as they
/// allow: strata are visited in turn, each giving its next seeded pick, until `n` are drawn or all are used.
/// The same suite and seed give the same sample.
pub fn sample(suite: &ProbeSuite, n: usize, seed: u64) -> Vec<&Probe> {
    let mut strata: BTreeMap<_, Vec<&Probe>> = BTreeMap::new();
    for p in suite.probes() {
        strata.entry(stratum(p)).or_default().push(p);
    }
    let mut rng = SplitMix64::derive(seed, "privilege-audit");
    // A seeded shuffle of each stratum.
    for list in strata.values_mut() {
        for i in (1..list.len()).rev() {
            let j = rng.below(i + 1);
            list.swap(i, j);
        }
    }
    let mut out = vec![];
    let mut round = 0;
    while out.len() < n {
        let mut took = false;
        for list in strata.values() {
            if out.len() == n {
                break;
            }
            if let Some(p) = list.get(round) {
                out.push(*p);
                took = true;
            }
        }
        if !took {
            break;
        }
        round += 1;
    }
    out
}

/// The sample as text, one block per probe, with the plan prefix the probe was offered after.
pub fn render(suite: &ProbeSuite, sample: &[&Probe]) -> String {
    let mut o = String::new();
    for (i, p) in sample.iter().enumerate() {
        let task = suite.tasks.iter().find(|t| t.task == p.task);
        let _ = writeln!(
            o,
            "#{} {}  [{} / {} / {} / {} / {}]",
            i + 1,
            p.id,
            p.family,
            p.fault,
            p.label.as_str(),
            format!("{:?}", p.source).to_lowercase(),
            p.tier
        );
        if let Some(t) = task {
            let _ = writeln!(o, "  task:     {}", one_line(&t.prompt, 160));
            let done: Vec<String> = t
                .plan
                .iter()
                .take(p.point)
                .map(|c| c.tool.clone())
                .collect();
            let _ = writeln!(
                o,
                "  after:    {} plan call(s){}",
                p.point,
                if done.is_empty() {
                    String::new()
                } else {
                    format!(": {}", done.join(", "))
                }
            );
        }
        let _ = writeln!(
            o,
            "  call:     {} {}",
            p.tool,
            one_line(&p.args.to_string(), 300)
        );
        let _ = writeln!(o, "  observed: {}", one_line(&p.evidence, 300));
        let _ = writeln!(
            o,
            "  label:    {} {} (rule {})",
            p.label.as_str(),
            p.tier,
            p.rule
        );
        o.push('\n');
    }
    o
}

fn one_line(s: &str, n: usize) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Axis, Family, Fault, Label, Source, TaskProbes};
    use gauntlet_core::HarmTier;
    use serde_json::json;

    fn probe(i: usize, family: Family, label: Label) -> Probe {
        Probe {
            id: format!("t/0/{family}/{i}"),
            task: "t".into(),
            point: 0,
            family,
            axis: Axis::Tool,
            fault: Fault::OffPathTool,
            tool: "mail.send".into(),
            args: json!({"to": ["a@b.test"]}),
            label,
            source: Source::Confirmed,
            tier: HarmTier::H3,
            rule: "sends-outside".into(),
            evidence: "mail → a@b.test (external)".into(),
            attack: None,
            sink: None,
        }
    }

    #[test]
    fn samples_are_stratified_and_reproducible() {
        let mut probes: Vec<Probe> = (0..50)
            .map(|i| probe(i, Family::ToolIdentity, Label::Deny))
            .collect();
        probes.push(probe(50, Family::Parameter, Label::Harmless));
        let suite = ProbeSuite {
            tasks: vec![TaskProbes {
                task: "t".into(),
                prompt: "do it".into(),
                plan: vec![],
                history: vec![],
                probes,
                attacks: vec![],
                tools: None,
            }],
        };
        let a = sample(&suite, 5, 7);
        assert_eq!(a.len(), 5);
        // The rare stratum is always represented.
        assert!(a.iter().any(|p| p.family == Family::Parameter));
        let b = sample(&suite, 5, 7);
        assert_eq!(
            a.iter().map(|p| &p.id).collect::<Vec<_>>(),
            b.iter().map(|p| &p.id).collect::<Vec<_>>()
        );
        let text = render(&suite, &a);
        assert!(text.contains("rule sends-outside") && text.contains("observed: mail"));
        assert_eq!(sample(&suite, 500, 1).len(), 51);
    }
}
