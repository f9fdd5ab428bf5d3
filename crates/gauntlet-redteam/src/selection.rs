//! Which vulnerabilities and attack methods a red team runs: an explicit list, a framework's, custom ones from a
//! config file or a YAML file, or the whole catalogue, each checked against the catalogue.

use crate::{Catalogue, Vulnerability};
use std::collections::BTreeSet;

/// What the user asked for (flags, or the config file's `redteam:` section under them).
#[derive(Debug, Default, Clone, Copy)]
pub struct Request<'a> {
    /// A framework id: its vulnerabilities, and its attack methods unless `attacks` names some.
    pub framework: Option<&'a str>,
    /// `--vulns`: comma-separated `id` or `id/subtype` items, or the path of a YAML file of custom ones.
    pub vulns: Option<&'a str>,
    /// Attack method ids; empty means the framework's, or `none` and every transform.
    pub attacks: &'a [String],
    /// Custom vulnerabilities of the config file.
    pub custom: &'a [Vulnerability],
    /// The config file they came from, for error messages.
    pub custom_source: &'a str,
}

/// A request that cannot be met, with the flag or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// Custom vulnerabilities of the config file with problems.
    #[error("--config: {}", .0.join("\n"))]
    Custom(Vec<String>),
    /// No framework of that id.
    #[error("--framework: unknown framework `{id}`; known: {known}")]
    UnknownFramework {
        /// The id asked for.
        id: String,
        /// The catalogue's framework ids.
        known: String,
    },
    /// A `--vulns` file with problems.
    #[error("--vulns: {}", .0.join("\n"))]
    VulnsFile(Vec<String>),
    /// No vulnerability of that id.
    #[error(
        "--vulns: unknown vulnerability `{0}` (see catalog/vulnerabilities/, or give a YAML file of custom ones)"
    )]
    UnknownVulnerability(String),
    /// The vulnerability has no such sub-type.
    #[error("--vulns: `{id}` has no sub-type `{sub}`; its sub-types: {known}")]
    UnknownSubtype {
        /// The vulnerability.
        id: String,
        /// The sub-type asked for.
        sub: String,
        /// Its sub-types.
        known: String,
    },
    /// No attack method of that id.
    #[error("--attacks: unknown attack `{id}`; available: {available}")]
    UnknownAttack {
        /// The id asked for.
        id: String,
        /// Every attack method.
        available: String,
    },
}

