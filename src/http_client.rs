//! The one HTTP client of the process: remote children and OAuth logins share its connection
//! pool, its TLS setup (rustls, the system's roots) and its proxy settings (`HTTPS_PROXY`,
//! `NO_PROXY`).

use std::{sync::OnceLock, time::Duration};

/// How long a connection attempt may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The shared client, made on first use.
pub(crate) fn shared() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            use_ring();
            reqwest::Client::builder()
                .user_agent(concat!("toolshelf/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(CONNECT_TIMEOUT)
                // With Nagle's algorithm on, a small request waits for the last one's ACK, which
                // turns a loopback round trip from a fraction of a millisecond into tens of them.
                .tcp_nodelay(true)
                .build()
                .map_err(|error| format!("toolshelf cannot set up its HTTP client: {error}"))
        })
        .clone()
}

/// Makes ring the TLS crypto of every HTTP client of the process (rmcp's OAuth code builds its
/// own): one provider, chosen here, so no C toolchain is needed to build.
pub(crate) fn use_ring() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
