"""Gearbox: the openai SDK's shape (client.chat.completions.create(**params) returns a
chat.completion dict, or an iterator of chat.completion.chunk dicts with stream=True), asking the
gateway first:

1. POST /v1/device/decide with the request: a routing instruction from the gateway's routing
   brain (target device or cloud, model, reason, policy version).
2. device: the local model answers; its confidence and tokens go to POST /v1/device/outcome (the
   text never leaves the device); a weak answer comes back upgraded (the gateway called the cloud
   and recorded it) and replaces the local one. A streamed upgradable answer is held until the
   verdict, then streamed; a final one (upgrade false) streams as generated.
3. cloud: the request goes to the gateway's /v1/chat/completions like any app's.

Gateway unreachable: with a last policy that allows it (offline "local", the default) and a
loaded model, the local answer is returned as final (gearbox.reason "gateway_unreachable");
otherwise (offline "fail", never connected, no model) GatewayUnreachableError is raised. An error
the gateway answered (4xx/5xx) is a GearboxError, never answered locally.
"""
import json
import time
import uuid
import urllib.parse

from .channel import DeviceChannel
from .errors import GatewayUnreachableError, GearboxError
from .http import open_post, post_json, sse_events
from .models import DeviceModels


class _Completions:
    def __init__(self, client):
        self._client = client

    def create(self, **params):
        return self._client._create(params)


class _Chat:
    def __init__(self, client):
        self.completions = _Completions(client)


