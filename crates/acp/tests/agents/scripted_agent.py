#!/usr/bin/env python3
"""A scripted ACP agent for the host's corner cases.

Speaks newline-delimited JSON-RPC 2.0 on stdio, logs to stderr. The first
word of a prompt picks the scenario:

  read PATH            fs/read_text_file, then say what it read
  write PATH TEXT      a tool call around fs/write_text_file
  permission           session/request_permission, then say the outcome
  permitwrite PATH TEXT  ask permission to write PATH (its location), then
                       write it with fs/write_text_file
  direct PATH TEXT     write PATH with its own file I/O (`\\n` in TEXT is a
                       line break); `direct-run` then runs a command
  giveup               ask permission; refused, end the turn as cancelled
                       (Codex does so)
  offline URL SECS     fetch URL through the proxy (as a model call), then
                       stay quiet for SECS seconds and end the turn
                       (Codex does so)
  run LINE             terminal/create with a whole shell line, wait_for_exit,
                       output, release; say the exit status and output
  watch LINE           terminal/create with a shell line, poll terminal/output
                       until output shows while it still runs; say what it
                       saw then and at the end
  kill                 terminal/create of `sleep 30`, then terminal/kill,
                       wait_for_exit, output, release; say the exit status
  env NAME             say the value of environment variable NAME
  fail                 answer the prompt with an error
  hang                 think, then wait for session/cancel
  stubborn             think, then ignore session/cancel
  die                  exit in the middle of the turn

argv[1] == "v2" answers initialize with protocol version 2; "auth" lists a
browser login and an API-key login and refuses session/new until
`authenticate` selected the API-key login with SCRIPTED_API_KEY set;
"broken" lists the same logins but fails session/new with an internal
error (a settings file it cannot write).
"""

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
PROTOCOL = 2 if MODE == "v2" else 1
cancelled = False
authenticated = False
next_id = 0


def log(text):
    print(f"scripted agent: {text}", file=sys.stderr, flush=True)


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read():
    global cancelled
    while True:
        line = sys.stdin.readline()
        if not line:
            log("stdin closed")
            sys.exit(0)
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if message.get("method") == "session/cancel":
            log("cancel received")
            cancelled = True
        return message


def call(method, params):
    """Sends a request (string ids, to exercise id handling) and waits for its answer."""
    global next_id
    next_id += 1
    request_id = f"agent-{next_id}"
    send({"id": request_id, "method": method, "params": params})
    while True:
        message = read()
        if message.get("id") == request_id and "method" not in message:
            return message
        if message.get("method") == "session/cancel":
            continue
        log(f"unexpected while waiting: {message}")


def update(session, payload):
    send({"method": "session/update", "params": {"sessionId": session, "update": payload}})


