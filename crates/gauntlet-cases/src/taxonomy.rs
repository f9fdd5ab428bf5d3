//! The taxonomy: three trees (risks, attack methods, environments) of groups and leaves with stable ids.

use crate::embedded::TAXONOMY_FILES;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A leaf: the id cases refer to.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leaf {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it covers.
    pub description: String,
}

/// A group of leaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it covers.
    pub description: String,
    /// Its leaves.
    pub leaves: Vec<Leaf>,
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
    /// The group containing leaf `id`.
    pub fn group_of(&self, id: &str) -> Option<&Group> {
        self.groups
            .iter()
            .find(|g| g.leaves.iter().any(|l| l.id == id))
    }

    /// Whether `id` is a leaf of this tree.
    pub fn has_leaf(&self, id: &str) -> bool {
        self.group_of(id).is_some()
    }

    /// All leaf ids.
    pub fn leaf_ids(&self) -> Vec<&str> {
        self.groups
            .iter()
            .flat_map(|g| g.leaves.iter().map(|l| l.id.as_str()))
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

/// The three trees as `gauntlet cases taxonomy` prints them: each group with its name, each leaf with its definition.
impl std::fmt::Display for Taxonomy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for tree in [&self.risks, &self.attacks, &self.environments] {
            writeln!(f, "{}:", tree.tree)?;
            for g in &tree.groups {
                writeln!(f, "  {} — {}", g.id, g.name)?;
                for l in &g.leaves {
                    writeln!(f, "    {:<28} {}", l.id, l.description)?;
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
    let mut ids: Vec<&str> = tree.leaf_ids();
    ids.extend(tree.groups.iter().map(|g| g.id.as_str()));
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(TaxonomyError {
            file,
            message: format!("duplicate id `{}`", w[0]),
        });
    }
    Ok(tree)
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

    #[test]
    fn builtin_taxonomy_meets_its_minimums() {
        let t = taxonomy().unwrap_or_else(|e| panic!("{e}"));
        assert!(t.risks.groups.len() >= 8);
        assert!(t.attacks.groups.len() >= 8);
        let envs = t.environments.leaf_ids();
        for s in [
            "mail", "calendar", "drive", "repo", "bank", "chat", "web", "shell",
        ] {
            assert!(envs.contains(&s), "{s}");
        }
        assert_eq!(
            t.risks
                .group_of("credential-exfiltration")
                .map(|g| g.id.as_str()),
            Some("privacy-data")
        );
    }
}
