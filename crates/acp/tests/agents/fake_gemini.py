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

from fake_server import serve

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


def route(method, path, headers, body):
    log(f"{method} {path}")
    if path.endswith(":streamGenerateContent"):
        data = json.dumps(answer(plan(body)))
        return 200, "text/event-stream", f"data: {data}\r\n\r\n".encode()
    if path.endswith(":generateContent"):
        return 200, "application/json", json.dumps(answer(plan(body))).encode()
    if path.endswith(":countTokens"):
        return 200, "application/json", b'{"totalTokens": 10}'
    if path.endswith(":embedContent") or path.endswith(":batchEmbedContents"):
        return 200, "application/json", b'{"embeddings": []}'
    return 200, "application/json", b"{}"


serve(route)
