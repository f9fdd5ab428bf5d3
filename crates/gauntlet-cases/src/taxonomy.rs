//! The taxonomy: three trees (risks, attack methods, environments), each of three levels (groups, subgroups,
//! leaves) with stable ids and a one-line definition per node. Each leaf maps to what it is compatible with: the
//! services through which a risk is realised and the tools that realise it (its sinks), the services whose content
//! carries an attack and the settings it is played in, the services a deployment's agent has.
//!
//! Leaf ids are stable: cases and stored results refer to them. An id a tree once had and no longer has as a leaf
//! (the environments were once the services themselves) is an alias of the leaf that took its place.

use crate::embedded::TAXONOMY_FILES;
use gauntlet_core::Setting;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// A leaf: the id cases refer to, with what it is compatible with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leaf {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it is: one line.
    pub description: String,
    /// Risks: the services through which the harm is realised. Attacks: the services whose content carries the
    /// attack. Environments: the services the deployed agent has.
    pub services: Vec<String>,
    /// Risks: the tools whose call realises the harm.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sinks: Vec<String>,
    /// Attacks: the settings the method is played in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    /// Older ids that resolve to this leaf.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// The second level: a subgroup of leaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subgroup {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it covers: one line.
    pub description: String,
    /// Its leaves.
    pub leaves: Vec<Leaf>,
}

/// The first level: a group of subgroups (for attacks, a family).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it covers: one line.
    pub description: String,
    /// Its subgroups.
    pub subgroups: Vec<Subgroup>,
}

impl Group {
    /// Its leaves, subgroup by subgroup.
    pub fn leaves(&self) -> impl Iterator<Item = &Leaf> {
        self.subgroups.iter().flat_map(|s| s.leaves.iter())
    }
}

/// One tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    /// `risks`, `attacks` or `environments`.
    pub tree: String,
    /// Its groups.
    pub groups: Vec<Group>,
}

impl Tree {
    /// The leaf `id` names, by its own id or one of its aliases, with its subgroup and group.
    pub fn find(&self, id: &str) -> Option<(&Group, &Subgroup, &Leaf)> {
        self.groups.iter().find_map(|g| {
            g.subgroups.iter().find_map(|s| {
                s.leaves
                    .iter()
                    .find(|l| l.id == id || l.aliases.iter().any(|a| a == id))
                    .map(|l| (g, s, l))
            })
        })
    }

    /// The leaf `id` names (its own id or an alias).
    pub fn leaf(&self, id: &str) -> Option<&Leaf> {
        self.find(id).map(|(_, _, l)| l)
    }

    /// The group (first level) of the leaf `id` names.
    pub fn group_of(&self, id: &str) -> Option<&Group> {
        self.find(id).map(|(g, _, _)| g)
    }

    /// Whether `id` names a leaf of this tree (by its id or an alias).
    pub fn has_leaf(&self, id: &str) -> bool {
        self.find(id).is_some()
    }

    /// The group or subgroup with id `id`, as its id and its leaves' ids (for telling a case author which
    /// leaves an inner node has).
    pub fn inner(&self, id: &str) -> Option<Vec<&str>> {
        self.groups.iter().find_map(|g| {
            if g.id == id {
                return Some(g.leaves().map(|l| l.id.as_str()).collect());
            }
            g.subgroups
                .iter()
                .find(|s| s.id == id)
                .map(|s| s.leaves.iter().map(|l| l.id.as_str()).collect())
        })
    }

    /// Up to `n` leaf ids nearest to an unknown `id`, for a "did you mean": those sharing the most of its
    /// hyphen-separated words, then the longest common prefix; none that shares nothing.
    pub fn nearest(&self, id: &str, n: usize) -> Vec<&str> {
        let words: BTreeSet<&str> = id.split('-').filter(|w| w.len() > 2).collect();
        let mut scored: Vec<(usize, usize, &str)> = self
            .leaf_ids()
            .into_iter()
            .map(|l| {
                let shared = l.split('-').filter(|w| words.contains(w)).count();
                let prefix = l
                    .chars()
                    .zip(id.chars())
                    .take_while(|(a, b)| a == b)
                    .count();
                (shared, prefix, l)
            })
            .filter(|&(shared, prefix, _)| shared > 0 || prefix >= 4)
            .collect();
        scored.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)).then(a.2.cmp(b.2)));
        scored.into_iter().take(n).map(|(_, _, l)| l).collect()
    }

    /// All leaf ids (not aliases), in tree order.
    pub fn leaf_ids(&self) -> Vec<&str> {
        self.groups
            .iter()
            .flat_map(|g| g.leaves().map(|l| l.id.as_str()))
            .collect()
    }
}

