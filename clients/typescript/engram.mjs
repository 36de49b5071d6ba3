// A client for engram's HTTP API: no dependencies, for Node 18+, Deno, Bun
// and browsers (fetch). Types for TypeScript are in engram.d.ts.
//
//   import { Engram } from "./engram.mjs";
//   const mem = new Engram({ url: "http://127.0.0.1:7420", token: process.env.ENGRAM_TOKEN });
//   await mem.recordTurn("ana", "s-1", 0, "user", "I moved to Lisbon last spring");
//   const { rendered } = await mem.context("ana", "where do I live?");

/** An error answer from engram: HTTP status, code and message (naming the field at fault). */
export class EngramError extends Error {
  constructor(status, code, message) {
    super(`${code} (${status}): ${message}`);
    this.name = "EngramError";
    this.status = status;
    this.code = code;
    this.detail = message;
  }
}

export class Engram {
  constructor({ url = "http://127.0.0.1:7420", token, namespace = "default", source = "ts-client", fetch: f } = {}) {
    this.url = url.replace(/\/+$/, "");
    this.token = token || undefined;
    this.namespace = namespace;
    this.source = source;
    this.fetch = f || globalThis.fetch.bind(globalThis);
  }

  async request(method, path, { query, body, contentType = "application/json", headers = {} } = {}) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null) q.set(k, String(v));
    const hdrs = { Accept: "application/json", ...headers };
    if (body !== undefined) hdrs["Content-Type"] = contentType;
    if (this.token) hdrs.Authorization = `Bearer ${this.token}`;
    const qs = q.toString();
    const resp = await this.fetch(this.url + path + (qs ? `?${qs}` : ""), {
      method, headers: hdrs, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await resp.text();
    if (!resp.ok) {
      let err;
      try { err = JSON.parse(text).error; } catch { /* not JSON */ }
      throw new EngramError(resp.status, err?.code ?? `http_${resp.status}`, err?.message ?? text.slice(0, 500));
    }
    return text ? JSON.parse(text) : undefined;
  }

  scope(user, namespace, extra = {}) {
    return { namespace: namespace ?? this.namespace, user, ...extra };
  }

  event(type, user, data, { id, namespace } = {}) {
    return {
      specversion: "1.0", id: id ?? crypto.randomUUID(), source: this.source, type,
      namespace: namespace ?? this.namespace, user, time: new Date().toISOString(), data,
    };
  }

  /**
   * Send CloudEvents; resolves once JetStream has stored every one. wait "true" resolves once they are
   * readable; "memories" also once the rules have read each of the user's turns, with what they wrote.
   */
  sendEvents(events, { wait } = {}) {
    const query = { wait };
    if (events.length === 1) {
      return this.request("POST", "/v1/events", { query, body: events[0], contentType: "application/cloudevents+json" });
    }
    return this.request("POST", "/v1/events", { query, body: events, contentType: "application/cloudevents-batch+json" });
  }

  /** A turn.recorded event; its id comes from session, index and role, so a resend is harmless. */
  turnEvent(user, sessionId, turnIndex, role, content, { namespace, ...data } = {}) {
    return this.event("turn.recorded", user,
      { session_id: sessionId, turn_index: turnIndex, role, content, ...data },
      { id: `${this.source}-${sessionId}-${turnIndex}-${role}`, namespace });
  }

  recordTurn(user, sessionId, turnIndex, role, content, { wait, ...opts } = {}) {
    return this.sendEvents([this.turnEvent(user, sessionId, turnIndex, role, content, opts)], { wait });
  }

  endSession(user, sessionId, messageCount, { reason, namespace } = {}) {
    const data = { session_id: sessionId, message_count: messageCount };
    if (reason) data.reason = reason;
    return this.sendEvents([this.event("session.ended", user, data, { id: `${this.source}-${sessionId}-ended`, namespace })]);
  }

  /** The memory block for the next prompt: `rendered` is the text, `blocks` the items. */
  context(user, query, { namespace, ...opts } = {}) {
    return this.request("POST", "/v1/context", { body: { namespace: namespace ?? this.namespace, user, query, ...opts } });
  }

  async search(user, q, { limit, namespace } = {}) {
    return (await this.request("GET", "/v1/search", { query: this.scope(user, namespace, { q, limit }) })).results;
  }

  async memories(user, { namespace, ...filters } = {}) {
    return (await this.request("GET", "/v1/memories", { query: this.scope(user, namespace, filters) })).memories;
  }

  memory(user, id, { namespace } = {}) {
    return this.request("GET", `/v1/memories/${encodeURIComponent(id)}`, { query: this.scope(user, namespace) });
  }

  /** memory: the fact in plain words, or its fields; what is left out is read from the words. */
  addMemory(user, memory, { wait = true, idempotencyKey, namespace } = {}) {
    if (typeof memory === "string") memory = { content: memory };
    return this.request("POST", "/v1/memories", {
      query: { wait: wait ? "true" : undefined },
      body: { importance: 0.5, confidence: 1, ...memory, namespace: namespace ?? this.namespace, user },
      headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {},
    });
  }

  updateMemory(user, id, fields, { wait = true, namespace } = {}) {
    return this.request("PATCH", `/v1/memories/${encodeURIComponent(id)}`,
      { query: this.scope(user, namespace, { wait: wait ? "true" : undefined }), body: fields });
  }

  deleteMemory(user, id, { reason, wait = true, namespace } = {}) {
    return this.request("DELETE", `/v1/memories/${encodeURIComponent(id)}`,
      { query: this.scope(user, namespace, { reason, wait: wait ? "true" : undefined }) });
  }

  async pending(user, { namespace } = {}) {
    return (await this.request("GET", "/v1/pending", { query: this.scope(user, namespace) })).pending;
  }

  decidePending(user, id, action, { snoozeFor, wait = true, namespace } = {}) {
    return this.request("POST", `/v1/pending/${encodeURIComponent(id)}/${action}`, {
      query: this.scope(user, namespace, { wait: wait ? "true" : undefined }),
      body: snoozeFor ? { for: snoozeFor } : undefined,
    });
  }

  async episodes(user, { q, session, limit, namespace } = {}) {
    return (await this.request("GET", "/v1/episodes", { query: this.scope(user, namespace, { q, session, limit }) })).episodes;
  }

  async scratchpad(user, { namespace } = {}) {
    return (await this.request("GET", "/v1/scratchpad", { query: this.scope(user, namespace) })).scratchpad;
  }

  profile(user, { namespace } = {}) {
    return this.request("GET", "/v1/profile", { query: this.scope(user, namespace) });
  }

  async users({ namespace, prefix, limit } = {}) {
    return (await this.request("GET", "/v1/users", { query: { namespace: namespace ?? this.namespace, prefix, limit } })).users;
  }

  async ready() {
    try { return (await this.request("GET", "/readyz")).status === "ok"; } catch { return false; }
  }
}