class Gearbox:
    def __init__(self, base_url, device_id, api_key=None, models=None, timeout=30.0, backoff=(0.25, 10.0), intent=None):
        self.base_url = base_url.rstrip("/")
        u = urllib.parse.urlsplit(self.base_url)
        self.origin = "%s://%s" % (u.scheme, u.netloc)
        self.device_id = device_id
        self.api_key = api_key
        self.timeout = timeout
        self.intent = intent
        if isinstance(models, DeviceModels):
            self.models = models
        else:
            self.models = DeviceModels([] if models is None else (models if isinstance(models, (list, tuple)) else [models]))
        self.channel = DeviceChannel(self.origin, device_id, self.models, api_key=api_key, backoff=backoff)
        self.chat = _Chat(self)

    @property
    def policy(self):
        return self.channel.policy

    def connect(self, timeout=30.0):
        """Loads the local models and opens the control channel; returns on the gateway's welcome."""
        self.models.load_all()
        return self.channel.start(timeout)

    def close(self):
        self.channel.close()

    def _headers(self):
        h = {"x-gearbox-device-id": self.device_id}
        if self.api_key:
            h["authorization"] = "Bearer " + self.api_key
        if self.intent:
            h["x-gearbox-intent"] = self.intent
        return h

    def _post(self, path, body):
        return post_json(self.origin + path, body, self._headers(), self.timeout)

    def _create(self, params):
        stream = bool(params.get("stream"))
        try:
            instruction = self._post("/v1/device/decide", params)
        except GatewayUnreachableError as err:
            return self._offline(params, err)
        if instruction["target"] == "cloud":
            return self._cloud(params)
        handle = self.models.get(instruction["model"]) or self.models.active
        if handle is None:
            raise GearboxError(409, "the gateway sent this call to model %r, which this device does not hold" % instruction["model"], "model_not_loaded")
        if stream and not instruction["upgrade"]:
            return self._stream_final(handle, params, instruction)
        try:
            local, failure = self._answer(handle, params), None
        except Exception as err:  # the engine failed: the gateway upgrades, as for an edge agent's 5xx
            local, failure = None, err
        outcome = {"decision_id": instruction["decision_id"], "confidence": local.confidence if local else None, "status": "ok" if local else "failed"}
        if local:
            outcome["usage"] = local.usage
        try:
            verdict = self._post("/v1/device/outcome", outcome)
        except GatewayUnreachableError:
            if local is None:
                raise
            verdict = {"action": "keep", "reason": "gateway_unreachable_after_decision"}
        if verdict["action"] == "upgrade":
            completion = dict(verdict["completion"])
            completion["gearbox"] = {"route": "cloud", "reason": verdict["reason"], "fallback": verdict["fallback"], "decision_id": instruction["decision_id"], "confidence": outcome["confidence"]}
        elif local is not None:
            completion = _completion(handle.id, local, {"route": "device", "reason": verdict["reason"], "confidence": local.confidence, "decision_id": instruction["decision_id"]})
        else:
            raise failure
        return _replay(completion) if stream else completion

    def _answer(self, handle, params):
        self.channel.in_flight += 1
        try:
            return handle.chat(_turns(params["messages"]), **_options(params))
        finally:
            self.channel.in_flight -= 1

    def _stream_final(self, handle, params, instruction):
        cid, created = "chatcmpl-" + uuid.uuid4().hex, int(time.time())

        def chunk(delta, finish=None, gearbox=None):
            c = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": handle.id, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if gearbox:
                c["gearbox"] = gearbox
            return c

        yield chunk({"role": "assistant"})
        for piece in handle.chat(_turns(params["messages"]), stream=True, **_options(params)):
            if isinstance(piece, str):
                yield chunk({"content": piece})
                continue
            try:
                verdict = self._post("/v1/device/outcome", {"decision_id": instruction["decision_id"], "confidence": piece.confidence, "usage": piece.usage})
            except GatewayUnreachableError:
                verdict = {"reason": "gateway_unreachable_after_decision"}
            yield chunk({}, piece.finish_reason, {"route": "device", "reason": verdict["reason"], "confidence": piece.confidence, "decision_id": instruction["decision_id"]})

    def _offline(self, params, err):
        handle = self.models.active
        if (self.policy or {}).get("offline") != "local" or handle is None:
            raise err
        local = self._answer(handle, params)
        completion = _completion(handle.id, local, {"route": "device", "reason": "gateway_unreachable", "confidence": local.confidence})
        return _replay(completion) if params.get("stream") else completion

    def _cloud(self, params):
        url = self.base_url + "/chat/completions"
        if not params.get("stream"):
            conn, res = open_post(url, params, self._headers(), self.timeout)
            try:
                completion = json.loads(res.read().decode("utf-8"))
                completion["gearbox"] = {"route": "cloud", "reason": res.getheader("x-gearbox-reason", "")}
                return completion
            finally:
                conn.close()
        conn, res = open_post(url, params, self._headers(), self.timeout)

        def chunks():
            try:
                for _event, data in sse_events(res):
                    if data == "[DONE]":
                        return
                    yield json.loads(data)
            finally:
                conn.close()

        return chunks()


def _turns(messages):
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        out.append({"role": "system" if m.get("role") == "developer" else m.get("role"), "content": content or ""})
    return out


def _options(p):
    o = {}
    mt = p.get("max_completion_tokens", p.get("max_tokens"))
    if mt is not None:
        o["max_tokens"] = mt
    if p.get("temperature") is not None:
        o["temperature"] = p["temperature"]
    if p.get("stop") is not None:
        o["stop"] = [p["stop"]] if isinstance(p["stop"], str) else p["stop"]
    return o


def _completion(model, a, gearbox):
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": a.text}, "finish_reason": a.finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": a.usage["prompt_tokens"], "completion_tokens": a.usage["completion_tokens"], "total_tokens": a.usage["prompt_tokens"] + a.usage["completion_tokens"]},
        "gearbox": gearbox,
    }


def _replay(c):
    base = {"id": c["id"], "object": "chat.completion.chunk", "created": c.get("created", 0), "model": c.get("model", "")}
    choice = (c.get("choices") or [{}])[0]
    yield dict(base, choices=[{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])
    content = (choice.get("message") or {}).get("content")
    if content:
        yield dict(base, choices=[{"index": 0, "delta": {"content": content}, "finish_reason": None}])
    yield dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}], gearbox=c.get("gearbox"))
