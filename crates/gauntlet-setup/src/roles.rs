//! The models a safety-case run adds around its targets: the controller that plays the attacker on the user
//! channel (`--controller`) and the case judge (`--judge`), each on a pool of its own role.

use crate::{Models, SetupError};

impl Models {
    /// The attacker model `--controller` names, with the world's tools as its attack surface; `None` for the
    /// scripted ladder.
    pub fn controller(&self, spec: &str) -> Result<Option<gauntlet_attacks::Attacker>, SetupError> {
        if spec == "scripted" {
            return Ok(None);
        }
        if !spec.contains('/') {
            return Err(SetupError::spec(
                "--controller",
                format!(
                    "`{spec}` is neither `scripted` nor a model (provider/model, e.g. anthropic/claude-sonnet-4-5)"
                ),
            ));
        }
        Ok(Some(gauntlet_attacks::Attacker {
            model: self.pool("attacker", spec, "--controller")?,
            runtime: self.handle()?,
            tools: std::sync::Arc::new(
                gauntlet_world::tool_specs()
                    .iter()
                    .map(gauntlet_world::signature)
                    .collect(),
            ),
        }))
    }

    /// The case judge `--judge` names (replies of at most `max_tokens`), if one is given.
    pub fn case_judge(
        &self,
        spec: Option<&str>,
        max_tokens: u32,
    ) -> Result<Option<gauntlet_judge::rubric::CaseJudge>, SetupError> {
        let Some(m) = spec else { return Ok(None) };
        if !m.contains('/') {
            return Err(SetupError::spec(
                "--judge",
                format!("`{m}` is not a model (provider/model, e.g. openai/gpt-4.1-mini)"),
            ));
        }
        Ok(Some(gauntlet_judge::rubric::CaseJudge {
            model: self.pool("judge", m, "--judge")?,
            runtime: self.handle()?,
            max_tokens,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_controller_or_judge_that_is_no_model_is_refused_by_its_flag() {
        let models = Models::build(
            &crate::Config::default(),
            false,
            crate::Limits::default(),
            None,
        )
        .expect("models without a runtime");
        assert!(matches!(models.controller("scripted"), Ok(None)));
        let e = models.controller("gpt-4").err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(
                "--controller: `gpt-4` is neither `scripted` nor a model (provider/model, e.g. anthropic/claude-sonnet-4-5)"
            )
        );
        assert!(matches!(models.case_judge(None, 512), Ok(None)));
        let e = models
            .case_judge(Some("judge"), 512)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("--judge: `judge` is not a model (provider/model, e.g. openai/gpt-4.1-mini)")
        );
    }
}
