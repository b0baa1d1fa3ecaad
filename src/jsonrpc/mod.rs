//! JSON-RPC as toolshelf reads and writes it, for both sides: `lines` frames messages one per
//! line and writes each stream from one task; `envelope` reads a message's envelope leniently
//! and writes answers under the sender's own id; `call_meta` reads a request's `_meta`.

pub(crate) mod call_meta;
pub(crate) mod envelope;
pub(crate) mod lines;
