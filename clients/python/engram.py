"""A client for engram's HTTP API, using only the Python standard library.

    from engram import Engram

    mem = Engram("http://127.0.0.1:7420", token=None)     # or ENGRAM_URL, ENGRAM_TOKEN
    mem.record_turn("ana", "s-1", 0, "user", "I moved to Lisbon last spring")
    block = mem.context("ana", "where do I live?")         # the memory block for the prompt
    print(block["rendered"])
    mem.end_session("ana", "s-1", message_count=2)

Every method returns the decoded JSON answer; an error answer raises
EngramError with engram's code ("invalid", "not_found", ...) and message,
which names the field at fault. Python 3.8 or later.
"""

import hashlib
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from typing import Dict, List, Optional

try:
    from typing import TypedDict
except ImportError:  # Python 3.7: the types below are documentation only
    TypedDict = dict

__all__ = ["Engram", "EngramError", "event_id", "Memory", "Change", "SearchResult", "ContextItem", "ContextResponse",
           "IngestResponse", "EventResult", "Written", "Episode", "Scratchpad", "Profile", "UserSummary"]
__version__ = "0.1.0"


# The shapes of engram's answers (GET /openapi.json is the contract; a test
# holds these to it). Every method returns plain dicts of these shapes.

class ApiError(TypedDict, total=False):
    code: str
    message: str


class Memory(TypedDict, total=False):
    id: str
    namespace: str
    user: str
    agent: str
    tier: int
    kind: str  # fact, preference, rule, skill, error, context, identity
    category: str  # identity, config, credential, decision, solution, event, conversation, temp, debug
    project: str
    topic: str
    subject: str
    predicate: str
    content: str
    importance: float
    confidence: float
    status: str  # active, pending, snoozed, superseded, rejected, archived
    supersedes: str
    superseded_by: str
    source: str  # rules, llm, manual
    session_id: str
    source_events: Optional[List[str]]
    created: str
    updated: str
    said_at: str  # when the fact was said (its turn's time)
    learned_at: str  # when engram learned it
    valid_to: str
    last_accessed: str
    access_count: int
    snoozed_until: str


class Delta(TypedDict):
    old: str
    new: str


class Change(TypedDict, total=False):
    """One entry of a memory's history, one shape for every change: old and
    new are the content before and after; fields the other fields changed."""
    memory_id: str
    change: str  # created, merged, superseded, updated, confirmed, ignored, snoozed, dropped, archived, deleted
    old: str
    new: str
    fields: Dict[str, Delta]
    note: str
    cause: str
    said_at: str  # when what caused the change was said
    time: str  # when engram learned it


class MemoryWithHistory(TypedDict):
    memory: Memory
    history: List[Change]


class SearchResult(TypedDict, total=False):
    id: str
    kind: str  # memory, turn, daily
    content: str
    score: float
    session_id: str
    turn_index: int
    role: str
    time: str


class ContextItem(TypedDict, total=False):
    id: str
    kind: str
    content: str
    provenance: str
    score: float
    tokens: int
    session_id: str
    turn_index: int
    time: str
    signals: Dict[str, float]


class ContextBlocks(TypedDict, total=False):
    profile: Optional[List[ContextItem]]
    scratchpad: Optional[List[ContextItem]]
    memories: Optional[List[ContextItem]]
    episodes: Optional[List[ContextItem]]
    turns: Optional[List[ContextItem]]
    attachments: Optional[List[ContextItem]]
    window: Optional[List[ContextItem]]  # with session_id: its summary, then its latest turns


class Budget(TypedDict):
    total: int
    profile: int
    recent: int
    long_term: int
    reserve: int


class Onboarding(TypedDict):
    ask: List[str]
    send: str  # the event to send once settled: identity.confirmed


class ContextResponse(TypedDict, total=False):
    retrieved: bool
    reason: str
    blocks: ContextBlocks
    rendered: str  # the block to put in the prompt
    tokens: int
    budget: Budget
    degraded: Optional[List[str]]
    dropped: Optional[List[str]]
    onboarding: "Onboarding"  # asked for: seed 004 §3's first meeting


class EventResult(TypedDict, total=False):
    index: int
    id: str
    status: str  # accepted, duplicate, invalid, failed, ok
    seq: int
    error: ApiError
    extraction: str  # with wait="memories": done, pending or none
    memories: List[Memory]


class IngestResponse(TypedDict, total=False):
    accepted: int
    duplicates: int
    results: List[EventResult]
    error: ApiError


class Written(TypedDict, total=False):
    event_id: str
    seq: int
    duplicate: bool
    memory_id: str


class ActionNode(TypedDict, total=False):
    tool: str
    params: str
    result: str
    success: bool
    error: str
    decision: str
    turn: int


class Episode(TypedDict, total=False):
    id: str
    namespace: str
    user: str
    session_id: str
    summary: str
    goal: str
    outcome: str
    started: str
    ended: str
    actions: Optional[List[ActionNode]]
    entities: Optional[List[str]]
    tools: Optional[List[str]]
    linked_memories: Optional[List[str]]
    importance: float
    source: str
    turns: Optional[List[int]]
    access_count: int


