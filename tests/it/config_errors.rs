//! Broken configs.
