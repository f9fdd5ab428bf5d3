//! Embeds the vulnerability catalogue (`catalog/vulnerabilities/**/*.yaml`) and the framework mappings
//! (`catalog/frameworks/*.yaml`) in the binary, so `gauntlet redteam` works from any directory.

#[path = "../../build/embed.rs"]
mod embed;

fn main() {
    embed::write(&[
        ("catalog/vulnerabilities", "VULNERABILITY_FILES"),
        ("catalog/frameworks", "FRAMEWORK_FILES"),
    ]);
}