/// The vulnerabilities (catalogue order for a framework, request order for a list, custom ones last) and attack
/// methods to run.
pub fn select(
    catalogue: &Catalogue,
    r: &Request<'_>,
) -> Result<(Vec<Vulnerability>, Vec<String>), SelectError> {
    check_custom(catalogue, r)?;
    let mut attacks: Vec<String> = r.attacks.to_vec();
    let mut vulns: Vec<Vulnerability> = Vec::new();
    if let Some(fid) = r.framework {
        let f = catalogue
            .frameworks
            .iter()
            .find(|f| f.id == fid)
            .ok_or_else(|| SelectError::UnknownFramework {
                id: fid.to_string(),
                known: catalogue
                    .frameworks
                    .iter()
                    .map(|f| f.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let ids: BTreeSet<&str> = f
            .categories
            .iter()
            .flat_map(|c| c.vulnerabilities.iter().map(String::as_str))
            .collect();
        vulns = catalogue
            .vulnerabilities
            .iter()
            .filter(|v| ids.contains(v.id.as_str()))
            .cloned()
            .collect();
        if attacks.is_empty() {
            let mut set: BTreeSet<String> = f
                .categories
                .iter()
                .flat_map(|c| c.attacks.iter().cloned())
                .filter(|x| crate::attacks::is_attack(x))
                .collect();
            set.insert("none".into());
            attacks = set.into_iter().collect();
        }
    }
    match r.vulns {
        None => {
            if r.framework.is_none() && r.custom.is_empty() {
                vulns = catalogue.vulnerabilities.clone();
            }
        }
        Some(v) if std::path::Path::new(v).is_file() => vulns.extend(
            crate::catalog::load_custom(std::path::Path::new(v)).map_err(SelectError::VulnsFile)?,
        ),
        Some(list) => {
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                add_listed(catalogue, &mut vulns, item)?;
            }
        }
    }
    vulns.extend(r.custom.iter().cloned());
    if attacks.is_empty() {
        attacks.push("none".into());
        attacks.extend(
            gauntlet_attacks::transforms::TRANSFORMS
                .iter()
                .map(|s| s.to_string()),
        );
    }
    if let Some(bad) = attacks.iter().find(|a| !crate::attacks::is_attack(a)) {
        return Err(SelectError::UnknownAttack {
            id: bad.clone(),
            available: crate::attacks::all().join(", "),
        });
    }
    Ok((vulns, attacks))
}

/// Custom vulnerabilities must pass the catalogue's checks and have ids of their own.
fn check_custom(catalogue: &Catalogue, r: &Request<'_>) -> Result<(), SelectError> {
    let source = r.custom_source;
    let mut errs: Vec<String> = r
        .custom
        .iter()
        .flat_map(|v| crate::catalog::check(v, source, None))
        .collect();
    for v in r.custom {
        if catalogue.vulnerabilities.iter().any(|c| c.id == v.id) {
            errs.push(format!(
                "{source}: redteam.custom_vulnerabilities: `{}` is a catalogue id; custom ones need their own",
                v.id
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(SelectError::Custom(errs))
    }
}

/// One `--vulns` item: `id` selects a whole vulnerability, `id/subtype` one of its sub-types (merged per
/// vulnerability).
fn add_listed(
    catalogue: &Catalogue,
    vulns: &mut Vec<Vulnerability>,
    item: &str,
) -> Result<(), SelectError> {
    let (id, sub) = match item.split_once('/') {
        Some((i, s)) => (i, Some(s)),
        None => (item, None),
    };
    let v = catalogue
        .vulnerabilities
        .iter()
        .find(|v| v.id == id)
        .ok_or_else(|| SelectError::UnknownVulnerability(id.to_string()))?;
    let Some(sub) = sub else {
        vulns.retain(|x| x.id != id);
        vulns.push(v.clone());
        return Ok(());
    };
    let st =
        v.subtypes
            .iter()
            .find(|s| s.id == sub)
            .ok_or_else(|| SelectError::UnknownSubtype {
                id: id.to_string(),
                sub: sub.to_string(),
                known: v
                    .subtypes
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
    match vulns.iter_mut().find(|x| x.id == id) {
        Some(x) => {
            if !x.subtypes.iter().any(|s| s.id == sub) {
                x.subtypes.push(st.clone());
            }
        }
        None => {
            let mut x = v.clone();
            x.subtypes = vec![st.clone()];
            vulns.push(x);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Catalogue {
        crate::catalog::builtin().expect("the built-in catalogue loads")
    }

    #[test]
    fn no_request_is_the_whole_catalogue_with_every_transform() {
        let c = catalogue();
        let (v, a) = select(&c, &Request::default()).expect("selects");
        assert_eq!(v.len(), c.vulnerabilities.len());
        assert_eq!(a[0], "none");
        assert_eq!(a.len(), 1 + gauntlet_attacks::transforms::TRANSFORMS.len());
    }

    #[test]
    fn subtypes_merge_per_vulnerability_and_whole_ids_replace_them() {
        let c = catalogue();
        let v0 = &c.vulnerabilities[0];
        let (s0, s1) = (&v0.subtypes[0].id, &v0.subtypes[v0.subtypes.len() - 1].id);
        let list = format!("{0}/{s0},{0}/{s1},{0}/{s0}", v0.id);
        let (v, _) = select(
            &c,
            &Request {
                vulns: Some(&list),
                ..Default::default()
            },
        )
        .expect("selects");
        assert_eq!(v.len(), 1);
        let expected = if s0 == s1 { 1 } else { 2 };
        assert_eq!(v[0].subtypes.len(), expected);
        let whole = format!("{0}/{s0},{0}", v0.id);
        let (v, _) = select(
            &c,
            &Request {
                vulns: Some(&whole),
                ..Default::default()
            },
        )
        .expect("selects");
        assert_eq!(v[0].subtypes.len(), v0.subtypes.len());
    }

    #[test]
    fn unknown_names_are_errors_that_name_the_flag() {
        let c = catalogue();
        let attacks = vec!["no-such-attack".to_string()];
        for (r, flag) in [
            (
                Request {
                    framework: Some("nope"),
                    ..Default::default()
                },
                "--framework: unknown framework `nope`",
            ),
            (
                Request {
                    vulns: Some("nope"),
                    ..Default::default()
                },
                "--vulns: unknown vulnerability `nope`",
            ),
            (
                Request {
                    attacks: &attacks,
                    ..Default::default()
                },
                "--attacks: unknown attack `no-such-attack`",
            ),
        ] {
            let e = select(&c, &r).expect_err("an error").to_string();
            assert!(e.starts_with(flag), "{e}");
        }
        let sub = format!("{}/nope", c.vulnerabilities[0].id);
        let e = select(
            &c,
            &Request {
                vulns: Some(&sub),
                ..Default::default()
            },
        )
        .expect_err("an error");
        assert!(matches!(e, SelectError::UnknownSubtype { .. }), "{e}");
    }

    #[test]
    fn a_framework_brings_its_attacks_unless_some_are_named() {
        let c = catalogue();
        let f = &c.frameworks[0];
        let (v, a) = select(
            &c,
            &Request {
                framework: Some(&f.id),
                ..Default::default()
            },
        )
        .expect("selects");
        assert!(!v.is_empty());
        assert!(a.contains(&"none".to_string()));
        let named = vec!["none".to_string()];
        let (_, a) = select(
            &c,
            &Request {
                framework: Some(&f.id),
                attacks: &named,
                ..Default::default()
            },
        )
        .expect("selects");
        assert_eq!(a, named);
    }

    #[test]
    fn a_custom_vulnerability_may_not_take_a_catalogue_id() {
        let c = catalogue();
        let custom = vec![c.vulnerabilities[0].clone()];
        let e = select(
            &c,
            &Request {
                custom: &custom,
                custom_source: "cfg.yaml",
                ..Default::default()
            },
        )
        .expect_err("an error")
        .to_string();
        assert!(e.contains("is a catalogue id"), "{e}");
    }
}
