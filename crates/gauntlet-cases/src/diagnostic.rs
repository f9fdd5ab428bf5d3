//! Diagnostics: one problem in one file, with line and column.

use serde::Serialize;
use std::fmt;

/// A problem found in a case file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    /// The file (as given, or `builtin:<path>` for embedded cases).
    pub file: String,
    /// 1-based line (0 when the problem concerns the whole file).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong and, where possible, how to fix it.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at a position.
    pub fn new(file: &str, line: usize, column: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )
    }
}
