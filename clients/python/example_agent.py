#!/usr/bin/env python3
"""An agent loop with engram as its memory, in the standard library only.

For each user message: record it (engram answers with what it learned from
it at once), ask engram for the memory block, answer with the block in the
prompt, record the answer; at the end, end the session so engram extracts
and summarises it.

    python3 example_agent.py --user ana                 # type messages; an empty line ends
    python3 example_agent.py --user ana "hi" "I live in Lisbon"

With LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY) set to an OpenAI-compatible
endpoint, the answers come from that model; without, the agent just says
what engram put in front of it, and records nothing of its own: a
placeholder is not something the assistant said, and engram would otherwise
keep it as a turn, find it in searches and summarise it into episodes.
engram is at ENGRAM_URL (default http://127.0.0.1:7420), with ENGRAM_TOKEN
when it has tokens.
"""

import argparse
import json
import os
import sys
import urllib.request
import uuid

from engram import Engram


def answer(system, history):
    """The model's answer, or None with no model configured."""
    base = os.environ.get("LLM_BASE_URL")
    if not base:
        return None
    body = {"model": os.environ.get("LLM_MODEL", "gpt-4o-mini"),
            "messages": [{"role": "system", "content": system}] + history}
    req = urllib.request.Request(base.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + os.environ.get("LLM_API_KEY", "")})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.load(resp)["choices"][0]["message"]["content"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--user", required=True)
    p.add_argument("--session", default="example-" + uuid.uuid4().hex[:8])
    p.add_argument("messages", nargs="*", help="messages to send; none reads them from stdin")
    args = p.parse_args()
    mem = Engram(source="example-agent")
    messages = args.messages or iter(lambda: sys.stdin.readline().rstrip("\n"), "")
    history, index = [], 0
    for text in messages:
        print("> " + text)
        # wait="memories": the answer lists what engram read in the turn.
        stored = mem.record_turn(args.user, args.session, index, "user", text, wait="memories")
        index += 1
        for m in stored["results"][0].get("memories") or []:
            print("  [engram learned: %s (%s)]" % (m["content"], m["kind"]))
        block = mem.context(args.user, text, session_id=args.session, recent_messages=history[-6:])
        system = "You are a helpful assistant. What you remember about the user:\n" + block["rendered"]
        history.append({"role": "user", "content": text})
        reply = answer(system, history)
        if reply is None:
            lines = [l for l in block["rendered"].splitlines() if l.strip()]
            print("  (no LLM configured: nothing is answered or recorded; engram's block has %d lines%s)" % (
                len(lines), (": " + lines[0][:120]) if lines else ""))
            continue
        history.append({"role": "assistant", "content": reply})
        mem.record_turn(args.user, args.session, index, "assistant", reply)
        index += 1
        print(reply)
    mem.end_session(args.user, args.session, message_count=index)
    print("session %s ended after %d messages" % (args.session, index))


if __name__ == "__main__":
    main()
