//! Interop.
