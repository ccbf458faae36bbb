"""The SDK's errors, shaped as the openai SDK's (status, code, type, param)."""
import json


class GearboxError(Exception):
    """The gateway answered with an error ({"error": {message, type, param, code}})."""

    def __init__(self, status, message, code=None, type=None, param=None):
        super().__init__("%d %s" % (status, message))
        self.status = status
        self.message = message
        self.code = code
        self.type = type
        self.param = param

    @classmethod
    def from_body(cls, status, text):
        try:
            err = json.loads(text).get("error") or {}
            if err.get("message"):
                return cls(status, err["message"], err.get("code"), err.get("type"), err.get("param"))
        except (ValueError, AttributeError):
            pass
        return cls(status, (text or "HTTP %d" % status)[:500])

    @property
    def permanent(self):
        """4xx but 404 (a lost session), 408 and 429: retrying the same thing will not help."""
        return 400 <= self.status < 500 and self.status not in (404, 408, 429)


class GatewayUnreachableError(Exception):
    """The gateway could not be reached (refused, reset, timed out)."""


class EngineError(Exception):
    """The local engine failed while answering (Ollama's in-stream {"error": ...}, a stream cut
    before its final object)."""
