//! Renderers for run results: terminal tables and the streamed JSON document.

pub mod html;
pub mod json;
pub mod table;

pub use json::JsonSink;
pub use table::{privilege_table, redteam_table, risk_env_table, rung_table, target_setting_table};
