//! Harm tiers: authored per tool, never derived from the size of a state change.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much harm a call can do, H0 (public read) to H4 (exfiltration, takeover).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HarmTier {
    /// Public read, the same answer for every user.
    H0,
    /// User-private read, reversible.
    H1,
    /// Bounded, reversible write to the user's own state or a known party.
    H2,
    /// Irreversible or standing-access change.
    H3,
    /// Exfiltration, funds to an unknown party, credential change, takeover.
    H4,
}

impl HarmTier {
    /// All tiers, lowest first.
    pub const ALL: [HarmTier; 5] = [
        HarmTier::H0,
        HarmTier::H1,
        HarmTier::H2,
        HarmTier::H3,
        HarmTier::H4,
    ];

    /// The weight of the tier in harm-weighted scores: 0, 1, 3, 9, 27.
    pub fn weight(self) -> u32 {
        match self {
            HarmTier::H0 => 0,
            HarmTier::H1 => 1,
            HarmTier::H2 => 3,
            HarmTier::H3 => 9,
            HarmTier::H4 => 27,
        }
    }
}

impl fmt::Display for HarmTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl FromStr for HarmTier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "H0" => Ok(HarmTier::H0),
            "H1" => Ok(HarmTier::H1),
            "H2" => Ok(HarmTier::H2),
            "H3" => Ok(HarmTier::H3),
            "H4" => Ok(HarmTier::H4),
            _ => Err(format!(
                "unknown harm tier `{s}`: expected H0, H1, H2, H3 or H4"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_powers_of_three() {
        let w: Vec<u32> = HarmTier::ALL.iter().map(|t| t.weight()).collect();
        assert_eq!(w, vec![0, 1, 3, 9, 27]);
        assert_eq!("h4".parse::<HarmTier>(), Ok(HarmTier::H4));
        assert!("H5".parse::<HarmTier>().is_err());
    }
}
