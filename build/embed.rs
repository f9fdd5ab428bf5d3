//! Shared by the build scripts that embed catalogue YAML in a crate (`gauntlet-cases`, `gauntlet-redteam`):
//! each writes `$OUT_DIR/embedded.rs`, one static per directory, so the binary works from any directory.
//! Included with `#[path]` because a build script cannot depend on a workspace crate without building it first.

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}

fn embed(root: &Path, dir: &str, name: &str) -> String {
    let base = root.join(dir);
    println!("cargo:rerun-if-changed={}", base.display());
    let mut files = Vec::new();
    collect(&base, &mut files);
    files.sort();
    let mut s = format!(
        "/// Embedded files of `{dir}`: (path relative to the repository, contents).\npub static {name}: &[(&str, &str)] = &[\n"
    );
    for f in files {
        let rel = f
            .strip_prefix(root)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        s.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    s.push_str("];\n");
    s
}

/// Writes `$OUT_DIR/embedded.rs` with one `static NAME: &[(&str, &str)]` per `(directory, NAME)`, the
/// directories relative to the repository root.
pub fn write(dirs: &[(&str, &str)]) {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let root = manifest
        .join("../..")
        .canonicalize()
        .unwrap_or(manifest.join("../.."));
    let code: String = dirs
        .iter()
        .map(|(dir, name)| embed(&root, dir, name))
        .collect();
    let out =
        PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("embedded.rs");
    if let Err(e) = fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}
