//! Embeds the built-in suite (`suites/builtin/**/*.yaml`), the generated suite (`suites/generated`) and the taxonomy (`catalog/taxonomy/*.yaml`) in
//! the binary, so `gauntlet run` works from any directory.

#[path = "../../build/embed.rs"]
mod embed;

fn main() {
    embed::write(&[
        ("suites/builtin", "BUILTIN_SUITE"),
        ("suites/generated", "GENERATED_SUITE"),
        ("catalog/taxonomy", "TAXONOMY_FILES"),
    ]);
}
