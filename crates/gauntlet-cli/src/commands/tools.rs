//! `gauntlet tools`: the simulated world's tools and setup operations.

use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct ToolsArgs {
    /// Full JSON (schemas, effects, tiers) instead of a list.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// The Markdown reference (docs/tools.md).
    #[arg(long)]
    markdown: bool,
}

pub(crate) fn cmd_tools(a: ToolsArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if a.markdown {
        write!(out, "{}", gauntlet_world::reference_markdown())?;
    } else if a.json {
        let doc = serde_json::json!({"tools": gauntlet_world::tool_specs(), "setup": gauntlet_world::setup_specs()});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        write!(out, "{}", gauntlet_world::tools_text())?;
    }
    Ok(ExitCode::SUCCESS)
}
