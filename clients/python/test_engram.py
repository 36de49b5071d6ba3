"""Tests of engram.py against a real engram at ENGRAM_URL (with
ENGRAM_TOKEN if it has tokens). `make test` runs them: the Go test
internal/app.TestPythonClient starts an engram and runs this file."""

import os
import time
import unittest
import uuid

from engram import Engram, EngramError, event_id

URL = os.environ.get("ENGRAM_URL")


def wait_for(what, cond, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


class EventIDTest(unittest.TestCase):
    """Needs no engram: the ids the client derives."""

    def test_same_event_alike_other_events_apart(self):
        turn = {"session_id": "s1", "turn_index": 0, "role": "user", "content": "I moved to Lisbon"}
        reordered = {"content": "I moved to Lisbon", "role": "user", "turn_index": 0, "session_id": "s1"}
        self.assertEqual(event_id("turn.recorded", turn), event_id("turn.recorded", reordered))
        self.assertNotEqual(event_id("turn.recorded", turn),
                            event_id("turn.recorded", dict(turn, content="I moved to Porto")))
        self.assertRegex(event_id("turn.recorded", turn), r"^turn-[0-9a-f]{32}$")
        mem = Engram("http://127.0.0.1:1")
        self.assertNotEqual(mem.turn_event("ana", "s1", 0, "user", "hi")["id"],
                            mem.turn_event("ana", "s1", 0, "user", "hi there")["id"])


@unittest.skipUnless(URL, "ENGRAM_URL is not set: no engram to test against")
class EngramTest(unittest.TestCase):
    def setUp(self):
        self.mem = Engram(URL)
        self.user = "py-" + uuid.uuid4().hex[:8]

    def test_probes(self):
        self.assertTrue(self.mem.healthy())
        wait_for("ready", self.mem.ready)

    def test_turns_search_and_context(self):
        r = self.mem.record_turn(self.user, "s1", 0, "user", "我住在杭州，喜欢喝龙井茶")
        self.assertEqual(r["accepted"], 1)
        again = self.mem.record_turn(self.user, "s1", 0, "user", "我住在杭州，喜欢喝龙井茶")
        self.assertEqual(again["duplicates"], 1, "the same turn twice is stored once")
        for text in ("first text", "second text"):
            other = self.mem.record_turn(self.user, "s0", 0, "user", text)
            self.assertEqual(other["accepted"], 1, "another text for the same turn is stored, not a duplicate")
        batch = self.mem.send_events([
            self.mem.turn_event(self.user, "s1", 1, "assistant", "好的，记住了。"),
            self.mem.turn_event(self.user, "s1", 2, "user", "I also write Go at work"),
        ])
        self.assertEqual(batch["accepted"], 2)
        hits = wait_for("search", lambda: self.mem.search(self.user, "杭州"))
        self.assertIn("turn", [h["kind"] for h in hits])
        ctx = self.mem.context(self.user, "where do I live?", session_id="s1", force=True)
        self.assertIn("rendered", ctx)
        self.assertIn("total", ctx["budget"])
        self.assertEqual(self.mem.end_session(self.user, "s1", message_count=3)["accepted"], 1)

    def test_memories(self):
        w = self.mem.add_memory(self.user, "preference", "identity", "user", "drinks", "drinks oolong tea")
        mid = w["memory_id"]
        mems = self.mem.memories(self.user, kind="preference")
        self.assertEqual([m["id"] for m in mems], [mid])
        self.mem.update_memory(self.user, mid, content="drinks oolong and jasmine tea")
        got = self.mem.memory(self.user, mid)
        self.assertIn("jasmine", got["memory"]["content"])
        self.assertGreaterEqual(len(got["history"]), 2)
        self.assertIn("jasmine", self.mem.profile(self.user)["memory_md"])
        ctx = self.mem.context(self.user, "what tea do I drink?", force=True)
        self.assertIn("jasmine", ctx["rendered"])
        self.mem.delete_memory(self.user, mid, reason="test")
        self.assertEqual(self.mem.memories(self.user, kind="preference"), [])

    def test_plain_text_and_what_a_turn_taught(self):
        w = self.mem.remember(self.user, "I'm vegetarian")
        got = self.mem.memory(self.user, w["memory_id"])["memory"]
        self.assertEqual(got["content"], "I'm vegetarian")
        self.assertEqual(got["source"], "manual")
        r = self.mem.record_turn(self.user, "s2", 0, "user", "我住在北京市朝阳区，平时喜欢喝美式咖啡。", wait="memories")
        res = r["results"][0]
        self.assertEqual(res["extraction"], "done")
        self.assertTrue(any("美式咖啡" in m["content"] for m in res["memories"]), res)
        users = [u["user"] for u in self.mem.users(prefix=self.user)]
        self.assertEqual(users, [self.user])

    def test_scratchpad_pending_episodes(self):
        self.assertNotIn("updated", self.mem.scratchpad(self.user))
        self.mem.put_scratchpad(self.user, "focus: the python client")
        self.assertIn("python client", self.mem.scratchpad(self.user)["content"])
        self.assertEqual(self.mem.pending(self.user), [])
        self.assertIsInstance(self.mem.episodes(self.user), list)

    def test_errors_name_the_field(self):
        with self.assertRaises(EngramError) as e:
            self.mem.add_memory(self.user, "feeling", "identity", "user", "is", "happy")
        self.assertEqual(e.exception.status, 400)
        self.assertEqual(e.exception.code, "invalid")
        self.assertIn("kind", e.exception.message)
        with self.assertRaises(EngramError) as e:
            self.mem.memory(self.user, "m_nope")
        self.assertEqual(e.exception.code, "not_found")
        if os.environ.get("ENGRAM_TOKEN"):
            with self.assertRaises(EngramError) as e:
                Engram(URL, token="wrong-token-0123456789").search(self.user, "x")
            self.assertEqual(e.exception.code, "unauthorized")


class PackageTest(unittest.TestCase):
    """pyproject.toml builds this module, at its version, with nothing else."""

    def test_pyproject(self):
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs Python 3.11")
        import engram
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "pyproject.toml"), "rb") as f:
            proj = tomllib.load(f)
        self.assertEqual(proj["project"]["dependencies"], [])
        self.assertEqual(proj["tool"]["setuptools"]["py-modules"], ["engram"])
        self.assertEqual(proj["tool"]["setuptools"]["dynamic"]["version"]["attr"], "engram.__version__")
        self.assertRegex(engram.__version__, r"^\d+\.\d+\.\d+")
        self.assertTrue(os.path.exists(os.path.join(here, proj["project"]["readme"])))


if __name__ == "__main__":
    unittest.main()