def say(session, text):
    update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def prompt(message, cwd):
    global cancelled
    cancelled = False
    params = message["params"]
    session = params["sessionId"]
    text = " ".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text")
    words = text.split(" ", 2)
    scenario = words[0]
    log(f"prompt: {scenario}")
    stop = "end_turn"
    if scenario == "read":
        answer = call("fs/read_text_file", {"sessionId": session, "path": os.path.join(cwd, words[1])})
        if "result" in answer:
            say(session, "read: " + answer["result"]["content"])
        else:
            say(session, "read failed: " + answer["error"].get("data", {}).get("code", "?"))
    elif scenario == "write":
        path = os.path.join(cwd, words[1])
        update(session, {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Write " + words[1],
                         "kind": "edit", "status": "pending", "locations": [{"path": path}]})
        answer = call("fs/write_text_file", {"sessionId": session, "path": path, "content": words[2]})
        if "result" in answer:
            update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"})
            say(session, "written")
        else:
            update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed"})
            say(session, "write failed: " + answer["error"].get("data", {}).get("code", "?"))
    elif scenario in ("direct", "direct-run"):
        # Writes with its own file I/O, as agents with their own tools do
        # (no fs/write_text_file); `direct-run` then runs a command.
        with open(os.path.join(cwd, words[1]), "w") as f:
            f.write(words[2].replace("\\n", "\n"))
        if scenario == "direct-run":
            created = call("terminal/create", {"sessionId": session, "command": "true", "cwd": cwd})
            terminal = created["result"]["terminalId"]
            call("terminal/wait_for_exit", {"sessionId": session, "terminalId": terminal})
            call("terminal/release", {"sessionId": session, "terminalId": terminal})
        say(session, "wrote directly")
    elif scenario == "permission":
        update(session, {"sessionUpdate": "tool_call", "toolCallId": "call-2", "title": "Run rm", "kind": "execute",
                         "status": "pending"})
        answer = call("session/request_permission", {
            "sessionId": session,
            "toolCall": {"toolCallId": "call-2", "title": "Run rm",
                         "locations": [{"path": os.path.join(cwd, "danger.txt")}]},
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        })
        outcome = answer["result"]["outcome"]
        if outcome["outcome"] == "selected":
            say(session, "permission: selected " + outcome["optionId"])
        else:
            say(session, "permission: " + outcome["outcome"])
        if cancelled:
            stop = "cancelled"
    elif scenario == "offline":
        import urllib.request
        try:
            urllib.request.urlopen(words[1], timeout=5)
            say(session, "reached the model")
        except Exception as e:
            log(f"the model is unreachable: {e}")
        time.sleep(float(words[2]))
        say(session, "gave up on the model")
    elif scenario == "permitwrite":
        path = os.path.join(cwd, words[1])
        answer = call("session/request_permission", {
            "sessionId": session,
            "toolCall": {"toolCallId": "call-5", "title": "Write " + words[1], "kind": "edit",
                         "locations": [{"path": path}]},
            "options": [
                {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        })
        if answer["result"]["outcome"].get("optionId") in ("once", "always"):
            written = call("fs/write_text_file", {"sessionId": session, "path": path, "content": words[2]})
            say(session, "written" if "result" in written else
                "write failed: " + written["error"].get("data", {}).get("code", "?"))
        else:
            say(session, "not allowed")
    elif scenario == "giveup":
        answer = call("session/request_permission", {
            "sessionId": session,
            "toolCall": {"toolCallId": "call-4", "title": "Run make"},
            "options": [
                {"optionId": "approved", "name": "Yes", "kind": "allow_once"},
                {"optionId": "abort", "name": "No, and tell Codex what to do differently", "kind": "reject_once"},
            ],
        })
        outcome = answer["result"]["outcome"]
        if outcome.get("optionId") == "approved":
            say(session, "allowed")
        else:
            say(session, "refused; giving up")
            stop = "cancelled"
    elif scenario in ("run", "kill"):
        if scenario == "run":
            create = {"sessionId": session, "command": text[len("run "):], "cwd": cwd}
        else:
            create = {"sessionId": session, "command": "sleep", "args": ["30"]}
        created = call("terminal/create", create)
        if "error" in created:
            say(session, "create failed: " + json.dumps(created["error"]))
        else:
            terminal = created["result"]["terminalId"]
            update(session, {"sessionUpdate": "tool_call", "toolCallId": "call-3", "title": "Run", "kind": "execute",
                             "status": "in_progress",
                             "content": [{"type": "terminal", "terminalId": terminal}]})
            if scenario == "kill":
                early = call("terminal/output", {"sessionId": session, "terminalId": terminal})
                log(f"output while running: {early}")
                call("terminal/kill", {"sessionId": session, "terminalId": terminal})
            waited = call("terminal/wait_for_exit", {"sessionId": session, "terminalId": terminal})
            output = call("terminal/output", {"sessionId": session, "terminalId": terminal})
            call("terminal/release", {"sessionId": session, "terminalId": terminal})
            after = call("terminal/output", {"sessionId": session, "terminalId": terminal})
            update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "call-3", "status": "completed"})
            if "error" in waited:
                say(session, "wait failed: " + waited["error"].get("data", {}).get("code", "?"))
            else:
                result = output["result"]
                say(session, "exit %s signal %s truncated %s released %s: %s" % (
                    waited["result"].get("exitCode"), waited["result"].get("signal"), result["truncated"],
                    after.get("error", {}).get("data", {}).get("code", "still there"), result["output"]))
    elif scenario == "watch":
        created = call("terminal/create", {"sessionId": session, "command": text[len("watch "):]})
        terminal = created["result"]["terminalId"]
        seen = ""
        for _ in range(200):
            polled = call("terminal/output", {"sessionId": session, "terminalId": terminal})["result"]
            if polled.get("exitStatus"):
                seen = "(ended before any output was seen)"
                break
            if polled["output"]:
                seen = polled["output"]
                break
            time.sleep(0.05)
        waited = call("terminal/wait_for_exit", {"sessionId": session, "terminalId": terminal})
        final = call("terminal/output", {"sessionId": session, "terminalId": terminal})["result"]["output"]
        call("terminal/release", {"sessionId": session, "terminalId": terminal})
        say(session, "while running: %r; exit %s: %r" % (seen, waited["result"].get("exitCode"), final))
    elif scenario == "fail":
        send({"id": message["id"], "error": {"code": -32603, "message": "Internal error: model unreachable"}})
        return
    elif scenario == "env":
        say(session, "env: " + os.environ.get(words[1], "unset"))
    elif scenario == "direct-hang":
        # Writes with its own file I/O, then works on, deaf to cancellation.
        with open(os.path.join(cwd, words[1]), "w") as f:
            f.write(words[2].replace("\\n", "\n"))
        while True:
            read()
    elif scenario in ("hang", "stubborn"):
        update(session, {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "thinking"}})
        while not cancelled or scenario == "stubborn":
            read()
        stop = "cancelled"
    elif scenario == "die":
        say(session, "about to die")
        log("dying")
        sys.exit(3)
    else:
        say(session, "unknown scenario")
    send({"id": message["id"], "result": {"stopReason": stop}})


def main():
    global authenticated
    cwd = os.getcwd()
    while True:
        message = read()
        method = message.get("method")
        if method == "initialize":
            send({"id": message["id"], "result": {
                "protocolVersion": PROTOCOL,
                "agentCapabilities": {"loadSession": False, "promptCapabilities": {"image": False}},
                "authMethods": [{"id": "login", "name": "Log in with a browser",
                                 "description": "opens the login page"},
                                {"id": "api-key", "name": "API key",
                                 "description": "uses SCRIPTED_API_KEY"}] if MODE in ("auth", "broken") else [],
            }})
        elif method == "authenticate":
            if message["params"]["methodId"] == "api-key" and os.environ.get("SCRIPTED_API_KEY"):
                authenticated = True
                send({"id": message["id"], "result": {}})
            else:
                send({"id": message["id"], "error": {"code": -32000, "message": "no key"}})
        elif method == "session/new" and MODE == "broken":
            send({"id": message["id"], "error": {
                "code": -32603, "message": "Internal error",
                "data": {"details": "EACCES: permission denied, open '/home/u/.claude.json'"}}})
        elif method == "session/new" and MODE == "auth" and not authenticated:
            send({"id": message["id"], "error": {"code": -32000, "message": "Authentication required"}})
        elif method == "session/new":
            cwd = message["params"]["cwd"]
            send({"id": message["id"], "result": {"sessionId": "session-1"}})
        elif method == "session/prompt":
            prompt(message, cwd)
        elif "id" in message and method is not None:
            send({"id": message["id"], "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
