//! Arguments as a fuzzer writes them: numbers past a double, lone surrogates, keys given twice,
//! nesting past every parser's limit, mixed with arguments every parser reads. Each call is
//! answered at once, by the child or by toolshelf's refusal; none waits out its timeout.

use serde_json::{Value, json};

use crate::harness::{RawClient, config, fixture};

/// A small deterministic generator (xorshift), so a failure can be replayed.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.roll(from.len() as u64) as usize]
    }

    /// A JSON value as text, `depth` levels down.
    fn value(&mut self, depth: usize) -> String {
        const NUMBERS: &[&str] = &[
            "0",
            "-1",
            "1.5",
            "1e400",
            "-2E308",
            "1e-400",
            "123456789012345678901234567890",
        ];
        const STRINGS: &[&str] = &[
            r#""a""#,
            r#""\ud800""#,
            r#""x\udfffy""#,
            r#""\ud83d\ude00""#,
            r#""é""#,
            r#""\u0000""#,
        ];
        match self.roll(if depth > 4 { 3 } else { 6 }) {
            0 => self.pick(NUMBERS).to_owned(),
            1 => self.pick(STRINGS).to_owned(),
            2 => self.pick(&["true", "false", "null"]).to_owned(),
            3 => {
                let items: Vec<String> = (0..self.roll(4)).map(|_| self.value(depth + 1)).collect();
                format!("[{}]", items.join(","))
            }
            4 => {
                // Deep enough to pass or break the limits: 90 to 140 levels.
                let levels = 90 + self.roll(51) as usize;
                format!("{}{}", "[".repeat(levels), "]".repeat(levels))
            }
            _ => self.object(depth + 1),
        }
    }

    fn object(&mut self, depth: usize) -> String {
        let mut members = Vec::new();
        for _ in 0..self.roll(4) {
            let key = self.pick(&["a", "b", "c", r#"\u0061"#]);
            members.push(format!(r#""{key}":{}"#, self.value(depth)));
        }
        format!("{{{}}}", members.join(","))
    }
}

#[tokio::test]
async fn fuzzed_arguments_are_each_answered_at_once() {
    let mut server = fixture(&[]);
    // A line the child dropped would show as a timeout, after 2 s instead of 60.
    server["callTimeout"] = json!(2);
    let mut client =
        RawClient::start(&config(&[("dev", "Dev", json!({ "fixture": server }))])).await;
    client.open(1, "dev").await;
    let mut dice = Dice(0x2545_f491_4f6c_dd1d);
    let (mut echoed, mut refused) = (0, 0);
    for id in 2..2002 {
        let arguments = dice.object(1);
        client
            .send_line(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"fixture","name":"echo"}},"arguments":{arguments}}}}}}}"#
            ))
            .await;
        let answer: Value = client.next().await;
        assert_eq!(answer["id"], json!(id), "{arguments}: {answer}");
        let result = &answer["result"];
        if result["isError"] == json!(true) {
            let kind = &result["structuredContent"]["error"]["kind"];
            assert_eq!(kind, &json!("invalid_arguments"), "{arguments}: {answer}");
            refused += 1;
        } else {
            assert!(result["content"].is_array(), "{arguments}: {answer}");
            echoed += 1;
        }
    }
    // Both kinds occur, so the run says something about each.
    assert!(
        echoed > 200 && refused > 200,
        "{echoed} echoed, {refused} refused"
    );
}
