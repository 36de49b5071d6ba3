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

__all__ = ["Engram", "EngramError", "event_id"]
__version__ = "0.1.0"

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

    def send_events(self, events):
        """Send CloudEvents (dicts); 202 means JetStream stored every one."""
        if len(events) == 1:
            return self._request("POST", "/v1/events", body=events[0], content_type=CE_JSON)
        return self._request("POST", "/v1/events", body=list(events), content_type=CE_BATCH)

    def turn_event(self, user, session_id, turn_index, role, content, namespace=None, **data):
        """A turn.recorded event. Its id is a hash of what it says
        (event_id), so sending it again is a duplicate, and another text for
        the same turn is another event: stored, never dropped as a
        duplicate of the first."""
        d = {"session_id": session_id, "turn_index": turn_index, "role": role, "content": content}
        d.update(data)
        return self._event("turn.recorded", user, d, id=event_id("turn.recorded", d), namespace=namespace)

    def record_turn(self, user, session_id, turn_index, role, content, namespace=None, **data):
        """Record one turn (role: user, assistant, system or tool). Extra
        keyword arguments go into the event's data (tool_calls, project, ...)."""
        return self.send_events([self.turn_event(user, session_id, turn_index, role, content, namespace, **data)])

    def end_session(self, user, session_id, message_count, reason=None, namespace=None):
        """Say a session ended, so engram extracts and summarises it now."""
        data = {"session_id": session_id, "message_count": message_count}
        if reason:
            data["reason"] = reason
        return self.send_events([self._event("session.ended", user, data, id=event_id("session.ended", data),
                                             namespace=namespace)])

    # --- reads ----------------------------------------------------------

    def context(self, user, query, session_id=None, budget_tokens=None, recent_messages=None, namespace=None, **kw):
        """The memory block for the next prompt: answer["rendered"] is the
        text, answer["blocks"] the items."""
        body = {"namespace": namespace or self.namespace, "user": user, "query": query}
        for k, v in (("session_id", session_id), ("budget_tokens", budget_tokens), ("recent_messages", recent_messages)):
            if v is not None:
                body[k] = v
        body.update(kw)
        return self._request("POST", "/v1/context", body=body)

    def search(self, user, q, limit=None, namespace=None):
        return self._request("GET", "/v1/search", self._scope(user, namespace, q=q, limit=limit))["results"]

    def memories(self, user, namespace=None, **filters):
        """Filters: kind, category, project, topic, status, as_of, limit."""
        return self._request("GET", "/v1/memories", self._scope(user, namespace, **filters))["memories"]

    def memory(self, user, memory_id, namespace=None):
        """{"memory": ..., "history": [...]}"""
        return self._request("GET", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""), self._scope(user, namespace))

    def pending(self, user, namespace=None):
        return self._request("GET", "/v1/pending", self._scope(user, namespace))["pending"]

    def episodes(self, user, q=None, session=None, limit=None, namespace=None):
        return self._request("GET", "/v1/episodes", self._scope(user, namespace, q=q, session=session, limit=limit))["episodes"]

    def scratchpad(self, user, namespace=None):
        return self._request("GET", "/v1/scratchpad", self._scope(user, namespace))["scratchpad"]

    def profile(self, user, namespace=None):
        """{"core": [...], "memory_md": "...", "user_md": "..."}"""
        return self._request("GET", "/v1/profile", self._scope(user, namespace))

    # --- writes by a person ---------------------------------------------

    def add_memory(self, user, kind, category, subject, predicate, content, importance=0.5, confidence=1.0,
                   wait=True, idempotency_key=None, namespace=None, **extra):
        body = {"namespace": namespace or self.namespace, "user": user, "kind": kind, "category": category,
                "subject": subject, "predicate": predicate, "content": content,
                "importance": importance, "confidence": confidence}
        body.update(extra)
        hdrs = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._request("POST", "/v1/memories", {"wait": "true" if wait else None}, body, headers=hdrs)

    def update_memory(self, user, memory_id, wait=True, namespace=None, **fields):
        return self._request("PATCH", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""),
                             self._scope(user, namespace, wait="true" if wait else None), fields)

    def delete_memory(self, user, memory_id, reason=None, wait=True, namespace=None):
        return self._request("DELETE", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""),
                             self._scope(user, namespace, reason=reason, wait="true" if wait else None))

    def decide_pending(self, user, memory_id, action, snooze_for=None, wait=True, namespace=None):
        """action: confirm, ignore or snooze (snooze_for such as "24h")."""
        body = {"for": snooze_for} if snooze_for else None
        return self._request("POST", "/v1/pending/%s/%s" % (urllib.parse.quote(memory_id, safe=""), action),
                             self._scope(user, namespace, wait="true" if wait else None), body)

    def put_scratchpad(self, user, content, wait=True, namespace=None, **fields):
        body = {"content": content}
        body.update(fields)
        return self._request("PUT", "/v1/scratchpad", self._scope(user, namespace, wait="true" if wait else None), body)

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
