#!/usr/bin/env python3
"""A loopback OpenAI Responses API that scripts Codex's turns.

Prints `listening PORT` on stdout once ready; logs every request path to
stderr. The scenario is chosen by the person's prompt (found in the user
messages):

  "run make"         -> the shell tool with `make build` (a command Codex
                        does not trust: it asks permission for it)
  "run echo hi"      -> the shell tool with `echo hi`
  "write files"      -> the shell tool writing `made.txt` (a new file at the
                        workspace root) and appending
                        to `notes.txt` (Codex writes in its own process)
  "slow"             -> answers nothing for 120 s

A request whose input ends with a function call's output gets the final
text "result: <output>". Requests without tools get a short text. Usage:
fake_openai.py WORKSPACE
"""

import json
import sys
import time
import uuid

from fake_server import serve

WS = sys.argv[1]


def log(text):
    print(f"fake openai: {text}", file=sys.stderr, flush=True)


def text_of(content):
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def plan(body):
    items = body.get("input") or []
    last = items[-1] if items else {}
    if last.get("type") in ("function_call_output", "custom_tool_call_output"):
        output = last.get("output")
        if isinstance(output, dict):
            output = output.get("content", json.dumps(output))
        # A command's result describes the run, then its output.
        if isinstance(output, str) and "Output:\n" in output:
            output = output.split("Output:\n", 1)[1].strip()
        return [message(f"result: {output}")]
    prompt = "\n".join(text_of(i.get("content")) for i in items if i.get("role") == "user")
    tools = [t.get("name") for t in body.get("tools") or []]
    log(f"tools: {tools}; prompt: {prompt[-200:]!r}")
    shell = next((t for t in ("exec_command", "shell", "shell_command") if t in tools), None)
    if shell and "run make" in prompt:
        # Not a command Codex trusts: it asks permission first.
        return [call(shell, "make build")]
    if shell and "run echo hi" in prompt:
        return [call(shell, "echo hi")]
    if shell and "write files" in prompt:
        return [call(shell, "printf 'made by codex\\n' > made.txt && printf 'more\\n' >> notes.txt")]
    if "slow" in prompt:
        time.sleep(120)
    return [message("nothing to do")]


def call(tool, line):
    if tool == "shell":
        arguments = {"command": ["bash", "-lc", line], "workdir": WS}
    elif tool == "exec_command":
        arguments = {"cmd": line, "workdir": WS}
    else:
        arguments = {"command": line, "workdir": WS}
    return {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:12], "call_id": "call_" + uuid.uuid4().hex[:12],
            "name": tool, "arguments": json.dumps(arguments)}


def message(text):
    return {"type": "message", "id": "msg_" + uuid.uuid4().hex[:12], "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def sse(data):
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def stream(items):
    rid = "resp_" + uuid.uuid4().hex[:12]
    out = [sse({"type": "response.created", "response": {"id": rid}})]
    for item in items:
        out.append(sse({"type": "response.output_item.added", "item": item}))
        if item["type"] == "message":
            out.append(sse({"type": "response.output_text.delta", "delta": item["content"][0]["text"]}))
        out.append(sse({"type": "response.output_item.done", "item": item}))
    out.append(sse({"type": "response.completed", "response": {
        "id": rid, "usage": {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                             "output_tokens_details": None, "total_tokens": 15}}}))
    return "".join(out).encode()


def route(method, path, headers, body):
    log(f"{method} {path}")
    if headers.get("Upgrade"):
        # No WebSocket transport here: the client falls back to HTTPS.
        return 404, "text/plain", b""
    if path.endswith("/responses") and isinstance(body, dict):
        return 200, "text/event-stream", stream(plan(body))
    if path.endswith("/models"):
        return 200, "application/json", b'{"object": "list", "data": [], "models": []}'
    return 200, "application/json", b"{}"


serve(route)
