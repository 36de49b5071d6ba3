// engram console: plain JavaScript over engram's own HTTP API. Every piece
// of stored text reaches the page through textContent or a form field's
// value: no string is ever parsed as HTML.
"use strict";

(function () {
  const store = window.localStorage;
  const $ = (id) => document.getElementById(id);

  // el builds an element: attrs are properties or data-/aria- attributes,
  // children are nodes or strings (added as text).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k.startsWith("data-") || k.startsWith("aria-")) e.setAttribute(k, String(v));
      else if (k === "onclick") e.addEventListener("click", v);
      else e[k] = v;
    }
    for (const c of children) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function clear(node, ...children) {
    node.replaceChildren(...children);
  }

  function status(text, isError) {
    const s = $("status");
    s.textContent = text;
    s.className = isError ? "error" : "ok";
  }

  function scope() {
    return { namespace: $("namespace").value.trim() || "default", user: $("user").value.trim() };
  }

  // api calls engram with the scope and the token; it answers the parsed
  // JSON body or throws an Error carrying the API's own message.
  async function api(method, path, params, body) {
    const sc = scope();
    if (!sc.user) throw new Error("user: required (type it above)");
    const q = new URLSearchParams({ namespace: sc.namespace, user: sc.user });
    for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== undefined) q.set(k, v);
    const headers = {};
    const tok = $("token").value;
    if (tok) headers["Authorization"] = "Bearer " + tok;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const resp = await fetch(path + "?" + q.toString(), {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try { data = await resp.json(); } catch (_) { /* not JSON */ }
    if (!resp.ok) {
      const msg = data && data.error ? data.error.code + ": " + data.error.message : resp.status + " " + resp.statusText;
      const err = new Error(method + " " + path + ": " + msg);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // run wraps an action: its errors land in the status line.
  function run(fn) {
    return async (ev) => {
      if (ev && ev.preventDefault) ev.preventDefault();
      try { await fn(ev); } catch (e) { status(e.message, true); }
    };
  }

  const fmtTime = (t) => (t ? String(t).replace("T", " ").replace(/\.\d+/, "") : "");
  const num = (x) => (typeof x === "number" ? x.toFixed(2) : "");

  function table(headers, rows) {
    return el("table", {},
      el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows));
  }

  // ---- memories ----

  // A search and a list share one panel: an answer that comes back after a
  // newer request was made is dropped, so a slow search never replaces
  // the list asked for after it.
  let memoriesAsked = 0;

  async function search() {
    const q = $("search-q").value.trim();
    if (!q) throw new Error("search: type some words first");
    const asked = ++memoriesAsked;
    const out = await api("GET", "/v1/search", { q, limit: "50" });
    if (asked !== memoriesAsked) return;
    const rows = (out.results || []).map((r) => el("tr", { "data-id": r.id },
      el("td", {}, r.kind),
      el("td", { className: "content" }, r.content),
      el("td", {}, num(r.score)),
      el("td", {}, r.session_id || ""),
      el("td", {}, r.kind === "memory" ? el("button", { type: "button", className: "view", onclick: run(() => showMemory(r.id)) }, "View") : "")));
    clear($("memories-out"), el("h2", {}, "Search: " + q), rows.length ? table(["kind", "content", "score", "session", ""], rows) : el("p", {}, "Nothing found."));
    status(rows.length + " results");
  }

  async function listMemories() {
    const params = { status: $("list-status").value, kind: $("list-kind").value, as_of: $("list-asof").value.trim(), limit: "200" };
    const asked = ++memoriesAsked;
    const out = await api("GET", "/v1/memories", params);
    if (asked !== memoriesAsked) return;
    const rows = (out.memories || []).map((m) => el("tr", { "data-id": m.id },
      el("td", { className: "content" }, m.content),
      el("td", {}, m.kind), el("td", {}, m.category), el("td", {}, m.status),
      el("td", {}, num(m.confidence)), el("td", {}, fmtTime(m.updated)),
      el("td", {}, el("button", { type: "button", className: "view", onclick: run(() => showMemory(m.id)) }, "View"))));
    const title = "Memories (" + params.status + (params.as_of ? ", as of " + params.as_of : "") + ")";
    clear($("memories-out"), el("h2", {}, title),
      rows.length ? table(["content", "kind", "category", "status", "confidence", "updated", ""], rows) : el("p", {}, "None."));
    status(rows.length + " memories");
  }

  const editable = ["content", "kind", "category", "subject", "predicate", "project", "topic", "importance", "confidence"];

  async function showMemory(id) {
    const out = await api("GET", "/v1/memories/" + encodeURIComponent(id));
    const m = out.memory;
    const form = el("form", { id: "memory-edit", "data-id": m.id });
    for (const f of editable) {
      const val = m[f] === undefined || m[f] === null ? "" : String(m[f]);
      const input = f === "content"
        ? el("textarea", { name: f, id: "edit-" + f, rows: 3, value: val })
        : el("input", { name: f, id: "edit-" + f, value: val, autocomplete: "off" });
      input.dataset.original = val;
      form.append(el("label", { className: "block" }, f, input));
    }
    const save = el("button", { type: "submit", id: "memory-save" }, "Save");
    const del = el("button", { type: "button", id: "memory-delete", className: "danger" }, "Delete");
    del.addEventListener("click", run(async () => {
      if (del.dataset.armed !== "yes") { // a second click deletes: no modal dialog
        del.dataset.armed = "yes";
        del.textContent = "Really delete?";
        return;
      }
      await api("DELETE", "/v1/memories/" + encodeURIComponent(m.id), { wait: "true" });
      clear($("memory-detail"));
      await listMemories();
      status("deleted " + m.id);
    }));
    form.append(save, " ", del);
    form.addEventListener("submit", run(async () => {
      const patch = {};
      for (const f of editable) {
        const input = form.elements[f];
        if (input.value === input.dataset.original) continue;
        patch[f] = f === "importance" || f === "confidence" ? Number(input.value) : input.value;
      }
      if (Object.keys(patch).length === 0) { status("nothing changed"); return; }
      await api("PATCH", "/v1/memories/" + encodeURIComponent(m.id), { wait: "true" }, patch);
      status("saved " + m.id);
      await showMemory(m.id);
    }));
    const hist = (out.history || []).map((h) => {
      const [o, n] = changed(h.old, h.new);
      return el("tr", {},
      el("td", {}, fmtTime(h.time)), el("td", {}, h.change),
      el("td", { className: "content" }, o), el("td", { className: "content" }, n),
      el("td", { className: "meta" }, h.cause));
    });
    const facts = el("p", { className: "meta" },
      "id " + m.id + " · status " + m.status + " · tier " + m.tier + " · source " + m.source +
      " · created " + fmtTime(m.created) + " · updated " + fmtTime(m.updated) +
      (m.supersedes ? " · supersedes " + m.supersedes : "") + (m.superseded_by ? " · superseded by " + m.superseded_by : ""));
    clear($("memory-detail"), el("h2", {}, "Memory"), facts, form,
      el("h3", {}, "History"), hist.length ? table(["time", "change", "old", "new", "cause"], hist) : el("p", {}, "No changes."));
    $("memory-detail").scrollIntoView();
  }

  // changed shows, of two snapshots of a memory (JSON), only the fields
  // that differ, as "field: value" lines; other text as it is.
  function changed(oldText, newText) {
    const parse = (x) => { try { const v = JSON.parse(x); return v && typeof v === "object" ? v : null; } catch (_) { return null; } };
    const o = parse(oldText), n = parse(newText);
    if (!o || !n) return [oldText || "", newText || ""];
    const keys = [...new Set([...Object.keys(o), ...Object.keys(n)])]
      .filter((k) => k !== "updated" && JSON.stringify(o[k]) !== JSON.stringify(n[k]));
    const show = (v) => (typeof v === "string" ? v : JSON.stringify(v));
    return [keys.map((k) => k + ": " + show(o[k])).join("\n"), keys.map((k) => k + ": " + show(n[k])).join("\n")];
  }

  // ---- pending ----

  async function loadPending() {
    const out = await api("GET", "/v1/pending");
    const decide = (m, action) => run(async () => {
      const body = action === "snooze" ? { for: $("snooze-for").value.trim() || "24h" } : undefined;
      await api("POST", "/v1/pending/" + encodeURIComponent(m.id) + "/" + action, { wait: "true" }, body);
      await loadPending();
      status(action + " " + m.id);
    });
    const rows = (out.pending || []).map((m) => el("tr", { "data-id": m.id },
      el("td", { className: "content" }, m.content),
      el("td", {}, m.kind), el("td", {}, num(m.confidence)), el("td", {}, m.status),
      el("td", { className: "actions" },
        el("button", { type: "button", className: "confirm", onclick: decide(m, "confirm") }, "Confirm"),
        el("button", { type: "button", className: "ignore", onclick: decide(m, "ignore") }, "Ignore"),
        el("button", { type: "button", className: "snooze", onclick: decide(m, "snooze") }, "Snooze"))));
    clear($("pending-out"), rows.length ? table(["content", "kind", "confidence", "status", ""], rows) : el("p", { id: "pending-empty" }, "Nothing waiting."));
    status(rows.length + " pending");
    try {
      const f = await api("GET", "/v1/consolidation/pending");
      const fr = (f.pending || []).map((p) => el("tr", { "data-id": p.id },
        el("td", {}, p.rule), el("td", { className: "content" }, p.description), el("td", {}, p.event_type), el("td", {}, fmtTime(p.time)),
        el("td", { className: "actions" },
          el("button", { type: "button", onclick: run(async () => { await api("POST", "/v1/consolidation/pending/" + encodeURIComponent(p.id) + "/approve"); await loadPending(); }) }, "Approve"),
          el("button", { type: "button", onclick: run(async () => { await api("POST", "/v1/consolidation/pending/" + encodeURIComponent(p.id) + "/dismiss"); await loadPending(); }) }, "Dismiss"))));
      clear($("firings-out"), fr.length ? table(["rule", "description", "event", "time", ""], fr) : el("p", {}, "None."));
    } catch (e) {
      clear($("firings-out"), el("p", { className: "meta" }, e.status === 404 ? "This engram runs no consolidator." : e.message));
    }
  }

  // ---- episodes ----

  async function loadEpisodes() {
    const out = await api("GET", "/v1/episodes", { q: $("episodes-q").value.trim(), session: $("episodes-session").value.trim(), limit: "100" });
    const items = (out.episodes || []).map((e) => el("article", { className: "episode", "data-id": e.id },
      el("h3", {}, e.goal || e.summary.slice(0, 80)),
      el("p", { className: "meta" }, "session " + e.session_id + " · " + (e.outcome || "") + " · " + fmtTime(e.started) + " – " + fmtTime(e.ended) + " · " + e.source),
      el("p", {}, e.summary),
      (e.actions || []).length ? el("ol", {}, ...e.actions.map((a) => el("li", {},
        (a.tool ? a.tool + ": " : "") + (a.params || a.decision || "") + (a.result ? " → " + a.result : "") + (a.error ? " ✗ " + a.error : "")))) : null,
      (e.entities || []).length ? el("p", { className: "meta" }, "entities: " + e.entities.join(", ")) : null,
      (e.tools || []).length ? el("p", { className: "meta" }, "tools: " + e.tools.join(", ")) : null));
    clear($("episodes-out"), ...(items.length ? items : [el("p", {}, "No episodes.")]));
    status(items.length + " episodes");
  }

  // ---- scratchpad ----

  const lines = (s) => s.split("\n").map((x) => x.trim()).filter((x) => x);

  async function loadScratchpad() {
    const p = (await api("GET", "/v1/scratchpad")).scratchpad || {};
    $("sp-content").value = p.content || "";
    $("sp-focus").value = p.current_focus || "";
    $("sp-projects").value = (p.active_projects || []).join("\n");
    $("sp-questions").value = (p.open_questions || []).join("\n");
    $("sp-steps").value = (p.next_steps || []).join("\n");
    $("scratchpad-meta").textContent = p.updated ? "updated " + fmtTime(p.updated) + (p.source ? " by " + p.source : "") : "empty";
    status("scratchpad loaded");
  }

  async function saveScratchpad() {
    await api("PUT", "/v1/scratchpad", { wait: "true" }, {
      content: $("sp-content").value, current_focus: $("sp-focus").value.trim(),
      active_projects: lines($("sp-projects").value), open_questions: lines($("sp-questions").value), next_steps: lines($("sp-steps").value),
    });
    await loadScratchpad();
    status("scratchpad saved");
  }

  // ---- profile ----

  async function loadProfile() {
    const p = await api("GET", "/v1/profile");
    const core = (p.core || []).map((m) => el("li", { "data-id": m.id }, m.content, el("span", { className: "meta" }, " · " + m.kind + " · " + m.category)));
    clear($("profile-core"), core.length ? el("ul", {}, ...core) : el("p", {}, "No core memories."));
    $("profile-memory-md").textContent = p.memory_md || "";
    $("profile-user-md").textContent = p.user_md || "";
    status("profile loaded");
  }

  // ---- operations ----

  const opsMetrics = [
    ["engram_projector_lag_events", "events the read model has not applied"],
    ["engram_dead_letters_messages", "dead letters held"],
    ["engram_dead_lettered_total", "moved to dead letters by this process, by consumer"],
    ["engram_consumer_pending_messages", "backlog, by durable consumer"],
    ["engram_consumer_ack_pending_messages", "delivered, not yet acknowledged, by consumer"],
    ["engram_extraction_backlog_requests", "extraction requests waiting"],
    ["engram_events_accepted_total", "events accepted, by path and type"],
    ["engram_state_up", "1 when the stream's state could be read"],
  ];

  async function loadOps() {
    const probe = async (path) => {
      try {
        const r = await fetch(path);
        const b = await r.json();
        return r.status + " " + b.status + (b.reason ? " — " + b.reason : "");
      } catch (e) { return "unreachable: " + e.message; }
    };
    const [healthz, readyz] = await Promise.all([probe("/healthz"), probe("/readyz")]);
    const out = [el("table", {}, el("tbody", {},
      el("tr", {}, el("th", {}, "/healthz"), el("td", { id: "ops-healthz" }, healthz)),
      el("tr", {}, el("th", {}, "/readyz"), el("td", { id: "ops-readyz" }, readyz))))];
    const headers = {};
    if ($("token").value) headers["Authorization"] = "Bearer " + $("token").value;
    const r = await fetch("/metrics", { headers });
    if (!r.ok) throw new Error("/metrics: " + r.status);
    const text = await r.text();
    const rows = [];
    for (const [name, what] of opsMetrics) {
      for (const line of text.split("\n")) {
        if (line.startsWith("#") || !(line.startsWith(name + " ") || line.startsWith(name + "{"))) continue;
        const sp = line.lastIndexOf(" ");
        const series = line.slice(0, sp);
        const labels = series.length > name.length ? series.slice(name.length) : "";
        rows.push(el("tr", { "data-metric": name }, el("td", {}, name), el("td", {}, labels), el("td", { className: "num" }, line.slice(sp + 1)), el("td", { className: "meta" }, what)));
      }
    }
    out.push(el("h2", {}, "Stream and consumers"), table(["metric", "labels", "value", "what"], rows));
    clear($("ops-out"), ...out);
    status("operations loaded");
  }

  // ---- tabs and scope ----

  const loaders = {
    memories: null, pending: loadPending, episodes: loadEpisodes,
    scratchpad: loadScratchpad, profile: loadProfile, operations: loadOps,
  };

  function showTab() {
    const tab = (location.hash || "#memories").slice(1);
    const name = tab in loaders ? tab : "memories";
    for (const p of document.querySelectorAll(".panel")) p.hidden = p.id !== "panel-" + name;
    for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.tab === name);
    const load = loaders[name];
    if (load && (name === "operations" || scope().user)) run(load)();
  }

  function init() {
    for (const f of ["namespace", "user", "token"]) {
      const v = store.getItem("engram." + f);
      if (v !== null) $(f).value = v;
    }
    $("scope").addEventListener("submit", run(async () => {
      for (const f of ["namespace", "user", "token"]) store.setItem("engram." + f, $(f).value.trim());
      status("using " + scope().namespace + " / " + scope().user);
      showTab();
    }));
    $("search-form").addEventListener("submit", run(search));
    $("list-form").addEventListener("submit", run(listMemories));
    $("pending-reload").addEventListener("click", run(loadPending));
    $("episodes-form").addEventListener("submit", run(loadEpisodes));
    $("scratchpad-form").addEventListener("submit", run(saveScratchpad));
    $("sp-reload").addEventListener("click", run(loadScratchpad));
    $("profile-reload").addEventListener("click", run(loadProfile));
    $("ops-reload").addEventListener("click", run(loadOps));
    window.addEventListener("hashchange", showTab);
    showTab();
    document.body.dataset.ready = "yes";
  }

  init();
})();
