//! The `--json` document, written as the run goes: a header, every episode in run order, then the
//! summary. Nothing in it depends on wall time, so the same inputs and seed give the same bytes.

use gauntlet_cases::{EpisodeRecord, EpisodeSink, RunConfig, Summary};
use serde::Serialize;
use std::io::Write;

/// The schema identifier of the document.
pub const SCHEMA: &str = "gauntlet.run/v1";

/// Streams a run as one JSON document.
pub struct JsonSink<W: Write> {
    out: W,
    first: bool,
}

#[derive(Serialize)]
struct Header<'a> {
    schema: &'a str,
    config: &'a RunConfig,
    targets: &'a [String],
    defense: &'a str,
    cases: &'a [String],
}

impl<W: Write> JsonSink<W> {
    /// Writes the header and opens the episode list.
    pub fn start(
        mut out: W,
        config: &RunConfig,
        targets: &[String],
        defense: &str,
        cases: &[String],
    ) -> std::io::Result<JsonSink<W>> {
        let header = serde_json::to_string(&Header {
            schema: SCHEMA,
            config,
            targets,
            defense,
            cases,
        })?;
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
