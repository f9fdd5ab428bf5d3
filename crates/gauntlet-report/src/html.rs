//! The self-contained HTML report (being written: see the functions below once they land).
