// Usage: node mkcalib.mjs KIND=FILE... > ../calib.txt
//
// Builds the calibration corpus: each file is cut at blank lines into
// samples of about 1 KB, each introduced by "=== KIND".
import { readFileSync } from "node:fs";

const target = 1024;
for (const arg of process.argv.slice(2)) {
  const [kind, file] = arg.split("=");
  const paras = readFileSync(file, "utf8").replace(/\r\n/g, "\n").split(/\n{2,}/);
  let cur = "";
  const flush = () => {
    if (cur.trim() !== "") console.log(`=== ${kind}\n${cur}`);
    cur = "";
  };
  for (const p of paras) {
    if (/^=== \S+$/m.test(p)) throw new Error(`${file}: a line looks like a sample header`);
    cur = cur === "" ? p : `${cur}\n\n${p}`;
    if (Buffer.byteLength(cur, "utf8") >= target) flush();
  }
  flush();
}
