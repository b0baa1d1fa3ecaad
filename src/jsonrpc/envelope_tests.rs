use serde_json::{Value, json};

use super::*;

fn refused(line: &str) -> Value {
    match read(line.as_bytes()) {
        Incoming::Refused(answer) => serde_json::from_slice(&answer).expect("JSON"),
        other => panic!("expected a refusal of {line}, got {other:?}"),
    }
}

fn request_id(line: &str) -> String {
    match read(line.as_bytes()) {
        Incoming::Request { id, .. } => id.json().to_owned(),
        other => panic!("expected a request in {line}, got {other:?}"),
    }
}

#[test]
fn numbers_of_any_size_are_ids_as_written() {
    assert_eq!(
        request_id(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
        "1.5"
    );
    let big = "123456789012345678901234567890";
    assert_eq!(
        request_id(&format!(
            r#"{{"jsonrpc":"2.0","id":{big},"method":"ping"}}"#
        )),
        big
    );
    assert_eq!(
        request_id(r#"{"jsonrpc":"2.0","id":"d\u0031","method":"ping"}"#),
        r#""d\u0031""#
    );
}

#[test]
fn ids_of_other_types_are_refused_with_a_null_id() {
    for id in ["null", r#"{"a":1}"#, "[1]", "true"] {
        let answer = refused(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(answer["id"], Value::Null, "{id}");
        assert!(answer.as_object().is_some_and(|o| o.contains_key("id")));
        assert_eq!(answer["error"]["code"], json!(-32600), "{id}");
    }
}

#[test]
fn what_a_typed_parser_refuses_still_has_an_id() {
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    for params in [
        format!(r#"{{"a":{deep}}}"#),
        r#"{"a":"\udfff"}"#.to_owned(),
        r#"{"a":1e400}"#.to_owned(),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#);
        assert_eq!(request_id(&line), "7");
    }
}

#[test]
fn lines_that_are_not_messages_are_answered() {
    assert_eq!(refused("not json")["error"]["code"], json!(-32700));
    assert_eq!(refused("[1,2]")["error"]["code"], json!(-32600));
    assert_eq!(refused("[1,2")["error"]["code"], json!(-32700));
    assert_eq!(refused("3")["error"]["code"], json!(-32600));
    let no_version = refused(r#"{"id":4,"method":"ping"}"#);
    assert_eq!(no_version["id"], json!(4));
    assert!(matches!(read(b"  "), Incoming::Blank));
    assert!(matches!(
        read(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        Incoming::Response
    ));
}

#[test]
fn the_id_is_found_in_the_start_of_a_cut_message() {
    let head = br#"{"jsonrpc":"2.0", "params":{"a":["}",{"b":"\""}]},"id":"x1","method":"tools/call","params":{"arguments":{"text":"aaaa"#;
    assert_eq!(id_in_head(head).map(|id| id.to_string()), Some("x1".into()));
    assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","id":12"#), None);
    assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","params":{"a":1"#), None);
    assert_eq!(id_in_head(b"[1,2"), None);
}

#[test]
fn a_string_id_reads_without_quotes() {
    let id =
        AgentId::from_raw(&RawValue::from_string(r#""d1""#.into()).expect("raw")).expect("an id");
    assert_eq!(id.to_string(), "d1");
}
