//! Renderers for run results, live or from the store: terminal tables, the streamed JSON document, HTML,
//! JUnit XML and Markdown, errored results grouped by cause, and the `--fail-on` gates; a stored run of any kind
//! in any of those formats ([`stored`]).

pub mod causes;
pub mod file;
pub mod gate;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod progress;
pub mod stored;
pub mod table;
pub mod unfinished;

pub use json::{JsonSink, privilege_document, privilege_head};
pub use table::{
    JsonOut, json_out, print_privilege, print_redteam, print_run, privilege_table, redteam_table,
    risk_env_table, rung_table, slice_table, slice_titles, tables_out, target_setting_table,
};
pub use unfinished::Unfinished;
