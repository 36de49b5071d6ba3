// Types for engram.mjs, engram's HTTP API client. The API's full contract is
// GET /openapi.json (internal/httpapi/openapi.json).

export type Kind = "fact" | "preference" | "rule" | "skill" | "error" | "context" | "identity";
export type Category = "identity" | "config" | "credential" | "decision" | "solution" | "event" | "conversation" | "temp" | "debug";
export type Status = "active" | "pending" | "snoozed" | "superseded" | "rejected" | "archived";

export interface Memory {
  id: string; namespace: string; user: string; agent?: string; tier: number;
  kind: Kind; category: Category; project?: string; topic?: string;
  subject: string; predicate: string; content: string;
  importance: number; confidence: number; status: Status;
  supersedes?: string; superseded_by?: string; source: string; session_id?: string;
  source_events: string[] | null; created: string; updated: string;
  valid_to?: string; last_accessed?: string; access_count: number; snoozed_until?: string;
}

export interface Change { memory_id: string; change: string; old?: string; new?: string; cause: string; time: string }

export interface SearchResult {
  id: string; kind: string; content: string; score: number;
  session_id?: string; turn_index: number; role?: string; time: string;
}

export interface ContextItem {
  id: string; kind: string; content: string; provenance: string; score: number; tokens: number;
  session_id?: string; turn_index?: number; time?: string; signals?: Record<string, number>;
}

export interface ContextResponse {
  retrieved: boolean; reason: string;
  blocks: Record<"profile" | "scratchpad" | "memories" | "episodes" | "turns" | "attachments", ContextItem[]>;
  rendered: string; tokens: number;
  budget: { total: number; profile: number; recent: number; long_term: number; reserve: number };
  degraded?: string[]; dropped?: string[];
}

export interface ContextOptions {
  namespace?: string; agent?: string; session_id?: string;
  recent_messages?: { role: string; content: string }[];
  budget_tokens?: number; preset?: "seed000" | "seed002" | "seed004"; budget?: "seed004" | "seed002" | "seed000";
  scoring?: "seed002" | "seed004"; max_evidence?: number; persona?: string;
  explain?: boolean; force?: boolean; model?: string; turn_limit?: number; lang?: string;
}

export interface IngestResponse {
  accepted: number; duplicates: number;
  results: { index: number; id?: string; status: "accepted" | "duplicate" | "conflict" | "invalid" | "failed" | "ok"; seq?: number }[];
}

export interface Written { event_id: string; seq: number; duplicate: boolean; memory_id?: string }

export interface Episode {
  id: string; session_id: string; summary: string; goal: string; outcome: string;
  started: string; ended: string; entities: string[] | null; tools: string[] | null; importance: number;
}

export interface Scratchpad {
  content: string; active_projects: string[] | null; current_focus: string;
  open_questions: string[] | null; next_steps: string[] | null; updated?: string; source: string;
}

export interface NewMemory {
  kind: Kind; category: Category; subject: string; predicate: string; content: string;
  importance?: number; confidence?: number; tier?: 1 | 2; project?: string; topic?: string;
}

export class EngramError extends Error {
  status: number; code: string; detail: string;
}

export interface EngramOptions {
  url?: string; token?: string; namespace?: string; source?: string; fetch?: typeof fetch;
}

type NS = { namespace?: string };

export class Engram {
  constructor(opts?: EngramOptions);
  sendEvents(events: object[]): Promise<IngestResponse>;
  turnEvent(user: string, sessionId: string, turnIndex: number, role: "user" | "assistant" | "system" | "tool", content: string, opts?: NS & Record<string, unknown>): object;
  recordTurn(user: string, sessionId: string, turnIndex: number, role: "user" | "assistant" | "system" | "tool", content: string, opts?: NS & Record<string, unknown>): Promise<IngestResponse>;
  endSession(user: string, sessionId: string, messageCount: number, opts?: NS & { reason?: string }): Promise<IngestResponse>;
  context(user: string, query: string, opts?: ContextOptions): Promise<ContextResponse>;
  search(user: string, q: string, opts?: NS & { limit?: number }): Promise<SearchResult[]>;
  memories(user: string, filters?: NS & { kind?: Kind; category?: Category; project?: string; topic?: string; status?: Status | "all"; as_of?: string; limit?: number }): Promise<Memory[]>;
  memory(user: string, id: string, opts?: NS): Promise<{ memory: Memory; history: Change[] }>;
  addMemory(user: string, memory: NewMemory, opts?: NS & { wait?: boolean; idempotencyKey?: string }): Promise<Written>;
  updateMemory(user: string, id: string, fields: Partial<Pick<Memory, "content" | "kind" | "category" | "subject" | "predicate" | "project" | "topic" | "importance" | "confidence">>, opts?: NS & { wait?: boolean }): Promise<Written>;
  deleteMemory(user: string, id: string, opts?: NS & { reason?: string; wait?: boolean }): Promise<Written>;
  pending(user: string, opts?: NS): Promise<Memory[]>;
  decidePending(user: string, id: string, action: "confirm" | "ignore" | "snooze", opts?: NS & { snoozeFor?: string; wait?: boolean }): Promise<Written>;
  episodes(user: string, opts?: NS & { q?: string; session?: string; limit?: number }): Promise<Episode[]>;
  scratchpad(user: string, opts?: NS): Promise<Scratchpad>;
  profile(user: string, opts?: NS): Promise<{ core: Memory[] | null; memory_md: string; user_md: string }>;
  ready(): Promise<boolean>;
}

/** The id the client gives an event it builds: its type's first word and a hash of type and data. */
export function eventId(type: string, data: unknown): string;
/** The hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string;