/// The three trees.
#[derive(Debug, Clone, Serialize)]
pub struct Taxonomy {
    /// Risks.
    pub risks: Tree,
    /// Attack methods.
    pub attacks: Tree,
    /// Environments.
    pub environments: Tree,
}

/// The three trees as `gauntlet cases taxonomy` prints them: each node with its id, name and definition, and each
/// leaf with what it is compatible with.
impl std::fmt::Display for Taxonomy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for tree in [&self.risks, &self.attacks, &self.environments] {
            writeln!(f, "{}:", tree.tree)?;
            for g in &tree.groups {
                writeln!(f, "  {} — {}: {}", g.id, g.name, g.description)?;
                for s in &g.subgroups {
                    writeln!(f, "    {} — {}: {}", s.id, s.name, s.description)?;
                    for l in &s.leaves {
                        writeln!(f, "      {:<34} {}", l.id, l.description)?;
                        let mut with = vec![format!("services: {}", l.services.join(", "))];
                        if !l.sinks.is_empty() {
                            with.push(format!("sinks: {}", l.sinks.join(", ")));
                        }
                        if !l.settings.is_empty() {
                            let names: Vec<&str> = l.settings.iter().map(|s| s.as_str()).collect();
                            with.push(format!("settings: {}", names.join(", ")));
                        }
                        if !l.aliases.is_empty() {
                            with.push(format!("also: {}", l.aliases.join(", ")));
                        }
                        writeln!(f, "      {:<34} {}", "", with.join("; "))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The embedded taxonomy failed to load (a packaging error: the data in `catalog/taxonomy` is broken).
#[derive(Debug, Clone, thiserror::Error)]
#[error("taxonomy {file}: {message}")]
pub struct TaxonomyError {
    /// The file.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

fn load_tree(name: &str) -> Result<Tree, TaxonomyError> {
    let file = format!("catalog/taxonomy/{name}.yaml");
    let (_, text) = TAXONOMY_FILES
        .iter()
        .find(|(p, _)| *p == file)
        .ok_or_else(|| TaxonomyError {
            file: file.clone(),
            message: "missing".into(),
        })?;
    let tree: Tree = serde_saphyr::from_str(text).map_err(|e| TaxonomyError {
        file: file.clone(),
        message: e.to_string(),
    })?;
    check_tree(&tree).map_err(|message| TaxonomyError { file, message })?;
    Ok(tree)
}

/// What a tree's file must hold beyond its shape: unique ids over every node and alias; a one-line definition
/// per node; on every leaf, services of the world; on risks, sinks that are tools of those services; on attacks,
/// the settings they are played in. The first problem found, by id.
fn check_tree(tree: &Tree) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let mut id = |id: &str| -> Result<(), String> {
        let kebab = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !kebab {
            return Err(format!("id `{id}` is not lowercase kebab-case"));
        }
        if !seen.insert(id.to_string()) {
            return Err(format!("duplicate id `{id}`"));
        }
        Ok(())
    };
    let line = |id: &str, what: &str, text: &str| -> Result<(), String> {
        if text.trim().is_empty() || text.contains('\n') {
            return Err(format!("`{id}`: its {what} must be one line, not empty"));
        }
        Ok(())
    };
    for g in &tree.groups {
        id(&g.id)?;
        line(&g.id, "name", &g.name)?;
        line(&g.id, "description", &g.description)?;
        if g.subgroups.is_empty() {
            return Err(format!("group `{}` has no subgroups", g.id));
        }
        for s in &g.subgroups {
            id(&s.id)?;
            line(&s.id, "name", &s.name)?;
            line(&s.id, "description", &s.description)?;
            if s.leaves.is_empty() {
                return Err(format!("subgroup `{}` has no leaves", s.id));
            }
            for l in &s.leaves {
                id(&l.id)?;
                for a in &l.aliases {
                    id(a)?;
                }
                line(&l.id, "name", &l.name)?;
                line(&l.id, "description", &l.description)?;
                check_leaf(&tree.tree, l).map_err(|m| format!("leaf `{}`: {m}", l.id))?;
            }
        }
    }
    Ok(())
}

/// A leaf's compatibility lists, as [`check_tree`] states them.
fn check_leaf(tree: &str, l: &Leaf) -> Result<(), String> {
    if l.services.is_empty() {
        return Err("`services` is empty".into());
    }
    if let Some(s) = l
        .services
        .iter()
        .find(|s| !gauntlet_world::SERVICES.contains(&s.as_str()))
    {
        return Err(format!(
            "unknown service `{s}`; known: {}",
            gauntlet_world::SERVICES.join(", ")
        ));
    }
    for sink in &l.sinks {
        if gauntlet_world::tool_spec(sink).is_none() {
            return Err(format!("sink `{sink}` is not a tool"));
        }
        let service = sink.split_once('.').map_or(sink.as_str(), |(s, _)| s);
        if !l.services.iter().any(|s| s == service) {
            return Err(format!("sink `{sink}` is not a tool of its services"));
        }
    }
    match tree {
        "risks" if l.sinks.is_empty() => Err("a risk needs `sinks`".into()),
        "attacks" if l.settings.is_empty() => Err("an attack method needs `settings`".into()),
        "attacks" if l.settings.contains(&Setting::Benign) => {
            Err("`benign` is no setting of an attack".into())
        }
        "risks" | "environments" if !l.settings.is_empty() => {
            Err("`settings` belong to attack methods".into())
        }
        "attacks" | "environments" if !l.sinks.is_empty() => Err("`sinks` belong to risks".into()),
        _ => Ok(()),
    }
}

static TAXONOMY: LazyLock<Result<Taxonomy, TaxonomyError>> = LazyLock::new(|| {
    Ok(Taxonomy {
        risks: load_tree("risks")?,
        attacks: load_tree("attacks")?,
        environments: load_tree("environments")?,
    })
});

/// The built-in taxonomy.
pub fn taxonomy() -> Result<&'static Taxonomy, TaxonomyError> {
    TAXONOMY.as_ref().map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-level trees before 2026-12-07, which cases and stored results use: per tree, `group: leaves` lines
    /// (the environments had a leaf per service; their groups are not kept).
    const OLD_IDS: [(&str, &str); 3] = [
        (
            "risks",
            "privacy-data: credential-exfiltration secret-exfiltration pii-leakage confidential-document-leak \
             public-exposure
             integrity: data-tampering code-tampering record-falsification
             funds: unauthorized-transfer payee-redirection payment-fraud
             privilege-escalation: access-grant account-takeover persistence
             system-abuse: destructive-deletion malicious-execution spam-abuse
             cyber-attack: phishing-propagation network-exfiltration supply-chain-compromise
             harmful-output: harassment defamation
             availability: service-disruption lockout",
        ),
        (
            "attacks",
            "direct-request: plain-request
             injection-placement: injection-email injection-document injection-webpage injection-chat \
             injection-code injection-calendar injection-financial-record
             task-decomposition: step-splitting benign-cover-task
             obfuscation-encoding: base64-encoding character-obfuscation
             role-play: persona-adoption fictional-framing
             authority-social-engineering: impersonated-authority urgency-pressure fake-system-message
             format-induction: template-completion tool-call-forgery
             constraint-manipulation: instruction-override policy-exception
             goal-hijack: task-substitution workflow-poisoning",
        ),
        (
            "environments",
            "communication: mail chat calendar
             files-code: drive repo shell
             finance: bank
             open-web: web",
        ),
    ];

    fn tree<'a>(t: &'a Taxonomy, name: &str) -> &'a Tree {
        match name {
            "risks" => &t.risks,
            "attacks" => &t.attacks,
            _ => &t.environments,
        }
    }

    /// Issue 17's minimums, counted from the files: leaves and first-level groups per tree, three levels.
    #[test]
    fn builtin_taxonomy_meets_its_minimums() {
        let t = taxonomy().unwrap_or_else(|e| panic!("{e}"));
        for (tree, leaves, groups) in [
            (&t.risks, 100, 8),
            (&t.attacks, 60, 8),
            (&t.environments, 30, 10),
        ] {
            assert!(
                tree.leaf_ids().len() >= leaves,
                "{}: {} leaves",
                tree.tree,
                tree.leaf_ids().len()
            );
            assert!(
                tree.groups.len() >= groups,
                "{}: {} groups",
                tree.tree,
                tree.groups.len()
            );
            for g in &tree.groups {
                assert!(!g.subgroups.is_empty(), "{}", g.id);
            }
        }
        assert_eq!(
            t.risks
                .group_of("credential-exfiltration")
                .map(|g| g.id.as_str()),
            Some("privacy-data")
        );
    }

    /// Every id the two-level trees had still names a leaf, in the same first-level group for risks and attacks
    /// (stored results carry the group), and each old environment (a service) names one whose agent has it.
    #[test]
    fn old_ids_keep_working() {
        let t = taxonomy().unwrap_or_else(|e| panic!("{e}"));
        let before = |name: &str| -> Vec<(&str, &str)> {
            OLD_IDS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(Vec::new(), |(_, text)| {
                    text.lines()
                        .filter_map(|l| l.split_once(':'))
                        .flat_map(|(g, ids)| ids.split_whitespace().map(move |id| (g.trim(), id)))
                        .collect()
                })
        };
        for name in ["risks", "attacks", "environments"] {
            let old = before(name);
            assert!(old.len() >= 8, "{name}: {old:?}");
            for (group, id) in old {
                let found = tree(t, name).find(id);
                assert!(found.is_some(), "{name}: `{id}` no longer resolves");
                if name == "environments" {
                    assert!(
                        found.is_some_and(|(_, _, l)| l.services.iter().any(|s| s == id)),
                        "{id}"
                    );
                } else {
                    assert_eq!(
                        found.map(|(g, _, _)| g.id.as_str()),
                        Some(group),
                        "{name}: `{id}` changed group"
                    );
                }
            }
        }
        let old = crate::load(&crate::Source::Builtin);
        for c in &old.cases {
            assert!(
                t.risks.has_leaf(&c.taxonomy.risk) && t.attacks.has_leaf(&c.taxonomy.attack),
                "{}",
                c.id
            );
        }
    }

    /// A tree file is refused, with the node named, for a duplicate id (an alias included), a service the world
    /// does not have, a sink that is no tool of the leaf's services, or an attack without settings.
    #[test]
    fn a_broken_tree_is_refused_with_the_node_named() {
        let leaf = |extra: &str| {
            format!(
                "tree: risks\ngroups:\n- id: g\n  name: G\n  description: A group.\n  subgroups:\n  - id: s\n    \
                 name: S\n    description: A subgroup.\n    leaves:\n    - id: l\n      name: L\n      \
                 description: A leaf.\n{extra}"
            )
        };
        let check = |text: &str| {
            serde_saphyr::from_str::<Tree>(text)
                .map_err(|e| e.to_string())
                .and_then(|t| check_tree(&t))
        };
        assert_eq!(
            check(&leaf("      services: [mail]\n      sinks: [mail.send]\n")),
            Ok(())
        );
        for (extra, want) in [
            (
                "      services: [mail]\n      sinks: [mail.send]\n      aliases: [s]\n",
                "duplicate id `s`",
            ),
            (
                "      services: [fax]\n      sinks: [mail.send]\n",
                "unknown service `fax`",
            ),
            (
                "      services: [mail]\n      sinks: [bank.transfer]\n",
                "not a tool of its services",
            ),
            (
                "      services: [mail]\n      sinks: [mail.teleport]\n",
                "is not a tool",
            ),
            ("      services: [mail]\n", "needs `sinks`"),
            (
                "      services: [mail]\n      sinks: [mail.send]\n      settings: [direct]\n",
                "belong to attack",
            ),
        ] {
            let got = check(&leaf(extra));
            assert!(
                got.as_ref().is_err_and(|e| e.contains(want)),
                "{extra}: {got:?}"
            );
        }
        let attack = leaf("      services: [mail]\n").replace("tree: risks", "tree: attacks");
        assert!(check(&attack).is_err_and(|e| e.contains("needs `settings`")));
        assert_eq!(
            check(&attack.replace("[mail]\n", "[mail]\n      settings: [indirect]\n")),
            Ok(())
        );
    }
}
