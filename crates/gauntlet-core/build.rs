//! Trains the refusal screen's learned second opinion on the development sets in `catalog/refusals/` and writes
//! its weights to `OUT_DIR/refusal_model.bin` (see `src/refusal/learn.rs`). Deterministic: the same sets give
//! the same bytes.

#[allow(dead_code)]
#[path = "src/refusal/normal.rs"]
mod normal;

#[path = "src/refusal/learn.rs"]
mod learn;

use std::path::{Path, PathBuf};

/// The sets trained on, in order: the one list of development sets (written to `OUT_DIR/refusal_sets.txt` for the
/// tests, which check every set has a recall floor).
const SETS: &[&str] = &[
    "labelled.yaml",
    "dev2.yaml",
    "dev3.yaml",
    "dev4.yaml",
    "dev5.yaml",
    "dev6.yaml",
    "dev7.yaml",
    "dev8.yaml",
    "dev9.yaml",
    "dev10.yaml",
    "dev12.yaml",
    "dev13.yaml",
    "dev14.yaml",
    "dev15.yaml",
    "dev16.yaml",
    "dev17.yaml",
    "dev18.yaml",
    "dev19.yaml",
    "dev20.yaml",
    "dev21.yaml",
    "dev22.yaml",
    "dev23.yaml",
    "dev24.yaml",
    "dev25.yaml",
    "dev26.yaml",
    "dev27.yaml",
];

fn main() {
    let manifest = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let dir = manifest.join("../../catalog/refusals");
    println!("cargo:rerun-if-changed=src/refusal/normal.rs");
    println!("cargo:rerun-if-changed=src/refusal/learn.rs");
    let mut rows = Vec::new();
    for set in SETS {
        let path = dir.join(set);
        println!("cargo:rerun-if-changed={}", path.display());
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        rows.extend(
            learn::rows(&src)
                .into_iter()
                .map(|r| (normal::normal_form(&r.text), r.refusal)),
        );
    }
    let trained = learn::Trained::train(&rows);
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("refusal_model.bin");
    std::fs::write(&out, trained.to_bytes()).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let names = out.with_file_name("refusal_sets.txt");
    std::fs::write(&names, SETS.join("\n")).unwrap_or_else(|e| panic!("{}: {e}", names.display()));
}
