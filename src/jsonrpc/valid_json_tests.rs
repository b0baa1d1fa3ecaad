use super::*;

/// Whether `text` is one JSON value, with nothing but white space around it, by `value_end`.
fn is_json(text: &str) -> bool {
    let space = |at: usize| {
        at + text.as_bytes()[at..]
            .iter()
            .take_while(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
            .count()
    };
    value_end(text, space(0)).is_some_and(|end| space(end) == text.len())
}

/// serde_json's verdict, which `is_json` must give too.
fn serde_says(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

const SEEDS: [&str; 6] = [
    r#"{"jsonrpc":"2.0","id":1099511627777,"result":{"content":[{"type":"text","text":"h\u00e9 \" \\ \/ \b\f\n\r\t done"}],"isError":false}}"#,
    "[0, -0, 1.5, -1e10, 2E+3, 1.0e-5, 123, true, false, null, \"\", {}, []]",
    " { \"a\" : [ { \"b\" : { } } , [ ] ] , \"c\" : \"é→𝄞\" } ",
    "\"a string long enough for two blocks of thirty-two bytes, and more\"",
    "-12.50E-07",
    "{\"k\":\"x\\u0041\\uD834\\uDD1E\",\"n\":[[[[1]]]]}",
];

/// Bytes that make or break JSON, put in and replaced at every place of every seed.
const BYTES: &[u8] = b"\"\\{}[],:0123456789-+.eEtfnu \t\n\r\x01\x1fa/";

#[test]
fn the_verdict_is_serde_jsons_for_every_seed_and_each_of_its_one_byte_changes() {
    let mut texts: Vec<Vec<u8>> = Vec::new();
    for seed in SEEDS {
        let seed = seed.as_bytes();
        texts.push(seed.to_vec());
        for at in 0..=seed.len() {
            if at < seed.len() {
                let mut cut = seed.to_vec();
                cut.remove(at);
                texts.push(cut);
            }
            for &byte in BYTES {
                let mut added = seed.to_vec();
                added.insert(at, byte);
                texts.push(added);
                if at < seed.len() {
                    let mut replaced = seed.to_vec();
                    replaced[at] = byte;
                    texts.push(replaced);
                }
            }
        }
    }
    let (mut checked, mut valid) = (0, 0);
    for text in texts
        .iter()
        .filter_map(|text| std::str::from_utf8(text).ok())
    {
        assert_eq!(is_json(text), serde_says(text), "{text:?}");
        checked += 1;
        valid += usize::from(serde_says(text));
    }
    // Both verdicts occur often, so the comparison means something.
    assert!(checked > 10_000 && valid > 1_000 && checked - valid > 5_000);
}

#[test]
fn a_stop_at_each_place_of_a_block_is_found() {
    for at in 0..100 {
        for stop in ["\"", "\\n", "\u{1}", "\\x"] {
            let text = format!("\"{}{stop}{}\"", "a".repeat(at), "b".repeat(70));
            assert_eq!(is_json(&text), serde_says(&text), "{text:?}");
        }
    }
    assert!(is_json(&format!("\"{}\"", "é".repeat(100_000))));
    assert!(!is_json(&format!("\"{}", "a".repeat(1000))));
}

#[test]
fn nesting_past_the_limit_is_refused_never_accepted() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(is_json(&nested(MAX_DEPTH)));
    assert!(!is_json(&nested(MAX_DEPTH + 1)));
    assert!(!is_json(&format!("{}1{}", "[".repeat(10), "]".repeat(9))));
}

#[test]
fn empty_and_blank_text_is_not_json() {
    for text in [
        "", " ", "\n", "1 2", "{}{}", "tru", "nul", "-", "1.", "1e", ".5", "01",
    ] {
        assert!(!is_json(text), "{text:?}");
        assert!(!serde_says(text), "{text:?}");
    }
}
