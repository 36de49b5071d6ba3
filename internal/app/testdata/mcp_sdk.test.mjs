// engram's MCP server driven by the official TypeScript SDK, as an agent
// host would: list the tools, read their schemas, remember in plain text,
// recall. The SDK's client checks every structuredContent against the
// tool's outputSchema (and fails the call when it does not fit).
// internal/app.TestMCPTypeScriptSDK starts engram and runs this with
// ENGRAM_MCP_URL and ENGRAM_TOKEN.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.ENGRAM_MCP_URL;
const user = `mcp-sdk-${Math.random().toString(36).slice(2, 8)}`;

async function connect() {
  const client = new Client({ name: "engram-sdk-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.ENGRAM_TOKEN}` } },
  });
  await client.connect(transport);
  // Listing the tools is what has the client check every answer against
  // its tool's output schema from then on.
  const { tools } = await client.listTools();
  for (const t of tools) assert.ok(client.getToolOutputValidator(t.name), `${t.name}: the SDK holds no output validator`);
  return client;
}

// call calls a tool, fails on a tool error, and answers its structured
// content (which the SDK has checked against the output schema).
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name} answered no structuredContent`);
  return res;
}

test("every tool says when to call it, with enums, required fields and an output schema", async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ["remember", "recall", "search", "list_memories", "get_memory", "update_memory", "forget_memory", "pending", "episodes"]) {
      const t = byName[name];
      assert.ok(t, `no tool ${name}`);
      assert.ok(t.description.length >= 100, `${name}: description too terse: ${t.description}`);
      assert.match(t.description, /\bCall\b|\bcall\b/, `${name}: the description does not say when to call it`);
      assert.equal(t.inputSchema.type, "object");
      assert.ok(t.inputSchema.required?.includes("user"), `${name}: user is not required: ${JSON.stringify(t.inputSchema.required)}`);
      assert.equal(t.outputSchema?.type, "object", `${name}: no output schema`);
      for (const [prop, p] of Object.entries(t.inputSchema.properties)) {
        assert.ok(p.description, `${name}.${prop} has no description`);
      }
    }
    const enumOf = (tool, prop) => byName[tool].inputSchema.properties[prop].enum;
    assert.deepEqual(enumOf("remember", "kind"), ["fact", "preference", "rule", "skill", "error", "context", "identity"]);
    assert.ok(enumOf("remember", "category").includes("identity"));
    assert.deepEqual(enumOf("remember", "role"), ["user", "assistant", "system", "tool"]);
    assert.ok(enumOf("list_memories", "status").includes("superseded"));
    assert.deepEqual(enumOf("pending", "action"), ["confirm", "ignore", "snooze"]);
    assert.deepEqual(byName.remember.inputSchema.required.sort(), ["content", "user"]);
    assert.deepEqual(byName.recall.inputSchema.required.sort(), ["query", "user"]);
    assert.ok(byName.recall.annotations?.readOnlyHint);
    assert.ok(byName.forget_memory.annotations?.destructiveHint);
  } finally {
    await client.close();
  }
});

test("remember in plain text, then recall brings it back", async () => {
  const client = await connect();
  try {
    const stored = await call(client, "remember", { user, content: "I'm vegetarian and allergic to peanuts" });
    const id = stored.structuredContent.memory_id;
    assert.match(id, /^m_/, JSON.stringify(stored.structuredContent));

    const got = await call(client, "get_memory", { user, id });
    const m = got.structuredContent.memory;
    assert.equal(m.content, "I'm vegetarian and allergic to peanuts");
    assert.equal(m.status, "active");
    assert.equal(m.source, "manual");

    // With a kind given, and one read from the words.
    await call(client, "remember", { user, content: "Prefers answers in Chinese", kind: "preference" });
    const moved = await call(client, "remember", { user, content: "I live in Porto" });
    const where = (await call(client, "get_memory", { user, id: moved.structuredContent.memory_id })).structuredContent.memory;
    assert.equal(where.predicate, "location", JSON.stringify(where));

    const recalled = await call(client, "recall", { user, query: "Am I vegetarian? What should I avoid eating?", force: true });
    assert.match(recalled.structuredContent.rendered, /vegetarian/);
    const text = recalled.content.map((c) => c.text).join("\n");
    assert.match(text, /vegetarian/, "the block is in the text content too");

    const prefs = await call(client, "list_memories", { user, kind: "preference" });
    assert.deepEqual(prefs.structuredContent.memories.map((x) => x.content), ["Prefers answers in Chinese"]);
  } finally {
    await client.close();
  }
});

test("remember a turn answers the memories engram read in it", async () => {
  const client = await connect();
  try {
    const res = await call(client, "remember", {
      user, session_id: "sdk-1", turn_index: 0, role: "user", content: "我住在北京市朝阳区，平时喜欢喝美式咖啡。",
    });
    const r = res.structuredContent.results[0];
    assert.equal(r.extraction, "done", JSON.stringify(res.structuredContent));
    assert.ok(r.memories.some((m) => m.content.includes("美式咖啡")), JSON.stringify(r.memories));
    const hits = await call(client, "search", { user, q: "咖啡" });
    assert.ok(hits.structuredContent.results.length > 0);
    const pending = await call(client, "pending", { user });
    assert.ok(Array.isArray(pending.structuredContent.pending));
    const eps = await call(client, "episodes", { user });
    assert.ok(Array.isArray(eps.structuredContent.episodes));
  } finally {
    await client.close();
  }
});

test("bad input is refused by the schema, naming the field", async () => {
  const client = await connect();
  try {
    const noUser = await client.callTool({ name: "recall", arguments: { query: "hi" } });
    assert.ok(noUser.isError);
    assert.match(noUser.content[0].text, /user/);
    const badKind = await client.callTool({ name: "remember", arguments: { user, content: "x", kind: "opinion" } });
    assert.ok(badKind.isError);
    assert.match(badKind.content[0].text, /kind/);
    const noIndex = await client.callTool({ name: "remember", arguments: { user, content: "x", session_id: "s" } });
    assert.ok(noIndex.isError);
    assert.match(noIndex.content[0].text, /turn_index/);
  } finally {
    await client.close();
  }
});
