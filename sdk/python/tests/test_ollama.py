"""The Ollama ModelHandle against an Ollama emulator: a real HTTP server (http.server, in this
process) replaying the repository's test/fixtures/ollama/ (bodies transcribed from Ollama's API
docs; no Ollama runs here and no recorded traffic exists: see that folder's README), the fixture
files byte for byte. What each answer must be is read from the fixture replayed, and what the
handle sent from the server's record.
Run from sdk/python: python3 -m unittest discover -s tests -v"""
import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
FIXTURES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "test", "fixtures", "ollama"))

from gearbox_sdk import EngineError, GearboxError, LocalAnswer, Ollama  # noqa: E402


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def lines(name):
    return [json.loads(l) for l in fixture(name).decode("utf-8").splitlines() if l.strip()]


def text_of(name):
    return "".join((l.get("message") or {}).get("content", "") for l in lines(name))


class Emulator:
    """POST /api/chat as Ollama answers it: an empty `messages` loads the model (chat-load.json);
    otherwise the next queued fixture (default chat-stream) as its .ndjson (application/x-ndjson),
    or its .json when "stream": false; a queued bytes object is sent as the stream itself. A model it does not have gets the 404 body of
    error-model-not-found.json with the name asked for, as Ollama's server formats it."""

    def __init__(self, models=("llama3.2",)):
        self.models = set(models)
        self.queue = []
        self.requests = []
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                emulator.requests.append((self.path, body))
                if self.path != "/api/chat":
                    return self.reply(404, b"404 page not found", "text/plain")
                if body.get("model") not in emulator.models:
                    missing = json.loads(fixture("error-model-not-found.json"))["error"].replace("llama3.2", body.get("model", ""))
                    return self.reply(404, json.dumps({"error": missing}).encode(), "application/json")
                if not body.get("messages"):
                    return self.reply(200, fixture("chat-load.json"), "application/json")
                name = emulator.queue.pop(0) if emulator.queue else "chat-stream"
                if isinstance(name, bytes):
                    return self.reply(200, name, "application/x-ndjson")
                if body.get("stream") is False:
                    return self.reply(200, fixture(name + ".json"), "application/json")
                return self.reply(200, fixture(name + ".ndjson"), "application/x-ndjson")

            def reply(self, status, data, kind):
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def chats(self):
        return [b for p, b in self.requests if p == "/api/chat" and b.get("messages")]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


ASK = [{"role": "user", "content": "Why is the sky blue?"}]


class OllamaHandleTest(unittest.TestCase):
    def setUp(self):
        self.emulator = Emulator()
        self.addCleanup(self.emulator.close)
        self.handle = Ollama("llama3.2", host=self.emulator.url)

    def test_chat_text_usage_and_request(self):
        answer = self.handle.chat(ASK, max_tokens=32)
        final = [l for l in lines("chat-stream.ndjson") if l.get("done")][0]
        self.assertEqual(answer.text, text_of("chat-stream.ndjson"))
        self.assertEqual(answer.usage, {"prompt_tokens": final["prompt_eval_count"], "completion_tokens": final["eval_count"]})
        self.assertIsNone(answer.confidence, "the docs' stream has no logprobs: unscored, the gateway upgrades")
        load = self.emulator.requests[0][1]
        self.assertEqual((load["messages"], load["keep_alive"]), ([], -1), "loading is Ollama's documented empty chat, kept loaded")
        sent = self.emulator.chats()[-1]
        self.assertEqual(sent["messages"], ASK)
        self.assertIs(sent["logprobs"], True)
        self.assertEqual(sent["options"]["num_predict"], 32)

    def test_stream_pieces_then_answer_and_no_reload(self):
        self.emulator.queue += ["chat-stream-history", "chat-stream-history"]
        pieces = list(self.handle.chat(ASK, stream=True))
        self.assertIsInstance(pieces[-1], LocalAnswer)
        self.assertEqual("".join(pieces[:-1]), text_of("chat-stream-history.ndjson"))
        self.assertEqual(pieces[-1].text, "".join(pieces[:-1]))
        self.handle.chat(ASK)
        self.assertEqual(self.handle.loads, 1)
        self.assertEqual(len([b for p, b in self.emulator.requests if not b.get("messages")]), 1)

    def test_generate_is_one_user_turn_after_the_system_prompt(self):
        answer = self.handle.generate("Why is the sky blue?", system="Answer in one word.")
        self.assertEqual(answer.text, text_of("chat-stream.ndjson"))
        self.assertEqual(
            self.emulator.chats()[-1]["messages"],
            [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Why is the sky blue?"}],
        )

    def test_an_error_line_in_the_stream_fails_the_answer(self):
        self.emulator.queue.append("chat-stream-error")
        expected = [l for l in lines("chat-stream-error.ndjson") if "error" in l][0]["error"]
        with self.assertRaises(EngineError) as caught:
            self.handle.chat(ASK)
        self.assertIn(expected, str(caught.exception))

    def test_a_stream_cut_before_its_final_object_fails_the_answer(self):
        # chat-stream-error's content lines without its error line: no done: true arrives.
        self.emulator.queue.append(b"".join(fixture("chat-stream-error.ndjson").splitlines(True)[:4]))
        with self.assertRaises(EngineError) as caught:
            self.handle.chat(ASK)
        self.assertIn("final object", str(caught.exception))

    def test_a_model_the_server_does_not_have(self):
        handle = Ollama("qwen2.5:0.5b", host=self.emulator.url)
        with self.assertRaises(GearboxError) as caught:
            handle.load()
        self.assertEqual(caught.exception.status, 404)
        self.assertIn("qwen2.5:0.5b", str(caught.exception))
        self.assertEqual((handle.loaded, handle.loads), (False, 0))


if __name__ == "__main__":
    unittest.main()
