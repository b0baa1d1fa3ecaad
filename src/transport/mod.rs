//! The two doors into the session core: `stdio` (one session, lines on stdin/stdout) and
//! `http` (`serve --http`: many sessions over streamable HTTP). A transport adapts: it turns
//! what it carries into requests of a `session::Session` and writes the answers back; it
//! implements no feature of its own.

pub mod http;
pub mod stdio;
