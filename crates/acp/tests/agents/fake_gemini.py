#!/usr/bin/env python3
"""A loopback Gemini API (generativelanguage) that scripts Gemini CLI's turns.

Prints `listening PORT` on stdout once ready; logs every request path to
stderr. The scenario is chosen by the person's prompt (found in the user
messages):

  "create out.txt"   -> write_file of WS/out.txt with "made by gemini\n"
  "read notes.txt"   -> read_file of WS/notes.txt
  "run echo hi"      -> run_shell_command `echo hi`
  "slow"             -> answers nothing for 120 s (for cancel and death tests)

A request whose last message carries a function response gets the final
text "result: <response>", so what the host or the tool answered flows back
into the agent's message. Requests without tools (Gemini CLI's side calls:
routing, summaries, checks) get a short JSON-looking text; `countTokens`
and other paths get plausible bodies. Usage: fake_gemini.py WORKSPACE
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WS = sys.argv[1]


def log(text):
    print(f"fake gemini: {text}", file=sys.stderr, flush=True)


def user_texts(contents):
    out = []
    for message in contents or []:
        if message.get("role") != "user":
            continue
        for part in message.get("parts") or []:
            if isinstance(part, dict) and "text" in part:
                out.append(part["text"])
    return "\n".join(out)


def plan(body):
    contents = body.get("contents") or []
    tools = [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    if not tools:
        # A side call (model routing, next-speaker check, summaries).
        return [{"text": '{"reasoning": "simple", "model_choice": "flash", "next_speaker": "user"}'}]
    last = contents[-1] if contents else {}
    responses = [p["functionResponse"] for p in last.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p]
    if responses:
        response = responses[-1].get("response") or {}
        shown = response.get("output", response.get("error", response))
        shown = shown if isinstance(shown, str) else json.dumps(shown)
        # A shell result names the command, then its output.
        if "Output: " in shown:
            shown = shown.split("Output: ", 1)[1].split("\n", 1)[0]
        return [{"text": f"result: {shown}"}]
    prompt = user_texts(contents)
    if "create out.txt" in prompt:
        return [{"functionCall": {"name": "write_file",
                                  "args": {"file_path": f"{WS}/out.txt", "content": "made by gemini\n"}}}]
    if "read notes.txt" in prompt:
        return [{"functionCall": {"name": "read_file", "args": {"file_path": f"{WS}/notes.txt"}}}]
    if "run echo hi" in prompt:
        return [{"functionCall": {"name": "run_shell_command",
                                  "args": {"command": "echo hi", "description": "Say hi"}}}]
    if "slow" in prompt:
        time.sleep(120)
    return [{"text": "nothing to do"}]


def answer(parts):
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-fake",
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, body, content_type="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        log(f"{self.command} {path}")
        if path.endswith(":streamGenerateContent"):
            data = json.dumps(answer(plan(body)))
            self.reply(f"data: {data}\r\n\r\n".encode(), "text/event-stream")
        elif path.endswith(":generateContent"):
            self.reply(json.dumps(answer(plan(body))).encode())
        elif path.endswith(":countTokens"):
            self.reply(b'{"totalTokens": 10}')
        elif path.endswith(":embedContent") or path.endswith(":batchEmbedContents"):
            self.reply(b'{"embeddings": []}')
        else:
            self.reply(b"{}")

    do_POST = do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
