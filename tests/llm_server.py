"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for the llm-judge tests and benchmark.

It answers ``GET /v1/models`` and ``POST /v1/chat/completions`` in the wire format (``choices[].message.content``,
``choices[].logprobs.content[].top_logprobs``, ``usage``, ``model``), deterministically from the prompt:
``score(prompt) = 1 + sha256(prompt)[0] % 5``, with top log-probabilities ``ln 0.6`` for that score, ``ln 0.3`` for the
next one (the previous one for 5) and ``ln 0.1`` for the token ``"The"``. A word in the prompt changes the answer:
``NONUMBER`` (no number), ``OUTRANGE`` (``9``), ``RATE429`` (429 on the first request of that prompt), ``ERR500``
(always 500), ``STALL`` (the first request waits ``stall`` seconds before answering), ``MALFORMED`` (the first
answer is not JSON), ``ERROBJ`` (the first answer is an ``error`` object with status 200), ``TRICKLE`` (the first
answer's body comes a byte every ``trickle`` seconds), ``BAD400`` (always 400), ``HUGE`` (an answer of ``huge`` characters), ``BADUSAGE`` (a ``usage`` whose counts are not
numbers). ``answer_model`` is the id its answers name (default: the listed one); ``ignore_n`` answers one choice
whatever ``n`` asks, as Ollama does; ``echo_auth`` (a status, e.g. 401 or 500) answers every request with that status
and a body that echoes the request's ``Authorization`` header, as a careless server does.

A prompt that asks for labels gets a label (:func:`expected_label`), for the ``template=set`` tests: one that names
both ``model_a`` and ``model_b`` (LLMBar) is answered ``model_a`` or ``model_b``; one that names ``'Yes'`` and
``'No'`` in quotes (CoLA, DICES: "Write 'Yes' if ...") is answered ``Yes.`` or ``No.`` (or ``Unsure.`` when it also
names ``'Unsure'``), the label chosen by ``sha256(prompt)[0]`` modulo the number of labels.
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def expected_score(prompt: str) -> int:
    return 1 + hashlib.sha256(prompt.encode("utf-8")).digest()[0] % 5


def asked_labels(prompt: str) -> tuple[str, ...]:
    """The labels a prompt asks for (see the module notes), in the order :func:`expected_label` indexes them."""
    if "model_a" in prompt and "model_b" in prompt:
        return ("model_a", "model_b")
    if "'Yes'" in prompt and "'No'" in prompt:
        return ("Yes", "No", "Unsure") if "'Unsure'" in prompt else ("Yes", "No")
    return ()


def expected_label(prompt: str) -> str | None:
    """The label the server answers to a prompt that asks for labels, else None."""
    labels = asked_labels(prompt)
    return labels[hashlib.sha256(prompt.encode("utf-8")).digest()[0] % len(labels)] if labels else None


def expected_weighted(prompt: str) -> float:
    s = expected_score(prompt)
    t = s + 1 if s < 5 else s - 1
    return (0.6 * s + 0.3 * t) / 0.9


class JudgeServer:
    def __init__(self, model: str = "judge-7b", stall: float = 1.0, ignore_n: bool = False, delay: float = 0.0,
                 echo_auth: int | None = None, huge: int = 1_500_000, trickle: float = 0.05):
        self.model, self.answer_model, self.stall, self.ignore_n, self.delay = model, model, stall, ignore_n, delay
        self.echo_auth, self.huge, self.trickle = echo_auth, huge, trickle
        self.counts: Counter = Counter()
        self.prompts: list[str] = []
        self.seen: Counter = Counter()
        self.headers: list[str] = []
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, body: bytes, extra: dict | None = None, trickle: float = 0.0):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    if not trickle:
                        self.wfile.write(body)
                    for k in range(len(body) if trickle else 0):  # a byte at a time, each within any read timeout
                        self.wfile.write(body[k:k + 1])
                        self.wfile.flush()
                        time.sleep(trickle)
                except (BrokenPipeError, ConnectionResetError):  # a client killed mid-request (or that gave up)
                    pass

            def _echo(self) -> bool:
                if server.echo_auth is None:
                    return False
                with server.lock:
                    server.counts["echoed"] += 1
                self._send(server.echo_auth, json.dumps({"error": "unauthorized", "you_sent": {
                    "Authorization": self.headers.get("Authorization", "")}}).encode())
                return True

            def do_GET(self):
                with server.lock:
                    server.counts["models"] += 1
                if self._echo():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, json.dumps({"object": "list", "data": [
                        {"id": server.model, "object": "model", "owned_by": "test"}]}).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length))
                if self._echo():
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                    return
                prompt = request["messages"][0]["content"]
                with server.lock:
                    server.counts["chat"] += 1
                    server.prompts.append(prompt)
                    server.headers.append(self.headers.get("Authorization", ""))
                    server.seen[prompt] += 1
                    first = server.seen[prompt] == 1
                with server.lock:
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    self._answer(request, prompt, first)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, request, prompt, first):
                if server.delay:
                    time.sleep(server.delay)
                if "ERR500" in prompt:
                    self._send(500, b'{"error": "internal"}')
                    return
                if "RATE429" in prompt and first:
                    self._send(429, b'{"error": "rate limited"}', {"Retry-After": "0"})
                    return
                if "STALL" in prompt and first:
                    time.sleep(server.stall)
                if "BAD400" in prompt:
                    self._send(400, b'{"error": {"message": "context length exceeded"}}')
                    return
                if "ERROBJ" in prompt and first:
                    self._send(200, b'{"error": {"message": "upstream overloaded"}}')
                    return
                if "MALFORMED" in prompt and first:
                    self._send(200, b'{"choices": [ not json')
                    return
                n = 1 if server.ignore_n else int(request.get("n", 1))
                s = expected_score(prompt)
                t = s + 1 if s < 5 else s - 1
                text, logprobs = str(s), None
                if expected_label(prompt) is not None and "NONUMBER" not in prompt:
                    text = expected_label(prompt) + ("." if not expected_label(prompt).startswith("model") else "")
                if "NONUMBER" in prompt:
                    text = "I cannot rate this summary."
                elif "OUTRANGE" in prompt:
                    text = "9"
                elif "HUGE" in prompt:
                    text = str(s) + " " + "x" * server.huge
                if request.get("logprobs") and text == str(s):
                    logprobs = {"content": [{"token": text, "logprob": math.log(0.6), "top_logprobs": [
                        {"token": str(s), "logprob": math.log(0.6)}, {"token": str(t), "logprob": math.log(0.3)},
                        {"token": "The", "logprob": math.log(0.1)}]}]}
                choices = [{"index": i, "message": {"role": "assistant", "content": text}, "logprobs": logprobs,
                            "finish_reason": "stop"} for i in range(n)]
                body = {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": server.answer_model,
                        "choices": choices, "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": n,
                                                      "total_tokens": len(prompt.split()) + n}}
                if "BADUSAGE" in prompt:
                    body["usage"] = {"prompt_tokens": "many", "completion_tokens": {"n": 1}, "total_tokens": 1e400}
                if "TRICKLE" in prompt and first:
                    self._send(200, json.dumps(body).encode(), trickle=server.trickle)
                    return
                self._send(200, json.dumps(body).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "JudgeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
