//! Settings: the threat model of an episode.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Who controls the user channel and whether tool results are poisoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Setting {
    /// The legitimate task, untouched tool results: measures utility.
    Benign,
    /// An adaptive adversary on the user channel: misuse / jailbreak resistance.
    Direct,
    /// The legitimate task with tool results poisoned by injection rules.
    Indirect,
    /// Adversary on the user channel and poisoned tool results.
    Multi,
}

impl Setting {
    /// All settings in report order.
    pub const ALL: [Setting; 4] = [
        Setting::Benign,
        Setting::Direct,
        Setting::Indirect,
        Setting::Multi,
    ];

    /// The lowercase name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Setting::Benign => "benign",
            Setting::Direct => "direct",
            Setting::Indirect => "indirect",
            Setting::Multi => "multi",
        }
    }

    /// Whether the adversary speaks on the user channel.
    pub fn adversarial_user(self) -> bool {
        matches!(self, Setting::Direct | Setting::Multi)
    }

    /// Whether the case's injection rules are in force.
    pub fn poisoned_tools(self) -> bool {
        matches!(self, Setting::Indirect | Setting::Multi)
    }

    /// Whether this is an attack setting (anything but benign).
    pub fn is_attack(self) -> bool {
        self != Setting::Benign
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Read as `--settings` reads it (any letter case, spaces around), so a run stored with `--settings Benign` before
/// the flag was typed still resumes.
impl TryFrom<String> for Setting {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl FromStr for Setting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "benign" => Ok(Setting::Benign),
            "direct" => Ok(Setting::Direct),
            "indirect" => Ok(Setting::Indirect),
            "multi" => Ok(Setting::Multi),
            other => Err(format!(
                "unknown setting `{other}`: expected benign, direct, indirect or multi"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_stored_by_its_name_and_read_back_as_the_flag_reads_it() {
        let stored = serde_json::to_string(&[Setting::Benign, Setting::Multi]).expect("json");
        assert_eq!(stored, r#"["benign","multi"]"#);
        // Runs stored before `--settings` was typed kept the spelling given.
        let old: Vec<Setting> = serde_json::from_str(r#"["Benign", " indirect"]"#).expect("read");
        assert_eq!(old, vec![Setting::Benign, Setting::Indirect]);
        let bad = serde_json::from_str::<Setting>(r#""sideways""#).expect_err("unknown");
        assert!(
            bad.to_string().contains("unknown setting `sideways`"),
            "{bad}"
        );
    }
}
