"""Local engines behind one interface, ModelHandle: chat() and generate(), whole or streamed
(stream=True yields text pieces, then the LocalAnswer), each answer with its confidence — the
geometric mean of the generated tokens' probabilities (exp of the mean log-probability), the
score the gateway's cascade judges; None when the engine reported no log-probabilities (the
gateway then upgrades, as for an unscored edge answer).

- LlamaCppServer: a llama.cpp server (llama-server) through its OpenAI-compatible
  /v1/chat/completions with logprobs; Gearbox's edge agent speaks the same API.
- Ollama: an Ollama server's /api/chat with logprobs (Ollama 0.12 or newer).

generate(prompt) is one user turn with the model's chat template applied, as Ollama's
/api/generate does by default.
"""
import math
from dataclasses import dataclass, field

from .errors import EngineError
from .http import get_json, ndjson_lines, open_post, post_json, sse_events

import json


@dataclass
class LocalAnswer:
    text: str
    confidence: "float | None"
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    finish_reason: str = "stop"


def confidence_of(logprobs):
    scored = [min(0.0, lp) for lp in logprobs if lp is not None and math.isfinite(lp)]
    if not scored:
        return None
    return round(math.exp(sum(scored) / len(scored)), 6)


class ModelHandle:
    """A model on the device. `loads` counts load() calls that did load (a resume must not raise it)."""

    engine = "base"

    def __init__(self, model, source=None):
        self.id = model
        self.source = source or model
        self.loaded = False
        self.loads = 0

    def spec(self):
        return {"id": self.id, "engine": self.engine, "source": self.source}

    def load(self):
        if not self.loaded:
            self._load()
            self.loaded = True
            self.loads += 1

    def unload(self):
        self.loaded = False

    def chat(self, messages, stream=False, max_tokens=256, temperature=0.0, stop=None, timeout=120.0):
        self.load()
        gen = self._chat(messages, max_tokens, temperature, stop, timeout)
        if stream:
            return gen
        answer = None
        for piece in gen:
            if isinstance(piece, LocalAnswer):
                answer = piece
        return answer

    def generate(self, prompt, system=None, **kw):
        turns = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        return self.chat(turns, **kw)

    def _load(self):
        raise NotImplementedError

    def _chat(self, messages, max_tokens, temperature, stop, timeout):
        raise NotImplementedError


class LlamaCppServer(ModelHandle):
    """A llama.cpp server (or anything speaking its OpenAI-compatible API with logprobs)."""

    engine = "llama.cpp"

    def __init__(self, model, base_url="http://127.0.0.1:8080", source=None):
        super().__init__(model, source or base_url)
        self.base_url = base_url.rstrip("/")

    def _load(self):
        get_json(self.base_url + "/v1/models")

    def _chat(self, messages, max_tokens, temperature, stop, timeout):
        body = {"model": self.id, "messages": messages, "max_tokens": max_tokens, "temperature": temperature, "logprobs": True, "stream": True, "stream_options": {"include_usage": True}}
        if stop:
            body["stop"] = stop
        conn, res = open_post(self.base_url + "/v1/chat/completions", body, timeout=timeout)
        text, lps, usage, finish = [], [], {"prompt_tokens": 0, "completion_tokens": 0}, "stop"
        try:
            for _event, data in sse_events(res):
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if chunk.get("usage"):
                    usage = {k: chunk["usage"].get(k, 0) for k in ("prompt_tokens", "completion_tokens")}
                for choice in chunk.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content")
                    for tok in ((choice.get("logprobs") or {}).get("content") or []):
                        lps.append(tok.get("logprob"))
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                    if piece:
                        text.append(piece)
                        yield piece
        finally:
            conn.close()
        if not usage["completion_tokens"]:
            usage["completion_tokens"] = len(lps)
        yield LocalAnswer("".join(text), confidence_of(lps), usage, finish)


class Ollama(ModelHandle):
    """An Ollama server's /api/chat (logprobs need Ollama 0.12 or newer)."""

    engine = "ollama"

    def __init__(self, model, host="http://127.0.0.1:11434"):
        super().__init__(model, model)
        self.host = host.rstrip("/")

    def _load(self):
        # Loads the model into the server's memory (an empty chat is Ollama's documented warm-up).
        post_json(self.host + "/api/chat", {"model": self.id, "messages": [], "keep_alive": -1})

    def _chat(self, messages, max_tokens, temperature, stop, timeout):
        options = {"num_predict": max_tokens, "temperature": temperature}
        if stop:
            options["stop"] = stop
        body = {"model": self.id, "messages": messages, "stream": True, "logprobs": True, "options": options, "keep_alive": -1}
        conn, res = open_post(self.host + "/api/chat", body, timeout=timeout)
        text, lps, usage, finish, done = [], [], {"prompt_tokens": 0, "completion_tokens": 0}, "stop", False
        try:
            for line in ndjson_lines(res):
                if line.get("error"):
                    # Ollama reports a failure after the stream started as one {"error": ...} line.
                    raise EngineError("Ollama at %s: %s" % (self.host, line["error"]))
                piece = (line.get("message") or {}).get("content")
                for tok in line.get("logprobs") or []:
                    lps.append(tok.get("logprob"))
                if piece:
                    text.append(piece)
                    yield piece
                if line.get("done"):
                    usage = {"prompt_tokens": line.get("prompt_eval_count", 0), "completion_tokens": line.get("eval_count", 0)}
                    finish = "length" if line.get("done_reason") == "length" else "stop"
                    done = True
        finally:
            conn.close()
        if not done:
            raise EngineError("Ollama at %s: the stream ended before its final object (done: true)" % self.host)
        yield LocalAnswer("".join(text), confidence_of(lps), usage, finish)
