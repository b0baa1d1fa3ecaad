//! JSON-RPC as toolshelf reads and writes it, for both sides: `line_reader` and `line_writer` frame
//! messages one per line, and `line_writer` writes each stream in order; `envelope` reads a message's envelope leniently
//! and writes answers under the sender's own id; `call_meta` reads a request's `_meta`; `skim`
//! reads JSON already checked without checking it again; `valid_json` checks a large line in one
//! fast pass.

pub(crate) mod call_meta;
pub(crate) mod envelope;
pub(crate) mod line_reader;
pub(crate) mod line_writer;
pub(crate) mod skim;
pub(crate) mod valid_json;
