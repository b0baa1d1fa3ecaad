//! The Protected Resource Metadata (RFC 9728): what a client reads, after a 401, to find the
//! authorization server to get a token from, and for which resource and scopes.

use super::OAuthOptions;

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

pub(super) fn document(options: &OAuthOptions) -> String {
    let mut document = serde_json::json!({
        "resource": options.resource,
        "authorization_servers": options.issuers,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolshelf",
    });
    if !options.scopes.is_empty() {
        document["scopes_supported"] = serde_json::json!(options.scopes);
    }
    document.to_string()
}

/// `resource` split into its origin and its path (no trailing slash).
fn split(resource: &str) -> (&str, &str) {
    let start = resource.find("://").map_or(0, |at| at + 3);
    let (origin, path) = match resource[start..].find('/') {
        Some(slash) => resource.split_at(start + slash),
        None => (resource, ""),
    };
    (origin, path.trim_end_matches('/'))
}

pub(super) fn url(resource: &str) -> String {
    let (origin, path) = split(resource);
    format!("{origin}{WELL_KNOWN}{path}")
}

pub(super) fn paths(resource: &str) -> [String; 2] {
    let (_, path) = split(resource);
    [format!("{WELL_KNOWN}{path}"), WELL_KNOWN.to_owned()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_is_where_rfc_9728_puts_it() {
        assert_eq!(
            url("https://tools.example.com/mcp"),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            paths("https://tools.example.com/mcp"),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            url("http://127.0.0.1:8411"),
            "http://127.0.0.1:8411/.well-known/oauth-protected-resource"
        );
    }
}
