#!/usr/bin/env python3
"""A loopback Anthropic Messages API that scripts Claude Code's turns.

Prints `listening PORT` on stdout once ready. The scenario is chosen by the
person's prompt (the first user message):

  "read notes.txt"   -> Read of WS/notes.txt
  "write out.txt"    -> Write of WS/out.txt with "written by the agent\n"
  "remove docs/plan.txt" -> Bash `rm docs/plan.txt` (asks permission)
  "run echo hi"      -> Bash `echo hi`
  "slow"             -> answers nothing for 120 s (for cancel and death tests)

A request that already carries a tool result gets the final text
"result: <tool result text>" (or "refused: …" for an error result), so what
the host answered flows back into the agent's message. Requests without
tools (side calls) get a short text; `count_tokens` and other paths get
plausible bodies. Usage: fake_anthropic.py WORKSPACE
"""

import json
import sys
import time
import uuid

from fake_server import serve

WS = sys.argv[1]


def text_of(content):
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def plan(body):
    names = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    if not any(n in ("Read", "mcp__acp__Read") for n in names):
        return [{"type": "text", "text": "ok"}], "end_turn"
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    results = [b for b in last.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        result = results[-1]
        word = "refused" if result.get("is_error") else "result"
        return [{"type": "text", "text": f"{word}: {text_of(result.get('content'))}"}], "end_turn"
    prompt = text_of(messages[0].get("content")) if messages else ""

    def tool(base, arguments):
        name = "mcp__acp__" + base if "mcp__acp__" + base in names else base
        return [{"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": name,
                 "input": arguments}], "tool_use"

    if "read notes.txt" in prompt:
        return tool("Read", {"file_path": f"{WS}/notes.txt"})
    if "remove docs/plan.txt" in prompt:
        return tool("Bash", {"command": "rm docs/plan.txt", "timeout": 60000, "description": "Remove the plan"})
    if "write out.txt" in prompt:
        return tool("Write", {"file_path": f"{WS}/out.txt", "content": "written by the agent\n"})
    if "run echo hi" in prompt:
        return tool("Bash", {"command": "echo hi", "timeout": 60000, "description": "Say hi"})
    if "slow" in prompt:
        time.sleep(120)
    return [{"type": "text", "text": "nothing to do"}], "end_turn"


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def stream(model, blocks, stop):
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


def route(method, path, headers, body):
    if path == "/v1/messages" and isinstance(body, dict):
        blocks, stop = plan(body)
        model = body.get("model", "claude-fake")
        if body.get("stream"):
            return 200, "text/event-stream", stream(model, blocks, stop)
        return 200, "application/json", json.dumps({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10}}).encode()
    if path == "/v1/messages/count_tokens":
        return 200, "application/json", b'{"input_tokens": 10}'
    if path == "/v1/models":
        return 200, "application/json", b'{"data": [], "has_more": false}'
    return 200, "application/json", b"{}"


serve(route)
