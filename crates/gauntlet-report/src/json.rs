//! The `--json` document, written as the run goes: a header, every episode in run order, then the
//! summary. Nothing in it depends on wall time, so the same inputs and seed give the same bytes.

use gauntlet_cases::{EpisodeRecord, EpisodeSink, RunConfig, Summary};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// The schema identifier of the document.
pub const SCHEMA: &str = "gauntlet.run/v1";

/// The schema identifier of a privilege job's document.
pub const PRIVILEGE_SCHEMA: &str = "gauntlet.privilege/v1";

/// A privilege job's head, stored with its run before any defense is scored: the schema and the suite's census.
pub fn privilege_head(census: &gauntlet_privilege::score::Census) -> serde_json::Value {
    serde_json::json!({"schema": PRIVILEGE_SCHEMA, "census": census})
}

/// A privilege job's document (`--json`, and the run's stored summary): the schema, the census and one score per
/// defense.
pub fn privilege_document(
    census: &gauntlet_privilege::score::Census,
    scores: &[gauntlet_privilege::DefenseScore],
) -> serde_json::Value {
    serde_json::json!({"schema": PRIVILEGE_SCHEMA, "census": census, "defenses": scores})
}

/// Streams a run as one JSON document.
pub struct JsonSink<W: Write> {
    doc: Streamed<W>,
}

/// A JSON document written as it is made, in the shape every job's document has: the fields of a head object,
/// then one array of items (`"episodes"`, `"cases"`), one per line, then one closing field (`"summary"`,
/// `"report"`). The head's fields keep their serialised order, so the document is byte-identical to serialising
/// the whole at once.
pub struct Streamed<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> Streamed<W> {
    /// Writes the head's fields and opens the array `list`.
    pub fn start(mut out: W, head: &impl Serialize, list: &str) -> std::io::Result<Streamed<W>> {
        let head = serde_json::to_string(head)?;
        let Some(open) = head.strip_suffix('}') else {
            return Err(std::io::Error::other(
                "a document head must be a JSON object",
            ));
        };
        let comma = if open == "{" { "" } else { "," };
        write!(out, "{open}{comma}{}:[", serde_json::to_string(list)?)?;
        Ok(Streamed { out, first: true })
    }

    /// Appends an item.
    pub fn item(&mut self, item: &impl Serialize) -> std::io::Result<()> {
        self.separate()?;
        serde_json::to_writer(&mut self.out, item)?;
        Ok(())
    }

    /// Appends an item that is already JSON text (a stored record), as it is.
    pub fn raw_item(&mut self, json: &str) -> std::io::Result<()> {
        self.separate()?;
        self.out.write_all(json.as_bytes())
    }

    fn separate(&mut self) -> std::io::Result<()> {
        self.out
            .write_all(if self.first { b"\n" } else { b",\n" })?;
        self.first = false;
        Ok(())
    }

