"""The loopback HTTP server the fake model APIs share.

`serve(route)` listens on a free port of 127.0.0.1, prints `listening PORT`
once ready and answers every request with `route(method, path, headers,
body)`, which returns (status, content type, bytes); `body` is the request's
JSON (an empty dict when it has none or is not JSON).
"""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(route):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            status, content_type, answer = route(self.command, self.path.split("?")[0], self.headers, body)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer)

        do_POST = do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()
