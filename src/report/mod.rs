//! Tables, charts and the Markdown report, all built from result records.

pub mod table;