    /// Closes the array, writes the closing field `key`, ends the document with a newline and flushes.
    pub fn finish(mut self, key: &str, value: &impl Serialize) -> std::io::Result<W> {
        write!(self.out, "\n],{}:", serde_json::to_string(key)?)?;
        serde_json::to_writer(&mut self.out, value)?;
        writeln!(self.out, "}}")?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// [`Streamed::finish`] with two closing fields, in order.
    pub fn finish_two(
        mut self,
        (key, value): (&str, &impl Serialize),
        last: (&str, &impl Serialize),
    ) -> std::io::Result<W> {
        write!(self.out, "\n],{}:", serde_json::to_string(key)?)?;
        serde_json::to_writer(&mut self.out, value)?;
        write!(self.out, ",{}:", serde_json::to_string(last.0)?)?;
        serde_json::to_writer(&mut self.out, last.1)?;
        writeln!(self.out, "}}")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A [`Streamed`] document that another thread may close early (the Ctrl-C handler, so that what was written still
/// parses): each item is written whole under a lock, and once the document is closed, later items and closes are
/// dropped. Clones share the document.
pub struct SharedDoc<W: Write>(Arc<Mutex<Option<Streamed<W>>>>);

impl<W: Write> Clone for SharedDoc<W> {
    fn clone(&self) -> Self {
        SharedDoc(Arc::clone(&self.0))
    }
}

impl<W: Write> SharedDoc<W> {
    /// Shares `doc`.
    pub fn new(doc: Streamed<W>) -> SharedDoc<W> {
        SharedDoc(Arc::new(Mutex::new(Some(doc))))
    }

    // A writer that panicked mid-item cannot have left less than the lock protects: the next close still ends the
    // document, so a poisoned lock is used as it is.
    fn doc(&self) -> std::sync::MutexGuard<'_, Option<Streamed<W>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends an item, unless the document is closed.
    pub fn item(&self, item: &impl Serialize) -> std::io::Result<()> {
        match self.doc().as_mut() {
            Some(d) => d.item(item),
            None => Ok(()),
        }
    }

    /// Closes the document with the closing field `key` (see [`Streamed::finish`]) and returns its writer, unless
    /// someone closed it first (`None`).
    pub fn finish(&self, key: &str, value: &impl Serialize) -> std::io::Result<Option<W>> {
        self.doc().take().map(|d| d.finish(key, value)).transpose()
    }
}

impl<W: Write> EpisodeSink for SharedDoc<W> {
    fn episode(&mut self, record: &EpisodeRecord) -> std::io::Result<()> {
        self.item(record)
    }
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
    pub fn start(out: W, header: &RunHeader) -> std::io::Result<JsonSink<W>> {
        Ok(JsonSink {
            doc: Streamed::start(out, header, "episodes")?,
        })
    }

    /// Closes the episode list, writes the summary and flushes.
    pub fn finish(self, summary: &Summary) -> std::io::Result<W> {
        self.doc.finish("summary", summary)
    }

    /// Closes the episode list of a stored run: for one that never finished, `"unfinished"` (status, results
    /// stored and planned, how to finish it) comes before the summary of what it stored.
    pub fn finish_stored(
        self,
        unfinished: Option<&crate::Unfinished>,
        summary: &Summary,
    ) -> std::io::Result<W> {
        match unfinished {
            Some(u) => self.doc.finish_two(("unfinished", u), ("summary", summary)),
            None => self.finish(summary),
        }
    }

    /// Ends a document whose run stopped early: the episodes so far, then `"stopped"` with why, instead of a
    /// summary, so that what was written still parses.
    pub fn stopped(self, why: &str) -> std::io::Result<W> {
        self.doc.finish("stopped", &why)
    }
}

impl<W: Write> EpisodeSink for JsonSink<W> {
    fn episode(&mut self, record: &EpisodeRecord) -> std::io::Result<()> {
        self.doc.item(record)
    }
}

#[cfg(test)]
mod tests {
    use super::Streamed;

    #[test]
    fn a_run_stopped_early_still_parses() {
        let head = serde_json::json!({"schema": "gauntlet.run/v1"});
        let mut doc =
            Streamed::start(Vec::new(), &head, "episodes").unwrap_or_else(|e| panic!("{e}"));
        doc.item(&serde_json::json!({"index": 0}))
            .unwrap_or_else(|e| panic!("{e}"));
        let out = doc
            .finish("stopped", &"interrupted")
            .unwrap_or_else(|e| panic!("{e}"));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v["stopped"], "interrupted");
        assert_eq!(v["episodes"][0]["index"], 0);
        assert!(v.get("summary").is_none());
    }

    #[test]
    fn a_shared_document_closed_by_another_thread_still_parses_and_drops_later_items() {
        let head = serde_json::json!({"schema": "gauntlet.run/v1"});
        let doc = Streamed::start(Vec::new(), &head, "episodes").unwrap_or_else(|e| panic!("{e}"));
        let doc = super::SharedDoc::new(doc);
        doc.item(&serde_json::json!({"index": 0}))
            .unwrap_or_else(|e| panic!("{e}"));
        let closer = doc.clone();
        let out = std::thread::spawn(move || closer.finish("stopped", &"interrupted"))
            .join()
            .unwrap_or_else(|_| panic!("the closing thread panicked"))
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("the first close returns the writer"));
        doc.item(&serde_json::json!({"index": 1}))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = doc.finish("summary", &0).unwrap_or_else(|e| panic!("{e}"));
        assert!(again.is_none());
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v["stopped"], "interrupted");
        assert_eq!(v["episodes"].as_array().map(Vec::len), Some(1));
    }

    #[derive(serde::Serialize)]
    struct Head {
        schema: &'static str,
        zeta: u32,
        alpha: Vec<u32>,
    }

    #[derive(serde::Serialize)]
    struct Whole {
        schema: &'static str,
        zeta: u32,
        alpha: Vec<u32>,
        items: Vec<serde_json::Value>,
        report: serde_json::Value,
    }

    #[test]
    fn a_streamed_document_is_the_whole_serialised_at_once() {
        let head = Head {
            schema: "s/v1",
            zeta: 2,
            alpha: vec![1],
        };
        let items = vec![serde_json::json!({"a": 1}), serde_json::json!([2, "x\"y"])];
        let report = serde_json::json!({"ok": true});
        let mut doc = Streamed::start(Vec::new(), &head, "items").expect("starts");
        doc.item(&items[0]).expect("item");
        doc.raw_item(&items[1].to_string()).expect("raw item");
        let got =
            String::from_utf8(doc.finish("report", &report).expect("finishes")).expect("utf-8");
        let whole = Whole {
            schema: head.schema,
            zeta: head.zeta,
            alpha: head.alpha.clone(),
            items,
            report,
        };
        let want: serde_json::Value = serde_json::to_value(&whole).expect("serialises");
        let parsed: serde_json::Value = serde_json::from_str(&got).expect("valid JSON");
        assert_eq!(parsed, want);
        // Field order is the head's, then the list, then the closing field.
        assert!(got.starts_with(
            "{\"schema\":\"s/v1\",\"zeta\":2,\"alpha\":[1],\"items\":[\n{\"a\":1},\n"
        ));
        assert!(got.ends_with("\n],\"report\":{\"ok\":true}}\n"));
        assert!(Streamed::start(Vec::new(), &3, "items").is_err());
    }
}
