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
    const perUser = path !== "/v1/users";
    if (perUser && !sc.user) throw new Error("user: required (type it above, or pick one under Users)");
    const q = new URLSearchParams(perUser ? { namespace: sc.namespace, user: sc.user } : { namespace: sc.namespace });
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

  // ---- users ----

  async function loadUsers() {
    const out = await api("GET", "/v1/users", { prefix: $("users-prefix").value.trim(), limit: "200" });
    const rows = (out.users || []).map((u) => el("tr", { "data-user": u.user },
      el("td", { className: "content" }, u.user),
      el("td", { className: "num" }, String(u.memories)), el("td", { className: "num" }, String(u.pending)),
      el("td", { className: "num" }, String(u.sessions)), el("td", { className: "num" }, String(u.turns)),
      el("td", {}, fmtTime(u.last_seen)),
      el("td", {}, el("button", { type: "button", className: "use", onclick: run(() => useUser(u.user)) }, "Use"))));
    clear($("users-out"), rows.length
      ? table(["user", "memories", "pending", "sessions", "turns", "last seen", ""], rows)
      : el("p", {}, "No users in " + out.namespace + " yet."));
    status(rows.length + " users");
  }

  // useUser makes user the console's and shows their memories.
  async function useUser(user) {
    $("user").value = user;
    saveScope();
    if (location.hash !== "#memories") {
      location.hash = "#memories"; // showTab lists them
      return;
    }
    await listMemories();
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
    const hist = (out.history || []).map((h) => el("tr", {},
      el("td", {}, fmtTime(h.time)), el("td", {}, h.change),
      el("td", { className: "content" }, h.old || ""),
      el("td", { className: "content" }, h.new === h.old ? "(unchanged)" : h.new || ""),
      el("td", { className: "changes" }, changes(h)),
      el("td", { className: "meta" }, h.cause)));
    const facts = el("p", { className: "meta" },
      "id " + m.id + " · status " + m.status + " · tier " + m.tier + " · source " + m.source +
      " · created " + fmtTime(m.created) + " · updated " + fmtTime(m.updated) +
      (m.supersedes ? " · supersedes " + m.supersedes : "") + (m.superseded_by ? " · superseded by " + m.superseded_by : ""));
    clear($("memory-detail"), el("h2", {}, "Memory"), facts, form,
      el("h3", {}, "History"), hist.length ? table(["time", "change", "content before", "content after", "what else", "cause"], hist) : el("p", {}, "No changes."));
    $("memory-detail").scrollIntoView();
  }

  // changes lists a history entry's other fields ("kind: fact → preference")
  // and its note, one a line.
  function changes(h) {
    const lines = Object.entries(h.fields || {}).map(([k, d]) => k + ": " + (d.old || "—") + " → " + (d.new || "—"));
    if (h.note) lines.push(h.note);
    return lines.join("\n");
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

  // The charts: each a sum over the series of one metric, sampled every
  // 2 s while the tab is open; a rate is the counter's rise per second.
  const charts = [
    { id: "lag", title: "Projector lag", what: "events the read model has not applied", metric: "engram_projector_lag_events", alarm: (v) => v > 1000 },
    { id: "backlog", title: "Consumer backlog", what: "messages waiting, all durable consumers", metric: "engram_consumer_pending_messages", alarm: (v) => v > 1000 },
    { id: "dead", title: "Dead letters", what: "held, waiting for an operator", metric: "engram_dead_letters_messages", alarm: (v) => v > 0 },
    { id: "ingest", title: "Ingest rate", what: "events accepted per second", metric: "engram_events_accepted_total", rate: true, alarm: () => false },
  ];
  const samples = 60;
  const history = Object.fromEntries(charts.map((c) => [c.id, []]));
  let lastTotals = null;
  let opsTimer = null;

  // sums reads each chart's metric from /metrics text: the sum of its series.
  function sums(text) {
    const out = {};
    for (const c of charts) out[c.metric] = null;
    for (const line of text.split("\n")) {
      if (line.startsWith("#")) continue;
      const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (!m || !(m[1] in out)) continue;
      const v = Number(m[3]);
      if (Number.isFinite(v)) out[m[1]] = (out[m[1]] || 0) + v;
    }
    return out;
  }

  function record(text, at) {
    const s = sums(text);
    for (const c of charts) {
      let v = s[c.metric];
      if (c.rate) {
        const prev = lastTotals && lastTotals.values[c.metric];
        v = v === null || prev === null || prev === undefined ? null : Math.max(0, (v - prev) / ((at - lastTotals.at) / 1000));
      }
      if (v === null || (c.rate && !lastTotals)) continue;
      const h = history[c.id];
      h.push(v);
      if (h.length > samples) h.shift();
    }
    lastTotals = { at, values: s };
  }

  const SVG = "http://www.w3.org/2000/svg";

  function sparkline(values) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 120 30");
    svg.setAttribute("preserveAspectRatio", "none");
    const base = document.createElementNS(SVG, "line");
    for (const [k, v] of Object.entries({ x1: 0, y1: 29.5, x2: 120, y2: 29.5, class: "base" })) base.setAttribute(k, v);
    svg.append(base);
    // The line spans the box from the first sample held; the highest
    // value held (at least 1) is the top.
    const top = Math.max(1, ...values);
    const step = 120 / Math.max(1, values.length - 1);
    const pts = values.map((v, i) => (i * step).toFixed(1) + "," + (28 - (v / top) * 26).toFixed(1));
    if (pts.length === 1) pts.push("120," + pts[0].split(",")[1]);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", pts.join(" "));
    svg.append(line);
    return svg;
  }

  function drawCharts() {
    const fmt = (v) => (v === undefined ? "…" : v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));
    clear($("ops-charts"), ...charts.map((c) => {
      const h = history[c.id];
      const now = h[h.length - 1];
      return el("div", { className: "chart" + (now !== undefined && c.alarm(now) ? " alarm" : ""), "data-chart": c.id },
        el("h3", {}, c.title), el("div", { className: "value" }, fmt(now)), sparkline(h), el("p", { className: "what" }, c.what));
    }));
  }

  async function sampleOps() {
    const headers = {};
    if ($("token").value) headers["Authorization"] = "Bearer " + $("token").value;
    const r = await fetch("/metrics", { headers });
    if (!r.ok) throw new Error("/metrics: " + r.status);
    const text = await r.text();
    record(text, Date.now());
    drawCharts();
    return text;
  }

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
    clear($("ops-probes"), el("table", {}, el("tbody", {},
      el("tr", {}, el("th", {}, "/healthz"), el("td", { id: "ops-healthz" }, healthz)),
      el("tr", {}, el("th", {}, "/readyz"), el("td", { id: "ops-readyz" }, readyz)))));
    const text = await sampleOps();
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
    clear($("ops-out"), table(["metric", "labels", "value", "what"], rows));
    status("operations loaded");
    if (!opsTimer) {
      opsTimer = setInterval(() => {
        if ($("panel-operations").hidden) { clearInterval(opsTimer); opsTimer = null; return; }
        sampleOps().catch((e) => status(e.message, true));
      }, 2000);
    }
  }

  // ---- tabs and scope ----

  const loaders = {
    users: loadUsers, memories: listMemories, pending: loadPending, episodes: loadEpisodes,
    scratchpad: loadScratchpad, profile: loadProfile, operations: loadOps,
  };
  // Tabs that need no user chosen.
  const anyUser = new Set(["users", "operations"]);

  function showTab() {
    // With no user chosen yet, the console opens on the list of users.
    const tab = (location.hash || (scope().user ? "#memories" : "#users")).slice(1);
    const name = tab in loaders ? tab : "memories";
    for (const p of document.querySelectorAll(".panel")) p.hidden = p.id !== "panel-" + name;
    for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.tab === name);
    const load = loaders[name];
    if (load && (anyUser.has(name) || scope().user)) run(load)();
  }

  function saveScope() {
    for (const f of ["namespace", "user", "token"]) store.setItem("engram." + f, $(f).value.trim());
  }

  function init() {
    for (const f of ["namespace", "user", "token"]) {
      const v = store.getItem("engram." + f);
      if (v !== null) $(f).value = v;
    }
    $("scope").addEventListener("submit", run(async () => {
      saveScope();
      status("using " + scope().namespace + " / " + scope().user);
      showTab();
    }));
    $("users-form").addEventListener("submit", run(loadUsers));
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
