//! The flags of `toolshelf serve`.

use std::path::PathBuf;

use clap::Args;

use super::{CacheSwitch, ConfigArg};

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub cache: CacheSwitch,
    /// Serve MCP over streamable HTTP at /mcp instead of stdio, on ADDR: HOST:PORT, or a bare
    /// PORT for 127.0.0.1:PORT (default 127.0.0.1:8411).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = crate::transport::http::DEFAULT_ADDRESS, value_parser = listen_address)]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: the file holding the bearer token agents must send (whitespace around it is
    /// ignored). Default: $TOOLSHELF_TOKEN.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// With --http: a folder with one file per caller, named like the caller and holding its
    /// bearer token (a mounted secret's layout); beside the single token (caller `default`).
    #[arg(long, value_name = "DIR", requires = "http")]
    pub tokens_dir: Option<PathBuf>,
    /// With --http: admit OAuth access tokens (JWTs) issued by this authorization server, named
    /// by its issuer identifier (repeatable); toolshelf names it in its protected resource
    /// metadata, and checks tokens with the keys of its JWKS.
    #[arg(long, value_name = "URL", requires = "http")]
    pub oauth_issuer: Vec<String>,
    /// With --oauth-issuer: this server's canonical URI, which tokens' `aud` must name (default:
    /// http://ADDR/mcp for a loopback ADDR; required otherwise).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_resource: Option<String>,
    /// With --oauth-issuer: a scope every request's token needs (repeatable).
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scope: Vec<String>,
    /// With --oauth-issuer: the claim that lists a token's groups.
    #[arg(
        long,
        value_name = "CLAIM",
        default_value = "groups",
        requires = "oauth_issuer"
    )]
    pub oauth_groups_claim: String,
    /// With --http: serve without a token even on a non-loopback address (unprotected).
    #[arg(long, requires = "http")]
    pub insecure_no_auth: bool,
    /// With --http: a browser origin allowed besides loopback ones, e.g.
    /// https://app.example.com:443 (`:*` for any port). Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allowed_origin: Vec<String>,
    /// With --http: a `Host` allowed besides loopback names (the name agents reach toolshelf by,
    /// behind a proxy or in a pod). Repeatable.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allowed_host: Vec<String>,
    /// Code mode: offer `run_code` beside the two tools, a Python script run in toolshelf's
    /// sandbox that calls the toolboxes' tools (as `"code": {"enabled": true}` does).
    #[arg(long, conflicts_with = "flat")]
    pub code: bool,
    /// Flat mode: list every tool of the served servers as SERVER:TOOL instead of the two
    /// meta-tools; the servers start as soon as the client has initialized.
    #[arg(long)]
    pub flat: bool,
    /// With --flat: serve this toolbox's servers (repeatable; default: every toolbox).
    #[arg(long, value_name = "NAME", requires = "flat")]
    pub toolbox: Vec<String>,
    /// With --flat: the text between a server's name and its tool's (`__` for clients that
    /// refuse `:` in tool names).
    #[arg(long, value_name = "SEP", requires = "flat", default_value = crate::flat::DEFAULT_SEPARATOR)]
    pub separator: String,
    /// With --http: log a line per request on stderr (HTTP method, path, session, the tool a call
    /// names, status, time to the response's head; never a token, header or argument value).
    /// The same as adding toolshelf_access=info to the log filter.
    #[arg(long, requires = "http")]
    pub access_log: bool,
    /// Append a JSON line per tool call, open and search to FILE (`-`: stderr): who, what, how.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// With --audit-log FILE: past this many bytes, it moves to FILE.1 and begins anew.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 100_000_000,
        requires = "audit_log"
    )]
    pub audit_log_max_bytes: u64,
    /// Reload the config whenever the file changes, as SIGHUP does (a config with problems is refused and the running one stays).
    #[arg(long)]
    pub watch: bool,
}

/// `--http`'s address: `HOST:PORT` (`[::1]:PORT` for IPv6), or a bare port on loopback, which
/// is what a listener binds unless told otherwise.
fn listen_address(given: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = given.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    given.parse().map_err(|_| {
        format!(
            "'{given}' is not an address to listen on: give PORT (e.g. 8413, for 127.0.0.1:8413) or HOST:PORT with HOST an IP address (e.g. 127.0.0.1:8413, 0.0.0.0:8413 or [::1]:8413)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn a_bare_port_listens_on_loopback_and_a_name_is_refused_with_the_forms() {
        assert_eq!(
            listen_address("8413").map(|address| address.to_string()),
            Ok("127.0.0.1:8413".to_owned())
        );
        assert_eq!(
            listen_address("[::1]:9").map(|address| address.to_string()),
            Ok("[::1]:9".to_owned())
        );
        let refused = listen_address("localhost:8413").expect_err("a host name");
        assert!(refused.contains("give PORT (e.g. 8413"), "{refused}");
    }
}
