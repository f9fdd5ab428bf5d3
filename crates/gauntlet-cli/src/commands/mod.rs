//! One module per command: each parses nothing itself (clap has done that) and calls the libraries that do the
//! command's work.

pub(crate) mod cases;
pub(crate) mod doctor;
pub(crate) mod gateway;
pub(crate) mod privilege;
pub(crate) mod redteam;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod runs;
pub(crate) mod tools;
