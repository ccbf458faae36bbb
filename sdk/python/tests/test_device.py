"""The Python device SDK end to end, against the real gateway process and the real edge agent on
the tiny model standing in for the device's llama.cpp server (tests/stack.ts starts them).
Run from sdk/python: python3 -m unittest discover -s tests -v"""
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.request
import urllib.error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

from gearbox_sdk import DeviceModels, Gearbox, GearboxError, LlamaCppServer  # noqa: E402
from gearbox_sdk.http import post_json  # noqa: E402

PROMPT = "Summarize this in one line: the cat sat on the mat all day."
SUMMARIZE = {"model": "gpt-4.1-nano", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 6}
CODE = {"model": "gpt-4.1-nano", "messages": [{"role": "user", "content": "Write a Python function that sorts a list of numbers."}], "max_tokens": 6}

stack = None
info = None


def send(msg):
    stack.stdin.write(json.dumps(msg) + "\n")
    stack.stdin.flush()
    return json.loads(stack.stdout.readline())


def until(check, what, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def admin(method, path, body=None):
    req = urllib.request.Request(info["admin_url"] + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"authorization": "Bearer " + info["admin_key"], "content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def devices():
    return admin("GET", "/v1/devices")[1]["data"]


def device(device_id, key=None):
    handle = LlamaCppServer("tiny", base_url=info["agent_url"])
    return Gearbox(info["url"] + "/v1", device_id, api_key=key or info["call_key"], models=DeviceModels([handle]), backoff=(0.05, 0.3), timeout=10.0), handle


def raw(verb, body, key=None, headers=None):
    """A device API call as bytes, returning (status, error code)."""
    h = {"content-type": "application/json", "authorization": "Bearer " + (key or info["call_key"])}
    h.update(headers or {})
    req = urllib.request.Request(info["url"] + "/v1/device/" + verb, method="POST", data=body if isinstance(body, bytes) else json.dumps(body).encode(), headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, (json.loads(err.read()).get("error") or {}).get("code")


def setUpModule():
    global stack, info
    stack = subprocess.Popen(["node", "--import", "tsx", os.path.join(HERE, "stack.ts")], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    info = json.loads(stack.stdout.readline())


def tearDownModule():
    try:
        stack.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        stack.stdin.flush()
        stack.wait(30)
    except Exception:
        stack.kill()
    finally:
        stack.stdin.close()
        stack.stdout.close()


class DeviceFlow(unittest.TestCase):
    """In order: one device through registration, answers, a gateway restart and commands."""

    @classmethod
    def setUpClass(cls):
        cls.app, cls.tiny = device("py-1")

    @classmethod
    def tearDownClass(cls):
        cls.app.close()

    def test_1_register_ask_answer_locally_report(self):
        policy = self.app.connect()
        self.assertEqual(policy["confidence_threshold"], 0)
        self.assertEqual([(d["device_id"], d["active"]) for d in devices() if d["device_id"] == "py-1"], [("py-1", "tiny")])
        seen = send({"cmd": "cloud_requests"})
        out = self.app.chat.completions.create(**SUMMARIZE)
        self.assertEqual(out["gearbox"]["route"], "device")
        self.assertRegex(out["gearbox"]["reason"], r"^edge_confident:.*rule:1")
        direct = self.tiny.chat([{"role": "user", "content": PROMPT}], max_tokens=6)
        self.assertEqual(out["choices"][0]["message"]["content"], direct.text)
        self.assertTrue(0 < direct.confidence <= 1)
        self.assertEqual(send({"cmd": "cloud_requests"}), seen)
        until(lambda: len(send({"cmd": "records", "device": "py-1"})) == 1, "the request record")
        record = send({"cmd": "records", "device": "py-1"})[0]
        self.assertEqual(record["route"], "edge")
        self.assertEqual(record["tenant"], "shop")
        self.assertEqual(record["cascade"]["upgraded"], False)
        self.assertEqual(record["cascade"]["edge_output_tokens"], direct.usage["completion_tokens"])

    def test_2_cloud_route_and_streaming(self):
        out = self.app.chat.completions.create(**CODE)
        self.assertEqual(out["gearbox"]["route"], "cloud")
        self.assertEqual(out["choices"][0]["message"]["content"], info["cloud_text"])
        whole = self.app.chat.completions.create(**SUMMARIZE)
        chunks = list(self.app.chat.completions.create(stream=True, **SUMMARIZE))
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in chunks), whole["choices"][0]["message"]["content"])
        self.assertEqual(chunks[-1]["gearbox"]["route"], "device")
        gen = self.tiny.generate(PROMPT, max_tokens=6)
        self.assertEqual("".join(p for p in self.tiny.generate(PROMPT, max_tokens=6, stream=True) if isinstance(p, str)), gen.text)

    def test_3_gateway_down_then_restart_resume_and_upgrade(self):
        version, welcomes = self.app.policy["version"], self.app.channel.connections
        self.assertEqual(send({"cmd": "stop"}), {"ok": True})
        offline = self.app.chat.completions.create(**SUMMARIZE)
        self.assertEqual(offline["gearbox"], {"route": "device", "reason": "gateway_unreachable", "confidence": offline["gearbox"]["confidence"]})
        self.assertEqual(send({"cmd": "restart", "threshold": 0.999}), {"ok": True})
        until(lambda: self.app.channel.connections > welcomes, "the reconnect")
        self.assertEqual(self.tiny.loads, 1, "the model was not reloaded")
        self.assertGreater(self.app.policy["version"], version)
        self.assertEqual(self.app.policy["confidence_threshold"], 0.999)
        seen = send({"cmd": "cloud_requests"})
        out = self.app.chat.completions.create(**SUMMARIZE)
        self.assertEqual(out["gearbox"]["route"], "cloud")
        self.assertRegex(out["gearbox"]["fallback"], r"^low_confidence:0\.\d+<0\.999$")
        self.assertEqual(out["choices"][0]["message"]["content"], info["cloud_text"])
        self.assertEqual(send({"cmd": "cloud_requests"}), seen + 1)
        until(lambda: any(r["route"] == "cloud" for r in send({"cmd": "records", "device": "py-1"})), "the upgrade's record")
        upgraded = [r for r in send({"cmd": "records", "device": "py-1"}) if r["route"] == "cloud"][0]
        self.assertTrue(upgraded["cascade"]["upgraded"])
        self.assertEqual(upgraded["cascade"]["cloud_status"], 200)

    def test_4_model_switch_applied_and_acknowledged(self):
        status, load = admin("POST", "/v1/devices/shop/py-1/commands", {"op": "load", "model": "tiny-b", "engine": "llama.cpp", "source": info["agent_url"]})
        self.assertEqual(status, 202)
        status, sw = admin("POST", "/v1/devices/shop/py-1/commands", {"op": "switch", "model": "tiny-b"})
        self.assertEqual(status, 202)
        self.assertGreater(sw["id"], load["id"])
        mine = lambda: [d for d in devices() if d["device_id"] == "py-1"][0]  # noqa: E731
        until(lambda: mine()["active"] == "tiny-b" and not mine()["pending_commands"], "the acks")
        self.assertEqual(self.app.models.active_id, "tiny-b")
        self.assertEqual(sorted(m["id"] for m in mine()["models"]), ["tiny", "tiny-b"])
        self.assertEqual(mine()["last_command"], sw["id"])


class BadDevices(unittest.TestCase):
    def test_silent_device_is_reclaimed(self):
        app, _ = device("py-silent")
        app.connect()
        session = app.channel.session
        status, decided = raw("decide", SUMMARIZE, headers={"x-gearbox-device-id": "py-silent"})
        self.assertEqual(status, 200)
        app.channel.pause_heartbeats()
        until(lambda: "expired" in app.channel.closed_reasons, "the expiry")
        self.assertEqual(raw("heartbeat", {"session": session}), (404, "unknown_session"))
        self.assertEqual(raw("outcome", {"decision_id": decided["decision_id"], "confidence": 0.9}), (404, "unknown_decision"))
        app.close()

    def test_revoked_key_garbage_and_oversized_hello(self):
        status, made = admin("POST", "/v1/keys", {"role": "call", "tenant": "shop", "name": "py"})
        self.assertEqual(status, 201)
        app, _ = device("py-revoked", key=made["key"])
        app.connect()
        self.assertEqual(admin("DELETE", "/v1/keys/" + made["id"])[0], 200)
        until(lambda: app.channel.error is not None, "the refusal")
        self.assertEqual((app.channel.error.status, app.channel.error.code), (401, "invalid_api_key"))
        self.assertFalse(any(d["device_id"] == "py-revoked" for d in devices()))
        again, _ = device("py-revoked", key=made["key"])
        with self.assertRaises(GearboxError) as caught:
            again.connect()
        self.assertEqual(caught.exception.status, 401)
        app.close()
        again.close()
        self.assertEqual(raw("connect", b"\x00garbage{"), (400, "invalid_json"))
        self.assertEqual(raw("connect", {"device_id": "py-big", "sdk": "x" * 20000}), (413, "request_too_large"))
        self.assertEqual(raw("connect", {"device_id": "has space"}), (400, "invalid_hello"))
        self.assertEqual(raw("heartbeat", {"session": "nope", "extra": 1}), (400, "invalid_heartbeat"))
        with self.assertRaises(GearboxError) as caught:
            post_json(info["url"] + "/v1/device/decide", SUMMARIZE, {"authorization": "Bearer " + info["call_key"]})
        self.assertEqual(caught.exception.code, "device_id_required")
        with urllib.request.urlopen(info["url"] + "/healthz", timeout=5) as res:
            self.assertEqual(res.status, 200)


if __name__ == "__main__":
    unittest.main()
