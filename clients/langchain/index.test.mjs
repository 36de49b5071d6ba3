// Tests of the LangChain.js integration against a real engram at
// ENGRAM_URL and an OpenAI-compatible model at LLM_BASE_URL (engram's
// tests script one): `node --test`. internal/app.TestLangChainAdapter
// starts both, installs @langchain/core and @langchain/openai from npm
// and runs this file and example.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Engram } from "@engramhq/engram";
import { EngramChatMessageHistory, EngramRetriever, BLOCKS } from "@engramhq/langchain";
import { ChatOpenAI } from "@langchain/openai";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { RunnablePassthrough, RunnableSequence } from "@langchain/core/runnables";

const client = new Engram({ url: process.env.ENGRAM_URL, token: process.env.ENGRAM_TOKEN });
const newUser = () => `lc-${Math.random().toString(36).slice(2, 10)}`;

test("the history records turns in engram, which learns from the user's at once", async () => {
  const user = newUser();
  const history = new EngramChatMessageHistory({ client, user, sessionId: "s1" });
  await history.addMessage(new HumanMessage("我住在北京市朝阳区，平时喜欢喝美式咖啡。"));
  assert.ok(history.learned.some((m) => m.content.includes("美式咖啡")), JSON.stringify(history.learned));
  await history.addMessage(new AIMessage("好的，记住了。"));
  assert.equal((await history.getMessages()).length, 2);
  const hits = await client.search(user, "朝阳区");
  assert.ok(hits.some((h) => h.kind === "turn" && h.role === "user"), JSON.stringify(hits));
  assert.equal((await history.endSession()).accepted, 1);
});

test("the retriever answers engram's memories as Documents, in a chain with a model", async () => {
  const user = newUser();
  const history = new EngramChatMessageHistory({ client, user, sessionId: "s1" });
  await history.addMessage(new HumanMessage("I live in Porto and I prefer green tea"));
  const retriever = new EngramRetriever({ client, user, force: true });
  const docs = await retriever.invoke("what tea do I like?");
  const tea = docs.find((d) => d.pageContent.includes("green tea"));
  assert.ok(tea, JSON.stringify(docs));
  // A strong preference is in the user's core profile from the start.
  assert.ok(["profile", "memories"].includes(tea.metadata.block), JSON.stringify(tea.metadata));
  assert.ok(BLOCKS.includes(tea.metadata.block));
  assert.match(tea.metadata.id, /^m_/);

  const model = new ChatOpenAI({ model: process.env.LLM_MODEL, apiKey: "test", configuration: { baseURL: process.env.LLM_BASE_URL } });
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "What you remember about the user:\n{memory}"],
    ["human", "{question}"],
  ]);
  const chain = RunnableSequence.from([
    RunnablePassthrough.assign({ memory: async ({ question }) => (await retriever.invoke(question)).map((d) => d.pageContent).join("\n") }),
    prompt, model, new StringOutputParser(),
  ]);
  const answer = await chain.invoke({ question: "what tea do I like? (langchain-chain)" });
  assert.equal(answer, process.env.LLM_ANSWER);
});

test("rendered: one Document with engram's block", async () => {
  const user = newUser();
  await client.addMemory(user, "Prefers answers in Chinese");
  const [doc, ...rest] = await new EngramRetriever({ client, user, rendered: true, force: true }).invoke("how should you answer?");
  assert.equal(rest.length, 0);
  assert.match(doc.pageContent, /Prefers answers in Chinese/);
  assert.equal(doc.metadata.retrieved, true);
});

test("bad construction names what is missing", () => {
  assert.throws(() => new EngramRetriever({ user: "x" }), /client is required/);
  assert.throws(() => new EngramChatMessageHistory({ client, user: "x" }), /sessionId are required/);
});
