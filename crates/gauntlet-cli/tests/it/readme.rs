//! The README's usage block stays true: every `gauntlet …` line names a command that exists and only flags that
//! command has.

use crate::gauntlet;

/// The `gauntlet …` lines of the README's `## Usage` code block.
fn usage_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap_or_else(|e| panic!("README.md: {e}"));
    let usage = readme
        .split("## Usage")
        .nth(1)
        .unwrap_or_else(|| panic!("README.md has no ## Usage"));
    let block = usage
        .split("```")
        .nth(1)
        .unwrap_or_else(|| panic!("## Usage has no code block"));
    block
        .lines()
        .map(|l| l.split(" # ").next().unwrap_or(l))
        .flat_map(|l| l.split(" && "))
        .map(|l| l.trim().to_string())
        .filter(|l| l.starts_with("gauntlet "))
        .collect()
}

#[test]
fn every_command_and_flag_in_the_readme_usage_exists() {
    let lines = usage_lines();
    assert!(lines.len() >= 10, "{} usage lines", lines.len());
    commands_and_flags_exist(lines);
}

/// The example lines shown after each command's help (`help/examples.txt`).
fn help_example_lines() -> Vec<String> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("help/examples.txt"),
    )
    .unwrap_or_else(|e| panic!("help/examples.txt: {e}"));
    text.lines()
        .map(|l| l.split(" # ").next().unwrap_or(l))
        .flat_map(|l| l.split(" && "))
        .map(|l| l.split(" >> ").next().unwrap_or(l).trim().to_string())
        .filter(|l| l.starts_with("gauntlet "))
        .collect()
}

#[test]
fn every_help_example_names_commands_and_flags_that_exist_and_each_command_shows_its_own() {
    let lines = help_example_lines();
    assert!(lines.len() >= 30, "{} example lines", lines.len());
    commands_and_flags_exist(lines);
    // Every command the top-level help lists (a new one without a section would have no examples).
    let top = String::from_utf8_lossy(&gauntlet(&["--help"]).stdout).into_owned();
    let commands: Vec<&str> = top
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 11, "{commands:?}");
    for sub in commands {
        let o = gauntlet(&[sub, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains(&format!("Examples:\n  gauntlet {sub}")),
            "`gauntlet {sub} --help`: {help}"
        );
    }
}

fn commands_and_flags_exist(lines: Vec<String>) {
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        let names: Vec<&str> = words
            .iter()
            .take(2)
            .copied()
            .take_while(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        // The help of the deepest command the line names (a second word may be an argument, not a subcommand).
        let help = (1..=names.len())
            .rev()
            .map(|n| {
                let mut args = names[..n].to_vec();
                args.push("--help");
                gauntlet(&args)
            })
            .find(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|| panic!("`{line}`: no such command"));
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            // Usage notation around a flag (`[--json | --markdown]`) is not part of it.
            let flag = flag
                .split('=')
                .next()
                .unwrap_or(flag)
                .trim_end_matches([']', ')', ',']);
            assert!(
                help.contains(&format!("{flag} "))
                    || help.contains(&format!("{flag}\n"))
                    || help.contains(&format!("{flag},")),
                "`{line}`: {flag} is not a flag of `gauntlet {}`",
                names.join(" ")
            );
        }
    }
}
