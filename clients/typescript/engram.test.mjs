// Tests of engram.mjs against a real engram at ENGRAM_URL (ENGRAM_TOKEN
// when it has tokens): `node --test`. `make test` runs them from the Go
// test internal/app.TestTypeScriptClient, which starts an engram.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Engram, EngramError, eventId, sha256Hex } from "./engram.mjs";

const url = process.env.ENGRAM_URL;
const opts = { skip: url ? false : "ENGRAM_URL is not set: no engram to test against" };
const mem = new Engram({ url, token: process.env.ENGRAM_TOKEN });
// Each test has its own user: what one records (and engram extracts from
// it) is not another's business.
const newUser = () => `ts-${Math.random().toString(36).slice(2, 10)}`;

async function waitFor(what, cond) {
  const deadline = Date.now() + 20000;
  for (;;) {
    const got = await cond();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("turns, search, context, end of session", opts, async () => {
  const user = newUser();
  assert.equal((await mem.recordTurn(user, "s1", 0, "user", "我住在杭州，喜欢喝龙井茶")).accepted, 1);
  assert.equal((await mem.recordTurn(user, "s1", 0, "user", "我住在杭州，喜欢喝龙井茶")).duplicates, 1);
  // Another text for the same turn is another write: stored, not a duplicate.
  assert.equal((await mem.recordTurn(user, "s0", 0, "user", "first text")).accepted, 1);
  assert.equal((await mem.recordTurn(user, "s0", 0, "user", "second text")).accepted, 1);
  const batch = await mem.sendEvents([
    mem.turnEvent(user, "s1", 1, "assistant", "好的，记住了。"),
    mem.turnEvent(user, "s1", 2, "user", "I also write Go at work"),
  ]);
  assert.equal(batch.accepted, 2);
  const hits = await waitFor("search", async () => { const r = await mem.search(user, "杭州"); return r.length ? r : null; });
  assert.ok(hits.some((h) => h.kind === "turn"), JSON.stringify(hits));
  const ctx = await mem.context(user, "where do I live?", { session_id: "s1", force: true });
  assert.equal(typeof ctx.rendered, "string");
  assert.equal(typeof ctx.budget.total, "number");
  assert.equal((await mem.endSession(user, "s1", 3)).accepted, 1);
});

test("memories: add, update, read, forget", opts, async () => {
  const user = newUser();
  const { memory_id: id } = await mem.addMemory(user, { kind: "preference", category: "identity", subject: "user", predicate: "drinks", content: "drinks oolong tea" });
  assert.deepEqual((await mem.memories(user, { kind: "preference" })).map((m) => m.id), [id]);
  await mem.updateMemory(user, id, { content: "drinks oolong and jasmine tea" });
  const { memory, history } = await mem.memory(user, id);
  assert.match(memory.content, /jasmine/);
  assert.ok(history.length >= 2);
  assert.match((await mem.profile(user)).memory_md, /jasmine/);
  await mem.deleteMemory(user, id, { reason: "test" });
  assert.deepEqual(await mem.memories(user, { kind: "preference" }), []);
  assert.deepEqual(await mem.pending(user), []);
  assert.ok(Array.isArray(await mem.episodes(user)));
  assert.equal((await mem.scratchpad(user)).updated, undefined);
  assert.ok(await mem.ready());
});

// Needs no engram: the ids the client derives.
test("event ids: the same event alike, any other event apart", () => {
  for (const text of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "x".repeat(1000), "我住在杭州，喜欢喝龙井茶 🍵"]) {
    assert.equal(sha256Hex(text), createHash("sha256").update(text, "utf8").digest("hex"), `sha256 of ${text.length} chars`);
  }
  const turn = { session_id: "s1", turn_index: 0, role: "user", content: "I moved to Lisbon" };
  assert.equal(eventId("turn.recorded", turn), eventId("turn.recorded", { content: "I moved to Lisbon", role: "user", turn_index: 0, session_id: "s1" }));
  assert.notEqual(eventId("turn.recorded", turn), eventId("turn.recorded", { ...turn, content: "I moved to Porto" }));
  assert.match(eventId("turn.recorded", turn), /^turn-[0-9a-f]{32}$/);
  const a = mem.turnEvent("ana", "s1", 0, "user", "hi"), b = mem.turnEvent("ana", "s1", 0, "user", "hi there");
  assert.notEqual(a.id, b.id);
  assert.equal(a.id, mem.turnEvent("ana", "s1", 0, "user", "hi").id);
});

test("errors name the field", opts, async () => {
  const user = newUser();
  await assert.rejects(mem.addMemory(user, { kind: "feeling", category: "identity", subject: "user", predicate: "is", content: "happy" }),
    (e) => e instanceof EngramError && e.status === 400 && e.code === "invalid" && /kind/.test(e.detail));
  await assert.rejects(mem.memory(user, "m_nope"), (e) => e instanceof EngramError && e.code === "not_found");
  if (process.env.ENGRAM_TOKEN) {
    await assert.rejects(new Engram({ url, token: "wrong-token-0123456789" }).search(user, "x"),
      (e) => e instanceof EngramError && e.code === "unauthorized");
  }
});

test("the package exports the client by its name", async () => {
  // A package may import itself by its name: this reads package.json's exports.
  const pkg = await import("@engramhq/engram");
  assert.equal(pkg.Engram, Engram);
  assert.equal(pkg.EngramError, EngramError);
});

test("plain text, what a turn taught, the users", opts, async () => {
  const user = newUser();
  const { memory_id: id } = await mem.addMemory(user, "I'm vegetarian");
  const { memory } = await mem.memory(user, id);
  assert.equal(memory.content, "I'm vegetarian");
  const r = await mem.recordTurn(user, "s2", 0, "user", "我住在北京市朝阳区，平时喜欢喝美式咖啡。", { wait: "memories" });
  assert.equal(r.results[0].extraction, "done");
  assert.ok(r.results[0].memories.some((m) => m.content.includes("美式咖啡")), JSON.stringify(r.results[0]));
  assert.deepEqual((await mem.users({ prefix: user })).map((u) => u.user), [user]);
});
