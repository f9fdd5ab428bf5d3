//! The `--json` document, written as the run goes: a header, every episode in run order, then the
//! summary. Nothing in it depends on wall time, so the same inputs and seed give the same bytes.

use gauntlet_cases::{EpisodeRecord, EpisodeSink, RunConfig, Summary};
use serde::{Deserialize, Serialize};
use std::io::Write;

/// The schema identifier of the document.
pub const SCHEMA: &str = "gauntlet.run/v1";

/// Streams a run as one JSON document.
pub struct JsonSink<W: Write> {
    out: W,
    first: bool,
}

/// What a run document says before its episodes: what was run, against what, with which defense.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunHeader {
    /// [`SCHEMA`].
    pub schema: String,
    /// Settings, repetitions, seed and turn budget.
    pub config: RunConfig,
    /// Target names, in run order.
    pub targets: Vec<String>,
    /// The defense's name.
    pub defense: String,
    /// Case ids, in run order.
    pub cases: Vec<String>,
}

impl RunHeader {
    /// A header for a run of `cases` × `targets` under `defense`.
    pub fn new(
        config: &RunConfig,
        targets: &[String],
        defense: &str,
        cases: &[String],
    ) -> RunHeader {
        RunHeader {
            schema: SCHEMA.to_string(),
            config: config.clone(),
            targets: targets.to_vec(),
            defense: defense.to_string(),
            cases: cases.to_vec(),
        }
    }
}

impl<W: Write> JsonSink<W> {
    /// Writes the header and opens the episode list.
    pub fn start(mut out: W, header: &RunHeader) -> std::io::Result<JsonSink<W>> {
        let header = serde_json::to_string(header)?;
        // Re-open the header object to append the episodes array.
        let open = header.strip_suffix('}').unwrap_or(&header);
        write!(out, "{open},\"episodes\":[")?;
        Ok(JsonSink { out, first: true })
    }

    /// Closes the episode list, writes the summary and flushes.
    pub fn finish(mut self, summary: &Summary) -> std::io::Result<W> {
        write!(self.out, "\n],\"summary\":")?;
        serde_json::to_writer(&mut self.out, summary)?;
        writeln!(self.out, "}}")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> EpisodeSink for JsonSink<W> {
    fn episode(&mut self, record: &EpisodeRecord) -> std::io::Result<()> {
        self.out
            .write_all(if self.first { b"\n" } else { b",\n" })?;
        self.first = false;
        serde_json::to_writer(&mut self.out, record)?;
        Ok(())
    }
}
