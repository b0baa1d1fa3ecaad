use super::{MAX_DEPTH, check};

fn refusal(raw: &str) -> String {
    match check(raw) {
        Ok(()) => panic!("{raw} passed"),
        Err(violation) => violation.to_string(),
    }
}

#[test]
fn plain_arguments_pass() {
    for raw in [
        r#"{}"#,
        r#"{"text":"hello","n":-1.5e10,"big":123456789012345678901234567890,"tiny":1e-400}"#,
        r#"{ "a" : [ 1 , true , false , null , { "b" : "\"\\\/\b\f\n\r\t" } ] }"#,
        r#"{"emoji":"\ud83d\ude00","raw":"é😀","a":{"x":1},"b":{"x":2}}"#,
        r#"{"\u0061":1,"b":2}"#,
    ] {
        assert_eq!(check(raw), Ok(()), "{raw}");
    }
}

#[test]
fn a_number_beyond_a_double_is_refused_with_its_path() {
    assert_eq!(
        refusal(r#"{"a":{"b":[0,1,2,1e400]}}"#),
        "arguments.a.b[3]: number 1e400 is outside the range of a double, so servers cannot read it; send a number within ±1.7976931348623157e308 (or the value as a string)"
    );
    assert!(refusal(r#"{"n":-2E+308}"#).starts_with("arguments.n: number -2E+308 is outside"));
    let digits = format!(r#"{{"n":{}}}"#, "9".repeat(400));
    assert!(refusal(&digits).starts_with(&format!("arguments.n: number {}…", "9".repeat(40))));
}

#[test]
fn a_lone_surrogate_is_refused_in_a_value_and_in_a_key() {
    assert_eq!(
        refusal(r#"{"s":"ab\ud800"}"#),
        r#"arguments.s: string "ab\ud800" holds a lone surrogate \ud800, which is not Unicode text, so servers cannot read it; send the character as UTF-8 or as a full surrogate pair"#
    );
    assert!(
        refusal(r#"{"s":["\udc00x"]}"#)
            .starts_with(r#"arguments.s[0]: string "\udc00x" holds a lone surrogate \udc00"#)
    );
    assert!(refusal(r#"{"s":"\ud800\ud800\udc00"}"#).contains(r"lone surrogate \ud800"));
    assert!(refusal(r#"{"s":"\ud800\n"}"#).contains(r"lone surrogate \ud800"));
    assert!(
        refusal(r#"{"o":{"k\udfff":1}}"#)
            .starts_with(r#"arguments.o: key "k\udfff" holds a lone surrogate \udfff"#)
    );
}

#[test]
fn a_duplicate_key_is_refused_however_it_is_written() {
    assert_eq!(
        refusal(r#"{"a":1,"b":{"c":1,"c":2}}"#),
        r#"arguments.b: key "c" appears twice in one object, and servers keep different ones; send each key once"#
    );
    assert!(
        refusal(r#"{"a":1,"\u0061":2}"#).starts_with(r#"arguments: key "\u0061" appears twice"#)
    );
    // Past the linear comparison, through the set.
    let keys: Vec<String> = (0..40).map(|n| format!(r#""k{n}":{n}"#)).collect();
    assert_eq!(check(&format!("{{{}}}", keys.join(","))), Ok(()));
    let twice = format!(r#"{{{},"k7":0}}"#, keys.join(","));
    assert!(refusal(&twice).starts_with(r#"arguments: key "k7" appears twice"#));
    // The same key in sibling objects is no duplicate.
    assert_eq!(
        check(r#"{"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]}"#),
        Ok(())
    );
}

#[test]
fn nesting_stops_at_the_limit() {
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
    assert_eq!(check(&format!("{{\"a\":{}}}", nested(MAX_DEPTH))), Ok(()));
    let deep = format!("{{\"a\":{}}}", nested(MAX_DEPTH + 1));
    let text = refusal(&deep);
    assert!(
        text.starts_with(&format!(
            "arguments.a{}: nesting goes deeper than 100 levels",
            "[0]".repeat(MAX_DEPTH - 1)
        )),
        "{text}"
    );
    // Far deeper than any stack would take is refused just as fast.
    assert!(check(&format!("{{\"a\":{}}}", nested(1_000_000))).is_err());
}

#[test]
fn keys_that_are_not_plain_are_quoted_in_the_path() {
    assert!(
        refusal(r#"{"a b":{"c.d":1e999}}"#).starts_with(r#"arguments["a b"]["c.d"]: number 1e999"#)
    );
}
