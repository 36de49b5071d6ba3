// LangChain.js integration for engram: a retriever that hands a chain
// what engram knows that bears on a message, and a chat message history
// that records the conversation's turns in engram, which learns from them.
//
//   import { Engram } from "@engramhq/engram";
//   import { EngramRetriever, EngramChatMessageHistory } from "@engramhq/langchain";
//   const client = new Engram({ url: "http://127.0.0.1:7420" });
//   const retriever = new EngramRetriever({ client, user: "ana", sessionId: "s-1" });
//   const history = new EngramChatMessageHistory({ client, user: "ana", sessionId: "s-1" });
//
// Both take the client as an argument, so this package imports nothing of
// engram's and works with any client that has context() and recordTurn().
import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";

/** engram's context blocks, in the order a prompt reads them. */
export const BLOCKS = ["profile", "scratchpad", "memories", "episodes", "turns", "attachments", "window"];

/**
 * What engram knows that bears on a query (POST /v1/context), as
 * Documents: one per item of the blocks asked for (pageContent the item's
 * text; metadata its id, block, kind, provenance and score), or, with
 * rendered: true, one Document holding engram's own rendering of the whole
 * block, ready to put in a prompt as it is.
 */
export class EngramRetriever extends BaseRetriever {
  static lc_name() {
    return "EngramRetriever";
  }

  lc_namespace = ["engram", "retrievers"];

  constructor({ client, user, namespace, sessionId, budgetTokens, force, rendered = false,
    blocks = ["profile", "memories", "episodes"], ...fields }) {
    super(fields);
    if (!client) throw new Error("EngramRetriever: client is required (new Engram({ url }))");
    if (!user) throw new Error("EngramRetriever: user is required");
    Object.assign(this, { client, user, namespace, sessionId, budgetTokens, force, rendered, blocks });
  }

  async _getRelevantDocuments(query) {
    const ctx = await this.client.context(this.user, query, {
      namespace: this.namespace, session_id: this.sessionId, budget_tokens: this.budgetTokens, force: this.force,
    });
    if (this.rendered) {
      return [new Document({ pageContent: ctx.rendered, metadata: { retrieved: ctx.retrieved, reason: ctx.reason, tokens: ctx.tokens } })];
    }
    const docs = [];
    for (const block of this.blocks) {
      for (const item of ctx.blocks?.[block] ?? []) {
        docs.push(new Document({
          id: item.id,
          pageContent: item.content,
          metadata: { id: item.id, block, kind: item.kind, provenance: item.provenance, score: item.score },
        }));
      }
    }
    return docs;
  }
}

// roles maps LangChain's message types to engram's turn roles.
const roles = { human: "user", ai: "assistant", system: "system", tool: "tool", generic: "user" };

/**
 * A chat message history that records every message as a turn of a
 * session in engram (turn.recorded), so engram learns from the
 * conversation: what the user says is a memory within moments, and the
 * session is extracted and summarised when it goes quiet or endSession()
 * is called. The messages of this history are also kept here, for the
 * chain's own short-term window.
 */
export class EngramChatMessageHistory extends BaseListChatMessageHistory {
  static lc_name() {
    return "EngramChatMessageHistory";
  }

  lc_namespace = ["engram", "chat_history"];

  /** startIndex: the turn index of the next message, when a session goes on. */
  constructor({ client, user, sessionId, namespace, startIndex = 0, messages = [] }) {
    super();
    if (!client) throw new Error("EngramChatMessageHistory: client is required (new Engram({ url }))");
    if (!user || !sessionId) throw new Error("EngramChatMessageHistory: user and sessionId are required");
    Object.assign(this, { client, user, sessionId, namespace, next: startIndex, messages: [...messages] });
    /** What engram read in the user's latest message (the memories it wrote). */
    this.learned = [];
  }

  async getMessages() {
    return [...this.messages];
  }

  async addMessage(message) {
    const type = message.getType ? message.getType() : message._getType();
    const role = roles[type] ?? "user";
    const index = this.next;
    // The user's words: wait for the rules' reading, to know what engram
    // learned from them.
    const res = await this.client.recordTurn(this.user, this.sessionId, index, role, message.text ?? String(message.content),
      { namespace: this.namespace, wait: role === "user" ? "memories" : undefined });
    this.next = index + 1;
    if (role === "user") this.learned = res?.results?.[0]?.memories ?? [];
    this.messages.push(message);
  }

  /** Forgets this history's own copy; engram keeps the turns. */
  async clear() {
    this.messages = [];
  }

  /** Tells engram the session ended, so it extracts and summarises it now. */
  endSession(reason) {
    return this.client.endSession(this.user, this.sessionId, this.next, { reason, namespace: this.namespace });
  }
}
