"""A small OpenAI-compatible HTTP server on loopback, scripted per test.

The real `openai` client talks to it over HTTP; nothing of ours is patched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class FakeOpenAI:
    """Answers each request with the next scripted reply (the last one repeats)."""

    replies: list[Callable[[dict[str, Any]], Reply]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def next_reply(self, body: dict[str, Any]) -> Reply:
        self.requests.append(body)
        index = min(len(self.requests), len(self.replies)) - 1
        return self.replies[index](body)


def json_reply(payload: dict[str, Any], status: int = 200, **headers: str) -> Reply:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(payload).encode()


def embeddings(dimension: int) -> Callable[[dict[str, Any]], Reply]:
    """Deterministic vectors: text i gets a one-hot-ish vector from its length."""

    def reply(body: dict[str, Any]) -> Reply:
        inputs = body["input"]
        data = []
        for index, text in reversed(list(enumerate(inputs))):  # out of order on purpose
            vector = [0.0] * dimension
            vector[len(text) % dimension] = 1.0
            data.append({"object": "embedding", "index": index, "embedding": vector})
        return json_reply(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    return reply


def chat(content: str | Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], Reply]:
    """A chat completion whose message is `content` (or what it makes of the request)."""

    def reply(body: dict[str, Any]) -> Reply:
        text = content(body) if callable(content) else content
        return json_reply(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    return reply


def rate_limited(body: dict[str, Any]) -> Reply:
    return json_reply(
        {"error": {"message": "slow down", "type": "rate_limit"}}, 429, **{"retry-after-ms": "10"}
    )


def unauthorised(body: dict[str, Any]) -> Reply:
    return json_reply({"error": {"message": "bad key", "type": "invalid_api_key"}}, 401)


def garbage(body: dict[str, Any]) -> Reply:
    return 200, {"Content-Type": "application/json"}, b"{not json at all"


@contextmanager
def serve(*replies: Callable[[dict[str, Any]], Reply]) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(list(replies))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            status, headers, payload = fake.next_reply(json.loads(self.rfile.read(length)))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    # A short poll: shutdown() waits for it, once per test.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