class Scratchpad(TypedDict, total=False):
    content: str
    active_projects: Optional[List[str]]
    current_focus: str
    open_questions: Optional[List[str]]
    next_steps: Optional[List[str]]
    updated: str
    source: str
    episode_id: str  # the episode engram wrote it from (source "episode")


class Report(TypedDict, total=False):
    date: str
    since: str
    until: str
    episodes: int
    learned: int
    superseded: int
    merged: int
    archived: int
    days_compressed: int
    pending: int
    traits: List[str]
    text: str


class Profile(TypedDict, total=False):
    core: Optional[List[Memory]]
    memory_md: str
    user_md: str
    agent_md: str
    project_md: str
    insights_md: str
    identity_confirmed: bool
    report: Report  # the latest nightly report


class UserSummary(TypedDict, total=False):
    user: str
    memories: int
    pending: int
    sessions: int
    turns: int
    last_seen: str


class Probe(TypedDict, total=False):
    status: str
    reason: str
    partition: int  # with ?partition=K
    served_by: str  # the retriever whose copy of the partition serves

CE_JSON = "application/cloudevents+json"
CE_BATCH = "application/cloudevents-batch+json"


def event_id(type_, data):
    """The id the client gives an event it builds: the type's first word
    and a hash of the type and data. The same event sent again (a retry)
    has the same id, which engram stores once; any other event has another
    id, so engram never takes it for a duplicate. (Reusing an id for other
    content is answered 409.)"""
    canonical = json.dumps([type_, data], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "%s-%s" % (type_.split(".")[0], hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32])


class EngramError(Exception):
    """An error answer from engram: HTTP status, code and message."""

    def __init__(self, status, code, message):
        super().__init__("%s (%d): %s" % (code, status, message))
        self.status, self.code, self.message = status, code, message


