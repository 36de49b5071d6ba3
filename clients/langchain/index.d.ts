// Types for index.mjs, engram's LangChain.js integration.
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import type { DocumentInterface } from "@langchain/core/documents";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import type { Engram, IngestResponse, Memory } from "@engramhq/engram";

export type Block = "profile" | "scratchpad" | "memories" | "episodes" | "turns" | "attachments" | "window";
export declare const BLOCKS: Block[];

export interface EngramRetrieverInput extends BaseRetrieverInput {
  client: Pick<Engram, "context">;
  user: string;
  namespace?: string;
  /** The conversation, for its latest turns (the window and turns blocks). */
  sessionId?: string;
  budgetTokens?: number;
  /** Retrieve even when the query looks like it needs no memory. */
  force?: boolean;
  /** One Document holding engram's rendering of the whole block (default false: one per item). */
  rendered?: boolean;
  /** Which blocks' items become Documents (default profile, memories, episodes). */
  blocks?: Block[];
}

export interface EngramDocumentMetadata {
  id: string; block: Block; kind: string; provenance: string; score: number;
}

export declare class EngramRetriever extends BaseRetriever<EngramDocumentMetadata> {
  constructor(input: EngramRetrieverInput);
  _getRelevantDocuments(query: string): Promise<DocumentInterface<EngramDocumentMetadata>[]>;
}

export interface EngramChatMessageHistoryInput {
  client: Pick<Engram, "recordTurn" | "endSession">;
  user: string;
  sessionId: string;
  namespace?: string;
  /** The turn index of the next message, when a session goes on. */
  startIndex?: number;
  messages?: BaseMessage[];
}

export declare class EngramChatMessageHistory extends BaseListChatMessageHistory {
  constructor(input: EngramChatMessageHistoryInput);
  /** What engram read in the user's latest message: the memories it wrote. */
  learned: Memory[];
  getMessages(): Promise<BaseMessage[]>;
  addMessage(message: BaseMessage): Promise<void>;
  clear(): Promise<void>;
  endSession(reason?: string): Promise<IngestResponse>;
}
