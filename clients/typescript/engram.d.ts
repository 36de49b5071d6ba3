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
  /** When the fact was said (its turn's time); learned_at when engram learned it. */
  said_at?: string; learned_at?: string;
  valid_to?: string; last_accessed?: string; access_count: number; snoozed_until?: string;
}

/** One entry of a memory's history, one shape for every change: old and new are the content before and after. */
export interface Change {
  memory_id: string;
  change: "created" | "merged" | "superseded" | "updated" | "confirmed" | "ignored" | "snoozed" | "dropped" | "archived" | "deleted";
  old?: string; new?: string;
  /** The other fields the change changed, each before and after, as text. */
  fields?: Record<string, { old: string; new: string }>;
  /** The newer memory, the words said again, a reason, until when. */
  note?: string;
  cause: string;
  /** When what caused the change was said; time is when engram learned it. */
  said_at?: string; time: string;
}

export interface SearchResult {
  id: string; kind: string; content: string; score: number;
  session_id?: string; turn_index: number; role?: string; time: string;
}

export interface ContextItem {
  id: string; kind: string; content: string; provenance: string; score: number; tokens: number;
  session_id?: string; turn_index?: number; time?: string; signals?: Record<string, number>;
}

export interface ContextBlocks {
  profile: ContextItem[] | null; scratchpad: ContextItem[] | null; memories: ContextItem[] | null;
  episodes: ContextItem[] | null; turns: ContextItem[] | null; attachments: ContextItem[] | null;
  /** With session_id: that session's summary (kind "summary") and latest turns, oldest first. */
  window?: ContextItem[] | null;
}

export interface ContextResponse {
  retrieved: boolean; reason: string;
  blocks: ContextBlocks;
  rendered: string; tokens: number;
  budget: { total: number; profile: number; recent: number; long_term: number; reserve: number };
  degraded?: string[]; dropped?: string[];
  /** Asked for (onboarding: true, or the seed004 preset) while the user has not confirmed who the agent and they are (seed 004 §3). */
  onboarding?: { ask: string[]; send: string };
}

export interface ContextOptions {
  namespace?: string; agent?: string; session_id?: string;
  recent_messages?: { role: string; content: string }[];
  budget_tokens?: number; preset?: "seed000" | "seed002" | "seed004"; budget?: "seed004" | "seed002" | "seed000";
  scoring?: "seed002" | "seed004"; max_evidence?: number; persona?: string;
  explain?: boolean; force?: boolean; model?: string; turn_limit?: number; lang?: string; onboarding?: boolean;
}

export interface ApiError { code: string; message: string }

export interface EventResult {
  index: number; id?: string; status: "accepted" | "duplicate" | "conflict" | "invalid" | "failed" | "ok"; seq?: number;
  error?: ApiError;
  /** With wait "memories", for a turn: done (memories is what the rules read in it), pending, or none. */
  extraction?: "done" | "pending" | "none";
  memories?: Memory[];
}

export interface IngestResponse {
  accepted: number; duplicates: number; results: EventResult[];
  error?: ApiError;
}

export interface Written { event_id: string; seq: number; duplicate: boolean; memory_id?: string }

export interface ActionNode {
  tool?: string; params?: string; result?: string; success?: boolean; error?: string; decision?: string; turn?: number;
}

export interface Episode {
  id: string; namespace?: string; user?: string; session_id: string; summary: string; goal: string; outcome: string;
  started: string; ended: string; actions: ActionNode[] | null; entities: string[] | null; tools: string[] | null;
  linked_memories: string[] | null; importance: number; source: string; turns: number[] | null; access_count?: number;
}

/** A user of a namespace and what engram holds of them (GET /v1/users). */
export interface UserSummary {
  user: string; memories: number; pending: number; sessions: number; turns: number; last_seen: string;
}

export interface Scratchpad {
  content: string; active_projects: string[] | null; current_focus: string;
  open_questions: string[] | null; next_steps: string[] | null; updated?: string; source: string;
  /** The episode engram wrote it from (source "episode"). */
  episode_id?: string;
}

/** The latest nightly report (seed 000 §7.4 step 8). */
export interface Report {
  date: string; since: string; until: string; episodes: number; learned: number; superseded: number;
  merged: number; archived: number; days_compressed: number; pending: number; traits?: string[]; text: string;
}

/** GET /v1/profile: the core memories and the cards. */
export interface Profile {
  core: Memory[] | null; memory_md: string; user_md: string; agent_md: string; project_md: string; insights_md: string;
  identity_confirmed: boolean; report?: Report;
}

/** GET /healthz and /readyz (with ?partition=K: whose copy serves it). */
export interface Probe { status: "ok" | "unavailable"; reason?: string; partition?: number; served_by?: string }

/** Only content is needed: what is left out is read from the words, as the rules read the user saying them. */
export interface NewMemory {
  content: string; kind?: Kind; category?: Category; subject?: string; predicate?: string;
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
  sendEvents(events: object[], opts?: { wait?: "true" | "memories" }): Promise<IngestResponse>;
  turnEvent(user: string, sessionId: string, turnIndex: number, role: "user" | "assistant" | "system" | "tool", content: string, opts?: NS & Record<string, unknown>): object;
  /** wait "memories" answers once the rules have read the turn, with the memories they wrote (results[0].memories). */
  recordTurn(user: string, sessionId: string, turnIndex: number, role: "user" | "assistant" | "system" | "tool", content: string, opts?: NS & { wait?: "true" | "memories" } & Record<string, unknown>): Promise<IngestResponse>;
  endSession(user: string, sessionId: string, messageCount: number, opts?: NS & { reason?: string }): Promise<IngestResponse>;
  context(user: string, query: string, opts?: ContextOptions): Promise<ContextResponse>;
  search(user: string, q: string, opts?: NS & { limit?: number }): Promise<SearchResult[]>;
  memories(user: string, filters?: NS & { kind?: Kind; category?: Category; project?: string; topic?: string; status?: Status | "all"; as_of?: string; limit?: number }): Promise<Memory[]>;
  memory(user: string, id: string, opts?: NS): Promise<{ memory: Memory; history: Change[] }>;
  addMemory(user: string, memory: NewMemory | string, opts?: NS & { wait?: boolean; idempotencyKey?: string }): Promise<Written>;
  updateMemory(user: string, id: string, fields: Partial<Pick<Memory, "content" | "kind" | "category" | "subject" | "predicate" | "project" | "topic" | "importance" | "confidence">>, opts?: NS & { wait?: boolean }): Promise<Written>;
  deleteMemory(user: string, id: string, opts?: NS & { reason?: string; wait?: boolean }): Promise<Written>;
  pending(user: string, opts?: NS): Promise<Memory[]>;
  decidePending(user: string, id: string, action: "confirm" | "ignore" | "snooze", opts?: NS & { snoozeFor?: string; wait?: boolean }): Promise<Written>;
  episodes(user: string, opts?: NS & { q?: string; session?: string; limit?: number }): Promise<Episode[]>;
  scratchpad(user: string, opts?: NS): Promise<Scratchpad>;
  profile(user: string, opts?: NS): Promise<Profile>;
  /** The namespace's users with their counts, the most recently seen first. */
  users(opts?: NS & { prefix?: string; limit?: number }): Promise<UserSummary[]>;
  ready(): Promise<boolean>;
}

/** The id the client gives an event it builds: its type's first word and a hash of type and data. */
export function eventId(type: string, data: unknown): string;
/** The hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string;