class Engram:
    """engram's HTTP API. namespace is the default for every call."""

    def __init__(self, url=None, token=None, namespace="default", source="python-client", timeout=30.0):
        self.url = (url or os.environ.get("ENGRAM_URL") or "http://127.0.0.1:7420").rstrip("/")
        self.token = token if token is not None else os.environ.get("ENGRAM_TOKEN") or None
        self.namespace = namespace
        self.source = source
        self.timeout = timeout

    # --- plumbing -------------------------------------------------------

    def _request(self, method, path, query=None, body=None, content_type="application/json", headers=None):
        q = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.url + path + ("?" + urllib.parse.urlencode(q) if q else "")
        data = None
        hdrs = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            hdrs["Content-Type"] = content_type
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        hdrs.update(headers or {})
        req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw.decode("utf-8"))["error"]
                raise EngramError(e.code, err.get("code", ""), err.get("message", "")) from None
            except (ValueError, KeyError, TypeError):
                raise EngramError(e.code, "http_%d" % e.code, raw.decode("utf-8", "replace")[:500]) from None
        return json.loads(raw.decode("utf-8")) if raw else None

    def _scope(self, user, namespace=None, **extra):
        q = {"namespace": namespace or self.namespace, "user": user}
        q.update(extra)
        return q

    def _event(self, type_, user, data, id=None, namespace=None, time_=None):
        return {
            "specversion": "1.0",
            "id": id or str(uuid.uuid4()),
            "source": self.source,
            "type": type_,
            "namespace": namespace or self.namespace,
            "user": user,
            "time": time_ or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": data,
        }

    # --- events ---------------------------------------------------------

    def send_events(self, events, wait=None) -> IngestResponse:
        """Send CloudEvents (dicts); 202 means JetStream stored every one.
        wait="true" answers once they are readable; wait="memories" also once
        the rules have read each of the user's turns, with the memories they
        wrote in each result's "memories"."""
        q = {"wait": wait}
        if len(events) == 1:
            return self._request("POST", "/v1/events", q, body=events[0], content_type=CE_JSON)
        return self._request("POST", "/v1/events", q, body=list(events), content_type=CE_BATCH)

    def turn_event(self, user, session_id, turn_index, role, content, namespace=None, **data):
        """A turn.recorded event. Its id is a hash of what it says
        (event_id), so sending it again is a duplicate, and another text for
        the same turn is another event: stored, never dropped as a
        duplicate of the first."""
        d = {"session_id": session_id, "turn_index": turn_index, "role": role, "content": content}
        d.update(data)
        return self._event("turn.recorded", user, d, id=event_id("turn.recorded", d), namespace=namespace)

    def record_turn(self, user, session_id, turn_index, role, content, namespace=None, wait=None, **data) -> IngestResponse:
        """Record one turn (role: user, assistant, system or tool). Extra
        keyword arguments go into the event's data (tool_calls, project, ...).
        wait="memories" answers with what the rules read in the turn."""
        return self.send_events([self.turn_event(user, session_id, turn_index, role, content, namespace, **data)], wait=wait)

    def end_session(self, user, session_id, message_count, reason=None, namespace=None) -> IngestResponse:
        """Say a session ended, so engram extracts and summarises it now."""
        data = {"session_id": session_id, "message_count": message_count}
        if reason:
            data["reason"] = reason
        return self.send_events([self._event("session.ended", user, data, id=event_id("session.ended", data),
                                             namespace=namespace)])

    # --- reads ----------------------------------------------------------

    def context(self, user, query, session_id=None, budget_tokens=None, recent_messages=None, namespace=None,
                **kw) -> ContextResponse:
        """The memory block for the next prompt: answer["rendered"] is the
        text, answer["blocks"] the items."""
        body = {"namespace": namespace or self.namespace, "user": user, "query": query}
        for k, v in (("session_id", session_id), ("budget_tokens", budget_tokens), ("recent_messages", recent_messages)):
            if v is not None:
                body[k] = v
        body.update(kw)
        return self._request("POST", "/v1/context", body=body)

    def search(self, user, q, limit=None, namespace=None) -> List[SearchResult]:
        return self._request("GET", "/v1/search", self._scope(user, namespace, q=q, limit=limit))["results"]

    def memories(self, user, namespace=None, **filters) -> List[Memory]:
        """Filters: kind, category, project, topic, status, as_of, limit."""
        return self._request("GET", "/v1/memories", self._scope(user, namespace, **filters))["memories"]

    def memory(self, user, memory_id, namespace=None) -> MemoryWithHistory:
        """{"memory": ..., "history": [...]}"""
        return self._request("GET", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""), self._scope(user, namespace))

    def pending(self, user, namespace=None) -> List[Memory]:
        return self._request("GET", "/v1/pending", self._scope(user, namespace))["pending"]

    def episodes(self, user, q=None, session=None, limit=None, namespace=None) -> List[Episode]:
        return self._request("GET", "/v1/episodes", self._scope(user, namespace, q=q, session=session, limit=limit))["episodes"]

    def scratchpad(self, user, namespace=None) -> Scratchpad:
        return self._request("GET", "/v1/scratchpad", self._scope(user, namespace))["scratchpad"]

    def profile(self, user, namespace=None) -> Profile:
        """{"core": [...], "memory_md": "...", "user_md": "..."}"""
        return self._request("GET", "/v1/profile", self._scope(user, namespace))

    # --- writes by a person ---------------------------------------------

    def add_memory(self, user, kind=None, category=None, subject=None, predicate=None, content=None, importance=0.5,
                   confidence=1.0, wait=True, idempotency_key=None, namespace=None, **extra) -> Written:
        """Write a memory. Only content is needed (remember("ana", "I'm
        vegetarian") reads best): what is left out of kind, category, subject
        and predicate is read from the words as the rules read the user saying
        them."""
        body = {"namespace": namespace or self.namespace, "user": user, "content": content,
                "importance": importance, "confidence": confidence}
        for k, v in (("kind", kind), ("category", category), ("subject", subject), ("predicate", predicate)):
            if v is not None:
                body[k] = v
        body.update(extra)
        hdrs = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._request("POST", "/v1/memories", {"wait": "true" if wait else None}, body, headers=hdrs)

    def remember(self, user, content, namespace=None, **fields) -> Written:
        """Keep a fact in plain words, as it is: remember("ana", "I'm vegetarian")."""
        return self.add_memory(user, content=content, namespace=namespace, **fields)

    def update_memory(self, user, memory_id, wait=True, namespace=None, **fields) -> Written:
        return self._request("PATCH", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""),
                             self._scope(user, namespace, wait="true" if wait else None), fields)

    def delete_memory(self, user, memory_id, reason=None, wait=True, namespace=None) -> Written:
        return self._request("DELETE", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""),
                             self._scope(user, namespace, reason=reason, wait="true" if wait else None))

    def decide_pending(self, user, memory_id, action, snooze_for=None, wait=True, namespace=None) -> Written:
        """action: confirm, ignore or snooze (snooze_for such as "24h")."""
        body = {"for": snooze_for} if snooze_for else None
        return self._request("POST", "/v1/pending/%s/%s" % (urllib.parse.quote(memory_id, safe=""), action),
                             self._scope(user, namespace, wait="true" if wait else None), body)

    def put_scratchpad(self, user, content, wait=True, namespace=None, **fields) -> Written:
        body = {"content": content}
        body.update(fields)
        return self._request("PUT", "/v1/scratchpad", self._scope(user, namespace, wait="true" if wait else None), body)

    def users(self, prefix=None, limit=None, namespace=None) -> List[UserSummary]:
        """The namespace's users with their counts, the most recently seen first."""
        q = {"namespace": namespace or self.namespace, "prefix": prefix, "limit": limit}
        return self._request("GET", "/v1/users", q)["users"]

    # --- probes ---------------------------------------------------------

    def healthy(self):
        try:
            return self._request("GET", "/healthz")["status"] == "ok"
        except (EngramError, OSError):
            return False

    def ready(self):
        try:
            return self._request("GET", "/readyz")["status"] == "ok"
        except (EngramError, OSError):
            return False
