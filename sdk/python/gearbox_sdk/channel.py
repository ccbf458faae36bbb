"""The device's one long-lived control channel: POST /v1/device/connect with the hello, answered
by a server-sent event stream (welcome, policy, command, closed); heartbeats and
acknowledgements are POSTs beside it. A background thread reads the stream and reconnects
after a full-jitter back-off (random in [0, min(max, base * 2**attempt)]), resuming: the hello
reports the loaded models, the active one, the last policy version and command id, so nothing is
reloaded when nothing changed, and a pushed policy older than the one held is ignored. A second
thread heartbeats every heartbeat_interval_ms (the welcome's); 404 unknown_session reconnects at
once; a permanent refusal (400, 401, 403, 413…) stops the channel and is kept in `error`."""
import json
import random
import threading

from .errors import GatewayUnreachableError, GearboxError
from .http import NETWORK_ERRORS, open_post, post_json, sse_events


class DeviceChannel:
    def __init__(self, origin, device_id, models, api_key=None, max_concurrent=1, backoff=(0.25, 10.0), policy=None, last_command=0, on_event=None):
        self.origin = origin.rstrip("/")
        self.device_id = device_id
        self.models = models
        self.api_key = api_key
        self.max_concurrent = max_concurrent
        self.backoff = backoff
        self.policy = policy
        self.last_command = last_command
        self.session = None
        self.connections = 0
        self.error = None
        self.closed_reasons = []
        self.on_event = on_event or (lambda event, data: None)
        self.in_flight = 0
        self._welcome = threading.Event()
        self._stop = threading.Event()
        self._paused = False
        self._conn = None
        self._attempt = 0
        self._lock = threading.Lock()
        self._reader = None
        self._beater = None

    def headers(self):
        return {"authorization": "Bearer " + self.api_key} if self.api_key else {}

    def start(self, timeout=30.0):
        """Connects; returns the first welcome's policy, raises on a permanent refusal."""
        self._reader = threading.Thread(target=self._run, name="gearbox-channel", daemon=True)
        self._reader.start()
        self._beater = threading.Thread(target=self._beat_loop, name="gearbox-heartbeat", daemon=True)
        self._beater.start()
        if not self._welcome.wait(timeout) and self.error is None:
            raise GatewayUnreachableError("no welcome from the gateway within %.0f s" % timeout)
        if self.error is not None:
            raise self.error
        return self.policy

    def pause_heartbeats(self):
        self._paused = True

    def close(self):
        self._stop.set()
        self._drop()

    def _drop(self):
        """Ends the stream the reader thread is blocked on: its read sees the end, and the thread
        closes the connection itself (closing it from here races the read inside http.client)."""
        conn = self._conn
        sock = conn.sock if conn is not None else None
        if sock is not None:
            try:
                sock.shutdown(2)
            except OSError:
                pass

    def hello(self):
        h = {
            "device_id": self.device_id,
            "engines": self.models.engines(),
            "models": self.models.listed(),
            "capacity": {"max_concurrent": self.max_concurrent},
            "policy": {"version": (self.policy or {}).get("version", 0), "hash": (self.policy or {}).get("hash", "")},
            "last_command": self.last_command,
            "sdk": "gearbox-python/0.1.0",
        }
        if self.models.active_id:
            h["active"] = self.models.active_id
        return h

    def _run(self):
        while not self._stop.is_set():
            reason = "stream ended"
            conn = None
            try:
                conn, res = open_post(self.origin + "/v1/device/connect", self.hello(), self.headers(), timeout=None)
                self._conn = conn
                if self._stop.is_set():
                    break  # closed while connecting: close() found no connection to end
                for event, data in sse_events(res):
                    self._on(event, json.loads(data))
            except GearboxError as err:
                if err.permanent:
                    self.error = err
                    self._stop.set()
                    self._welcome.set()
                    return
                reason = str(err)
            except (GatewayUnreachableError, ValueError) + NETWORK_ERRORS as err:
                reason = str(err)
            finally:
                self._conn = None
                if conn is not None:
                    conn.close()
                self.session = None
            if self._stop.is_set():
                return
            self.on_event("disconnected", reason)
            base, most = self.backoff
            delay = random.uniform(0, min(most, base * (2 ** self._attempt)))
            self._attempt = min(self._attempt + 1, 20)
            self._stop.wait(delay)

    def _on(self, event, data):
        if event == "welcome":
            self.session = data["session"]
            self._attempt = 0
            self.connections += 1
            self.interval = data["heartbeat_interval_ms"] / 1000.0
            self._apply_policy(data["policy"], pushed=False)
            self._welcome.set()
        elif event == "policy":
            self._apply_policy(data, pushed=True)
        elif event == "command":
            self._run_command(data)
        elif event == "closed":
            self.closed_reasons.append(data.get("reason", ""))
        self.on_event(event, data)

    def _apply_policy(self, policy, pushed):
        if self.policy and policy["version"] < self.policy.get("version", 0):
            return
        self.policy = policy
        if pushed:
            self._post("ack", {"session": self.session, "policy_version": policy["version"], "ok": True})

    def _run_command(self, c):
        error = None
        try:
            self.models.apply(c)
        except Exception as err:  # the ack carries any failure to the gateway
            error = str(err) or type(err).__name__
        self.last_command = max(self.last_command, c["id"])
        ack = {"session": self.session, "command": c["id"], "ok": error is None, "models": self.models.listed()}
        if error is not None:
            ack["error"] = error[:1000]
        if self.models.active_id:
            ack["active"] = self.models.active_id
        self._post("ack", ack)

    def _post(self, verb, body):
        try:
            post_json(self.origin + "/v1/device/" + verb, body, self.headers(), timeout=10.0)
            return True
        except GearboxError as err:
            if err.status == 404:
                self._drop()  # the gateway lost the session: reconnect now, resuming
            elif err.permanent:
                self.error = err
                self._stop.set()
                self._drop()
            return False
        except GatewayUnreachableError:
            return False

    def _beat_loop(self):
        while not self._stop.is_set():
            self._stop.wait(getattr(self, "interval", 1.0))
            if self._stop.is_set() or self._paused or not self.session:
                continue
            self._post("heartbeat", {"session": self.session, "in_flight": self.in_flight})
