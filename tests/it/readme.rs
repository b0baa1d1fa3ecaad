//! The README quotes what the code produces: this test computes each quoted figure the README
//! names it for and fails with the true value when the text is stale.

use serde_json::json;

use crate::harness::RawClient;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README")
}

/// Fails unless the README quotes `text` (line breaks and indentation aside): the tests that
/// produce a text the README quotes call it with what toolshelf wrote.
pub(crate) fn assert_quoted(text: &str) {
    let collapse = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        collapse(&readme()).contains(&collapse(text)),
        "the README no longer quotes what toolshelf writes: {text}"
    );
}

/// `1637` as the README writes it: `1,637`.
fn grouped(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[tokio::test]
async fn the_readme_quotes_the_size_of_toolshelfs_tools_list_for_the_example() {
    let example = crate::harness::example_config();
    // tools/list starts no server: the example's npm servers are never run here.
    let mut client = RawClient::start(&example).await;
    let (_, listed) = client.request(1, "tools/list", json!({})).await;
    let bytes = serde_json::to_vec(&listed["result"]).expect("JSON").len();
    let quoted = format!(
        "Through toolshelf it reads **{} bytes (~{} tokens)**",
        grouped(bytes),
        bytes / 4
    );
    assert!(readme().contains(&quoted), "README.md should say: {quoted}");
}
