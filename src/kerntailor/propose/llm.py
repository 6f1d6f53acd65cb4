"""The chat client: any OpenAI-compatible endpoint (vLLM, SGLang, Ollama, llama.cpp's server, hosted APIs).

    config = LLMConfig.from_env()          # KERNTAILOR_LLM_BASE_URL, KERNTAILOR_LLM_MODEL, KERNTAILOR_LLM_API_KEY
    reply = ChatClient(config).complete([("system", ...), ("user", ...)], max_tokens=8192)

The `openai` package is the optional extra `kerntailor[llm]`; it is imported only here, only when a client is
made, so the core installs and runs without it. The only network destination is `base_url`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from kerntailor.errors import ProposerError

ENV_BASE_URL = "KERNTAILOR_LLM_BASE_URL"
ENV_MODEL = "KERNTAILOR_LLM_MODEL"
ENV_API_KEY = "KERNTAILOR_LLM_API_KEY"
NO_KEY = "none"  # local servers (vLLM, Ollama, llama.cpp) accept any key; OPENAI_API_KEY is never sent elsewhere


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = field(default=NO_KEY, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig:
        env = os.environ if environ is None else environ
        missing = [n for n in (ENV_BASE_URL, ENV_MODEL) if not env.get(n, "").strip()]
        if missing:
            raise ProposerError(f"the LLM proposer needs {' and '.join(missing)} (e.g. {ENV_BASE_URL}="
                                f"http://localhost:8000/v1 {ENV_MODEL}=<served model name>); see the README")
        return cls(env[ENV_BASE_URL].strip().rstrip("/"), env[ENV_MODEL].strip(),
                   env.get(ENV_API_KEY, "").strip() or NO_KEY)


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    seconds: float
    usage_reported: bool = True   # False: the server sent no usage; the counts are estimates (4 chars a token)


def require_openai():
    try:
        import openai
    except ImportError:
        raise ProposerError("the LLM proposer needs the openai client: pip install 'kerntailor[llm]'") from None
    return openai


class ChatClient:
    """One endpoint and model. `complete` sends one chat request and returns the Reply, or raises
    ProposerError in one line when the endpoint fails (unreachable, HTTP error, a reply that is not the JSON it
    should be, no answer in time).

    Time: a request with `timeout_s` ends within it, retries included: the openai client's own retries (each
    with the full timeout) are off, `complete` retries a connection error or an HTTP 5xx/429 itself while time
    is left, and each try runs in a daemon thread that is abandoned at the deadline (httpx's timeout bounds
    each read, not a reply trickled out byte by byte)."""

    RETRY_PAUSE_S = 1.0

    def __init__(self, config: LLMConfig, *, timeout_s: float = 600.0, max_retries: int = 2):
        self.config = config
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._openai = require_openai()
        self._client = self._openai.OpenAI(base_url=config.base_url, api_key=config.api_key,
                                           timeout=timeout_s, max_retries=0)

    def complete(self, messages: list[tuple[str, str]], *, max_tokens: int, temperature: float | None = None,
                 seed: int | None = None, timeout_s: float | None = None) -> Reply:
        kwargs: dict = dict(model=self.config.model, max_tokens=max(1, int(max_tokens)),
                            messages=[{"role": r, "content": c} for r, c in messages])
        if temperature is not None:
            kwargs["temperature"] = temperature
        if seed is not None:
            kwargs["seed"] = seed
        started = time.monotonic()
        deadline = started + max(1.0, self.timeout_s if timeout_s is None else timeout_s)
        retryable = (self._openai.APIConnectionError, self._openai.InternalServerError, self._openai.RateLimitError)
        tries = 0
        while True:
            tries += 1
            try:
                response = self._create(kwargs, deadline)
                break
            except retryable as e:
                if tries > self.max_retries or time.monotonic() + self.RETRY_PAUSE_S >= deadline:
                    raise self._failed(e) from None
                time.sleep(self.RETRY_PAUSE_S)
            except self._openai.APIError as e:
                raise self._failed(e) from None
            except ValueError as e:   # a 200 whose body is not whole JSON (a reply cut off in transit)
                raise ProposerError(f"the LLM endpoint {self.config.base_url} sent a reply that is not valid JSON "
                                    f"({_one_line(e)})") from None
        seconds = time.monotonic() - started
        try:
            choice = response.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise ProposerError(f"the LLM endpoint {self.config.base_url} sent a reply with no message") from None
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            return Reply(text, int(usage.prompt_tokens), int(usage.completion_tokens or 0), choice.finish_reason,
                         seconds)
        prompt_chars = sum(len(c) for _, c in messages)
        return Reply(text, prompt_chars // 4, len(text) // 4, choice.finish_reason, seconds, usage_reported=False)

    def _failed(self, e: BaseException) -> ProposerError:
        return ProposerError(f"the LLM endpoint {self.config.base_url} failed: {_one_line(e)}")

    def _create(self, kwargs: dict, deadline: float):
        """One request, answered by `deadline` or abandoned (ProposerError); the openai client's exceptions pass."""
        import threading

        box: dict = {}
        window = max(0.0, deadline - time.monotonic())

        def call():
            try:
                box["response"] = self._call(dict(kwargs), max(0.1, deadline - time.monotonic()))
            except BaseException as e:  # noqa: BLE001  handed to the waiting thread
                box["error"] = e

        worker = threading.Thread(target=call, name="kerntailor-llm-request", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        # the client's own timeout is this deadline too: its timeout error, raised a moment before the join
        # returns, is the same event as the thread still waiting (a race seen under load in CI)
        timed_out = isinstance(box.get("error"), getattr(self._openai, "APITimeoutError", ()))
        if worker.is_alive() or timed_out:
            raise ProposerError(f"the LLM endpoint {self.config.base_url} did not answer within {window:.1f} s "
                                "(the time left to the proposer)")
        if "error" in box:
            raise box["error"]
        return box["response"]

    def _call(self, kwargs: dict, timeout: float):
        kwargs["timeout"] = timeout
        try:
            return self._client.chat.completions.create(**kwargs)
        except self._openai.BadRequestError as e:
            if "max_completion_tokens" not in str(e):
                raise
            # newer hosted models take the cap under its new name only
            kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
            return self._client.chat.completions.create(**kwargs)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:300]}" if text else type(e).__name__
