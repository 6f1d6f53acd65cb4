"""Stage: propose (LLM). Kernels written by a language model behind any OpenAI-compatible endpoint, judged by
the same build -> referee -> stopwatch path as every candidate, every request, reply and verdict stored.

    from kerntailor.propose import ProposerSettings, run_proposer
    result = run_proposer("problems/level1/relu.py", ProposerSettings(target="mi300x", attempts=2, turns=3))
    result.passed, result.source, result.kernel_path, result.verdict, result.median_us, result.stopped

    run_proposer(problem_path, settings: ProposerSettings, store=None, progress=None, *, client=None)
        -> ProposerResult
    ProposerSettings: target, dtype, attempts, turns, max_tokens, max_seconds, reply_tokens, temperature,
        out_dir, seed_kernel, measured (None: the target is this machine's GPU), cross_compile,
        build_timeout_s, verify_timeout_s, request_timeout_s, max_retries, use_store, store_path,
        run_id (record into / resume this run), prompt_version
    seed_kernel(problem_path, kernel_path, settings) -> LlmTurn   (judge a user's kernel; no endpoint needed)

The endpoint: KERNTAILOR_LLM_BASE_URL (e.g. http://localhost:8000/v1 for `vllm serve`, http://localhost:11434/v1
for Ollama), KERNTAILOR_LLM_MODEL, and KERNTAILOR_LLM_API_KEY where the server wants one. The `openai` client
is the optional extra `pip install 'kerntailor[llm]'`; it is imported only when the proposer runs.
Pieces: llm.py (client), prompts/ (versioned templates) and prompts.py (facts), extract.py (code from a reply),
build.py + probe.py (import, launches, cross-compile), feedback.py (what the next turn is told), loop.py.
Records: kerntailor.store.llm (tables llm_attempts, llm_turns; each kernel also a `candidates` row, family llm).
"""

from kerntailor.propose.loop import ProposerResult, ProposerSettings, run_proposer, seed_kernel
from kerntailor.store.llm import LlmTurn

__all__ = ["LlmTurn", "ProposerResult", "ProposerSettings", "run_proposer", "seed_kernel"]
