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

  /**
   * A turn.recorded event. Its id is a hash of what it says (eventId), so
   * sending it again is a duplicate, and another text for the same turn is
   * another event: stored, never dropped as a duplicate of the first.
   */
  turnEvent(user, sessionId, turnIndex, role, content, { namespace, ...data } = {}) {
    const d = { session_id: sessionId, turn_index: turnIndex, role, content, ...data };
    return this.event("turn.recorded", user, d, { id: eventId("turn.recorded", d), namespace });
  }

  recordTurn(user, sessionId, turnIndex, role, content, { wait, ...opts } = {}) {
    return this.sendEvents([this.turnEvent(user, sessionId, turnIndex, role, content, opts)], { wait });
  }

  endSession(user, sessionId, messageCount, { reason, namespace } = {}) {
    const data = { session_id: sessionId, message_count: messageCount };
    if (reason) data.reason = reason;
    return this.sendEvents([this.event("session.ended", user, data, { id: eventId("session.ended", data), namespace })]);
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

/**
 * The id of an event the client derives from what it says: the event type's
 * first word and a hash of the type and data. The same event sent again
 * (a retry) is the same id, which engram stores once; any other event has
 * another id, so engram never takes it for a duplicate. (Reusing an id for
 * other content is answered 409.)
 */
export function eventId(type, data) {
  return `${type.split(".")[0]}-${sha256Hex(canonicalJSON([type, data])).slice(0, 32)}`;
}

// canonicalJSON is JSON with object keys sorted, so equal data hash alike
// whatever order its keys were written in.
function canonicalJSON(v) {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJSON(x) ?? "null").join(",")}]`;
  if (v !== null && typeof v === "object" && typeof v.toJSON !== "function") {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

// SHA-256, synchronous and without dependencies so that an event's id is
// ready where the event is built, in Node, Deno, Bun and browsers alike
// (crypto.subtle is asynchronous, node:crypto is Node's).
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const rotr = (x, n) => (x >>> n) | (x << (32 - n));

export function sha256Hex(text) {
  const msg = new TextEncoder().encode(text);
  const size = Math.ceil((msg.length + 9) / 64) * 64;
  const buf = new Uint8Array(size);
  buf.set(msg);
  buf[msg.length] = 0x80;
  const view = new DataView(buf.buffer);
  view.setUint32(size - 8, Math.floor(msg.length / 0x20000000)); // the length in bits, high word
  view.setUint32(size - 4, (msg.length * 8) >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  for (let off = 0; off < size; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  return Array.from(h, (x) => x.toString(16).padStart(8, "0")).join("");
}
