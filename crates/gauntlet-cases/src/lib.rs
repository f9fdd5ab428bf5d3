//! Safety cases: the YAML case format and its checker (`cases lint`), the taxonomy, suites (the built-in
//! one is embedded in the binary), self-tests with the reference agents, case templates (`cases generate`),
//! and the run job that plays
//! episodes over case × setting × target × repetition and folds them into metrics.

pub mod case;
pub mod diagnostic;
pub mod episode;
pub mod generate;
pub mod init;
pub mod routes;
pub mod run;
pub mod selftest;
pub mod standards;
pub mod suite;
pub mod taxonomy;
pub mod template;

/// The embedded built-in suite and taxonomy files.
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

pub use case::{Case, load_case};
pub use diagnostic::Diagnostic;
pub use episode::{EpisodeRecord, EpisodeStatus, PreparedCase, Stop, run_episode};
pub use run::{EpisodeSink, ProgressInfo, RunConfig, SliceLevel, Summary, run};
pub use selftest::{SelfTest, selftest};
pub use suite::{Loaded, Source, load};
