"""Small HTTP helpers over urllib/http.client: JSON POSTs and line-by-line streamed answers."""
import http.client
import json
import socket
import urllib.parse

from .errors import GatewayUnreachableError, GearboxError

NETWORK_ERRORS = (OSError, http.client.HTTPException, socket.timeout)


def open_post(url, body, headers=None, timeout=30.0):
    """POSTs JSON; returns (connection, response) with the body unread. Errors: GearboxError (an
    answer >= 400), GatewayUnreachableError (no answer)."""
    u = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = cls(u.hostname, u.port, timeout=timeout)
    data = json.dumps(body).encode("utf-8") if not isinstance(body, (bytes, bytearray)) else bytes(body)
    h = {"content-type": "application/json", "content-length": str(len(data))}
    h.update(headers or {})
    path = u.path + ("?" + u.query if u.query else "")
    try:
        conn.request("POST", path or "/", body=data, headers=h)
        res = conn.getresponse()
    except NETWORK_ERRORS as err:
        conn.close()
        raise GatewayUnreachableError("the gateway at %s://%s could not be reached: %s" % (u.scheme, u.netloc, err)) from err
    if res.status >= 400:
        text = res.read().decode("utf-8", "replace")
        conn.close()
        raise GearboxError.from_body(res.status, text)
    return conn, res


def post_json(url, body, headers=None, timeout=30.0):
    conn, res = open_post(url, body, headers, timeout)
    try:
        return json.loads(res.read().decode("utf-8") or "null")
    except NETWORK_ERRORS as err:
        raise GatewayUnreachableError(str(err)) from err
    finally:
        conn.close()


def get_json(url, headers=None, timeout=10.0):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", u.path or "/", headers=headers or {})
        res = conn.getresponse()
        text = res.read().decode("utf-8", "replace")
        if res.status >= 400:
            raise GearboxError.from_body(res.status, text)
        return json.loads(text)
    except NETWORK_ERRORS as err:
        raise GatewayUnreachableError(str(err)) from err
    finally:
        conn.close()


def sse_events(res):
    """(event, data) pairs of a server-sent event stream, until it ends."""
    event, data = "message", []
    while True:
        line = res.readline()
        if not line:
            return
        line = line.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])


def ndjson_lines(res):
    while True:
        line = res.readline()
        if not line:
            return
        line = line.strip()
        if line:
            yield json.loads(line.decode("utf-8"))
