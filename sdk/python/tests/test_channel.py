"""The device channel's reader thread against a stream that stays open: closing the channel, or
dropping the connection to reconnect (what a heartbeat's 404 unknown_session does), while the
thread is blocked reading must end or resume it cleanly, never kill it with an exception.
A local server stands in for the gateway's /v1/device/connect: only the thread's life is tested
here; the protocol against the real gateway is in test_device.py."""
import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from gearbox_sdk.channel import DeviceChannel  # noqa: E402

WELCOME = {"session": "s-1", "heartbeat_interval_ms": 60000, "policy": {"version": 1, "hash": "h"}}


class Models:
    active_id = None

    def engines(self):
        return ["llama.cpp"]

    def listed(self):
        return []


class Gateway(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    closing = threading.Event()

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/device/connect":
            body = b"{}"
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        event = ("event: welcome\ndata: %s\n\n" % json.dumps(WELCOME)).encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.flush()
        # Open until the server stops or the client leaves: the reader stays blocked in a read.
        Gateway.closing.wait(30)


class ReaderThread(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.origin = "http://127.0.0.1:%d" % cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls):
        Gateway.closing.set()
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        self.uncaught = []
        previous = threading.excepthook
        threading.excepthook = lambda args: self.uncaught.append("%s: %s" % (args.exc_type.__name__, args.exc_value))
        self.addCleanup(setattr, threading, "excepthook", previous)

    def channel(self):
        ch = DeviceChannel(self.origin, "py-thread", Models(), backoff=(0.01, 0.05))
        self.assertEqual(ch.start(timeout=10)["version"], 1)
        return ch

    def test_close_while_reading_ends_the_thread_without_an_exception(self):
        for _ in range(20):
            ch = self.channel()
            ch.close()
            ch._reader.join(5)
            self.assertFalse(ch._reader.is_alive(), "the reader thread ended")
            self.assertEqual(self.uncaught, [])

    def test_a_dropped_connection_reconnects_the_same_thread(self):
        ch = self.channel()
        self.addCleanup(ch.close)
        for n in range(2, 12):
            ch._drop()
            deadline = threading.Event()
            for _ in range(200):
                if ch.connections >= n:
                    break
                deadline.wait(0.025)
            self.assertEqual(ch.connections, n, "reconnected after drop %d" % (n - 1))
            self.assertTrue(ch._reader.is_alive())
        self.assertEqual(self.uncaught, [])


if __name__ == "__main__":
    unittest.main()
