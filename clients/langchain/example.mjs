// An agent loop in LangChain.js with engram as its memory: each message of
// the user's is recorded in engram (which learns from it at once), engram's
// block of what bears on it goes into the prompt, the model answers, and the
// answer is recorded; at the end the session is ended, so engram extracts
// and summarises it.
//
//   ENGRAM_URL=http://127.0.0.1:7420 LLM_BASE_URL=http://localhost:11434/v1 LLM_MODEL=qwen2.5 \
//     node example.mjs --user ana "I moved to Porto last spring" "where do I live?"
//
// Any OpenAI-compatible endpoint works (LLM_API_KEY when it needs one).
import { Engram } from "@engramhq/engram";
import { EngramChatMessageHistory, EngramRetriever } from "@engramhq/langchain";
import { ChatOpenAI } from "@langchain/openai";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { HumanMessage } from "@langchain/core/messages";
import { RunnablePassthrough, RunnableSequence } from "@langchain/core/runnables";

const args = process.argv.slice(2);
const userAt = args.indexOf("--user");
if (userAt < 0 || !args[userAt + 1]) {
  console.error('usage: node example.mjs --user USER "message" ["message" …]');
  process.exit(2);
}
const user = args[userAt + 1];
const messages = args.filter((_, i) => i !== userAt && i !== userAt + 1);
const sessionId = `langchain-${Date.now().toString(36)}`;

const client = new Engram({ url: process.env.ENGRAM_URL, token: process.env.ENGRAM_TOKEN, source: "langchain-example" });
const history = new EngramChatMessageHistory({ client, user, sessionId });
// rendered: engram's own block, written to be read by a model.
const retriever = new EngramRetriever({ client, user, sessionId, rendered: true });
const model = new ChatOpenAI({
  model: process.env.LLM_MODEL ?? "gpt-4o-mini",
  apiKey: process.env.LLM_API_KEY || "none",
  configuration: { baseURL: process.env.LLM_BASE_URL },
  temperature: 0,
});
const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are a helpful assistant. What you remember about the user:\n{memory}"],
  new MessagesPlaceholder("history"),
]);
const chain = RunnableSequence.from([
  RunnablePassthrough.assign({
    memory: async ({ question }) => (await retriever.invoke(question)).map((d) => d.pageContent).join("\n"),
    history: () => history.getMessages(),
  }),
  prompt,
  model,
]);

for (const text of messages) {
  console.log(`> ${text}`);
  await history.addMessage(new HumanMessage(text));
  for (const m of history.learned) console.log(`  [engram learned: ${m.content} (${m.kind})]`);
  const reply = await chain.invoke({ question: text });
  await history.addMessage(reply);
  console.log(reply.text);
}
await history.endSession("example finished");
console.log(`session ${sessionId} ended after ${messages.length * 2} messages`);
