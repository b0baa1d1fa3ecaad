// Counts the o200k_base tokens (the tokenizer of OpenAI's GPT-4o and later models; gpt-tokenizer,
// pinned in tests/interop) of each text of the JSON array on stdin; prints a JSON array of counts.
// Run from anywhere: the package is resolved from the interop folder the tests install.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const root = process.env.TOOLSHELF_INTEROP ?? new URL("../../target/interop/", import.meta.url).pathname;
const require = createRequire(root + "package.json");
const { encode } = require("gpt-tokenizer/encoding/o200k_base");
const texts = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(texts.map((text) => encode(text).length)));
