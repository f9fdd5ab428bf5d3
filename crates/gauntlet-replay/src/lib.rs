//! New runs made from stored ones, calling no agent and no model: `replay` re-judges a stored safety-case or
//! red-team run with the verifiers and judges as they are now, and `merge` joins the shards of a run recorded on
//! several machines (`--shard I/N`) into the run made in one piece. Both write a new run to the store and leave
//! printing to the caller ([`Replayed::write`], [`Merged::write`]).

pub mod merge;
pub mod replay;

pub use merge::{Merged, merge};
pub use replay::{Replayed, replay};

use gauntlet_report::stored::StoredError;
use gauntlet_store::StoreError;

/// Why a replay or a merge could not make its run. Nothing half-made is left behind: a merge is one transaction,
/// and a replay that fails while reading marks its run failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed or holds a record that cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored run's header, summary or cases cannot be read back.
    #[error(transparent)]
    Stored(#[from] StoredError),
    /// A result could not be serialised for the store.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The built-in vulnerability catalogue does not load (a build problem).
    #[error("the vulnerability catalogue is broken:\n{0}")]
    Catalogue(String),
    /// The run asked for is not one this operation takes (its kind, or it did not finish).
    #[error("{0}")]
    Unsupported(String),
    /// The shards given are not every shard of one run, once each, all complete.
    #[error("{0}")]
    Shards(String),
    /// The stored results no longer match the plan their cases make now.
    #[error("{0}")]
    Changed(String),
    /// Reading a stored record failed; `what` says which.
    #[error("{what}")]
    Reading {
        /// The run and record read.
        what: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// A read failure of `what`.
    fn reading(what: String, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Reading {
            what,
            source: Box::new(source),
        }
    }
}

/// The built-in vulnerability catalogue, which re-folds a red team's risk assessment.
fn catalogue() -> Result<gauntlet_redteam::Catalogue, Error> {
    gauntlet_redteam::catalog::builtin().map_err(|e| Error::Catalogue(e.join("\n")))
}
