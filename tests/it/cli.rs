//! The command line: `schema`, `check`, `--help`.
