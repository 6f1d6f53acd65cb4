"""The candidate's sandbox and the referee's processes (#15): what a candidate can reach, what survives it, and
what killing the CLI leaves behind.

Unit tier: the environment allow-list. Interpreter tier: real verifications. A correct kernel that looks for
credentials, the network and writable folders passes, i.e. it sees none of them; a hostile one that detaches
children, connects and writes leaves nothing behind; killing `kerntailor verify`, `generate` or `bench` (SIGKILL,
SIGTERM, SIGINT) at a moment when candidate code runs leaves no referee or candidate process and no kernel.py.
The candidates that reach for these things are stopped first by the static check's rule "reach", so they are
judged with verify_dynamic (the static check skipped): what is tested here is the sandbox itself.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kerntailor.problem import load_problem
from kerntailor.verify import VerifySettings
from kerntailor.verify.referee import verify_dynamic
from kerntailor.verify.sandbox import candidate_env, denied, scrubbed_env

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).parent / "candidates"
PROBLEMS = HERE / "problems"
REFEREE_MODULES = ("kerntailor.verify.launch", "kerntailor.verify.judge", "kerntailor.verify.candidate")


# --- the environment ---------------------------------------------------------------------------------------

def test_allow_list_keeps_paths_and_drops_every_credential():
    source = {"PATH": "/usr/bin", "PYTHONPATH": "src", "LD_LIBRARY_PATH": "/lib", "CUDA_VISIBLE_DEVICES": "0",
              "TRITON_CACHE_DIR": "/c", "LC_ALL": "C", "HOME": "/root", "TMPDIR": "/tmp",
              "KERNTAILOR_LLM_API_KEY": "sk-1", "KERNTAILOR_LLM_BASE_URL": "http://x", "OPENAI_API_KEY": "sk-2",
              "GITHUB_TOKEN": "t", "AWS_ACCESS_KEY_ID": "a", "SSH_AUTH_SOCK": "/s", "DB_PASSWORD": "p",
              "TRITON_SECRET": "s", "MY_CREDENTIALS": "c", "EDITOR": "vi"}
    cand = scrubbed_env(source)
    assert cand == {"PATH": "/usr/bin", "PYTHONPATH": "src", "LD_LIBRARY_PATH": "/lib", "CUDA_VISIBLE_DEVICES": "0",
                    "TRITON_CACHE_DIR": "/c", "LC_ALL": "C"}
    judge = scrubbed_env(source, judge=True)
    assert judge["HOME"] == "/root" and judge["TMPDIR"] == "/tmp"
    assert not any(denied(k) for k in judge) and "KERNTAILOR_LLM_BASE_URL" not in judge
    env = candidate_env(judge, "/sandbox/home", interpreter=True, inductor_cache=None)
    assert env["HOME"] == "/sandbox/home" and env["TMPDIR"] == "/sandbox/home/tmp" and env["TRITON_INTERPRET"] == "1"
    assert "sk-1" not in json.dumps(env) and "sk-2" not in json.dumps(env)


def test_candidate_compiles_the_baseline_in_process_unless_told_otherwise():
    """torch.compile's worker pool (one process per CPU, each importing torch) is left out of the candidate process:
    TORCHINDUCTOR_COMPILE_THREADS=1 by default, the user's own setting kept."""
    env = candidate_env({"PATH": "/usr/bin"}, "/h", interpreter=False, inductor_cache=None)
    assert env["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    env = candidate_env({"TORCHINDUCTOR_COMPILE_THREADS": "8"}, "/h", interpreter=False, inductor_cache=None)
    assert env["TORCHINDUCTOR_COMPILE_THREADS"] == "8"


# --- what a candidate can reach ----------------------------------------------------------------------------

class _Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.sock.settimeout(0.2)
        self.port, self.accepted, self.stop = self.sock.getsockname()[1], 0, False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.accepted += 1
                conn.close()
            except OSError:
                continue

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """Credentials where a candidate would look (the CLI's environment, a home's ~/.ssh), a listener and a
    canary folder; returns what the candidate templates need."""
    secret = "sk-kerntailor-test-" + secrets.token_hex(8)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {secret}\n")
    canary = tmp_path / "canary"
    canary.mkdir()
    for name in ("KERNTAILOR_LLM_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, secret)
    monkeypatch.setenv("HOME", str(home))
    listener = _Listener()
    yield {"secret": secret, "home": str(home), "port": listener.port, "canary": str(canary),
           "token": "kt-escape-" + secrets.token_hex(6), "listener": listener, "tmp": tmp_path}
    listener.close()


def _fill(template: str, tmp: Path, settings: dict) -> Path:
    values = {k: v for k, v in settings.items() if isinstance(v, (str, int))}
    text = (HERE / template).read_text().replace("SETTINGS = {}", f"SETTINGS = {values!r}", 1)
    path = tmp / template
    path.write_text(text)
    return path


def _pids_with(token: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if token.encode() in Path(f"/proc/{d}/cmdline").read_bytes() and _alive(int(d)):
                    out.append(int(d))
            except OSError:
                continue
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _survivors(pids, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.2)
    return [f"{p}: {_cmdline(p)[:120]}" for p in pids if _alive(p)]


def test_the_probe_is_not_blind(planted):
    """Control: run here, outside any sandbox, the probe finds everything that was planted."""
    import importlib.util

    cand = _fill("sandbox_probe.py", planted["tmp"], planted)
    spec = importlib.util.spec_from_file_location("sandbox_probe_control", cand)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = " ".join(module.AT_IMPORT)
    for what in ("KERNTAILOR_LLM_API_KEY", "GITHUB_TOKEN", ".ssh/id_rsa", "listener", "outside its home"):
        assert what in found, found
    _wait_for(lambda: planted["listener"].accepted >= 1, 5, "the listener to count the probe's connection")
    (Path(planted["canary"]) / "kerntailor-escaped").unlink()


@pytest.mark.interpreter
def test_a_correct_kernel_that_looks_for_secrets_and_the_network_sees_neither(planted):
    cand = _fill("sandbox_probe.py", planted["tmp"], planted)
    v = verify_dynamic(load_problem(PROBLEMS / "softmax_rows.py"), cand,
                       VerifySettings(device="cpu", variants=("small", "odd"), timeout_s=180))
    assert v.passed, f"{v.check}: {v.reason}"
    assert v.sandbox and v.sandbox.startswith("sandboxed:") and "network none" in v.sandbox
    assert planted["listener"].accepted == 0
    assert not any(Path(planted["canary"]).iterdir())
    assert planted["secret"] not in json.dumps(v.to_dict())


@pytest.mark.interpreter
def test_a_hostile_candidate_leaves_no_process_connection_or_file(planted):
    cand = _fill("cheat_escape.py", planted["tmp"], planted)
    v = verify_dynamic(load_problem(PROBLEMS / "softmax_rows.py"), cand,
                       VerifySettings(device="cpu", variants=("small",), timeout_s=180))
    assert v.check in (None, "accuracy", "exception", "crash", "library", "edges"), f"{v.check}: {v.reason}"
    assert _survivors(_pids_with(planted["token"]), 5.0) == []
    assert planted["listener"].accepted == 0
    assert not any(Path(planted["canary"]).iterdir())
    assert not Path("/tmp/kerntailor-escaped").exists()


@pytest.mark.interpreter
def test_candidate_code_never_runs_in_the_cli_process():
    """cheat_patch_referee replaces kerntailor's functions in whatever process imports it: none of them changes
    here, and no candidate module is loaded here."""
    from kerntailor.problem import load as load_module
    from kerntailor.verify import checks, tolerance

    before = (load_module.load_problem, tolerance.compare, checks.unwritten, checks.check_structure)
    v = verify_dynamic(load_problem(PROBLEMS / "softmax_rows.py"), HERE / "cheat_patch_referee.py",
                       VerifySettings(device="cpu", variants=("small",)))
    assert v.check == "accuracy", f"{v.check}: {v.reason}"
    assert (load_module.load_problem, tolerance.compare, checks.unwritten, checks.check_structure) == before
    assert not [m for m in sys.modules if m.startswith("kerntailor_candidate")]
    assert load_problem(PROBLEMS / "relu_small.py").name == "relu_small"


# --- random references -------------------------------------------------------------------------------------

@pytest.mark.interpreter
@pytest.mark.parametrize("problem", ["random_dropout", "random_noise"])
def test_a_random_reference_is_refused_in_one_line(problem, tmp_path):
    from typer.testing import CliRunner

    from kerntailor.cli import app

    zeros = tmp_path / "zeros.py"   # with the tolerance widened to cover the noise, zeros would pass
    zeros.write_text("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                     "    def forward(self, x):\n        return torch.zeros_like(x)\n")
    for cand in (zeros, HERE / "ok_relu.py"):
        r = CliRunner().invoke(app, ["verify", str(PROBLEMS / f"{problem}.py"), str(cand), "--device", "cpu"])
        assert r.exit_code == 2, r.output
        assert r.output.startswith("kerntailor: error: ") and len(r.output.strip().splitlines()) == 1
        assert "the reference is random: put it in eval mode or fix its generator" in r.output


@pytest.mark.interpreter
def test_dropout_in_eval_mode_is_not_random():
    from kerntailor.verify import verify_candidate

    v = verify_candidate(load_problem(PROBLEMS / "dropout_eval.py"), HERE / "ok_relu.py", VerifySettings(device="cpu"))
    assert v.passed, f"{v.check}: {v.reason}"


@pytest.mark.interpreter
def test_dropout_in_training_mode_is_a_random_reference_refused_in_one_line():
    from kerntailor.errors import ProblemError
    from kerntailor.verify import verify_candidate

    with pytest.raises(ProblemError, match="the reference is random") as info:
        verify_candidate(load_problem(PROBLEMS / "dropout_train.py"), HERE / "ok_relu.py", VerifySettings(device="cpu"))
    assert "\n" not in str(info.value)


# --- killing the CLI ---------------------------------------------------------------------------------------

def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _kill_when(cmd: list[str], ready, sig: int, settle_s: float = 1.0) -> dict[int, str]:
    """Start `cmd`, wait until `ready(descendants)` holds, send `sig` to it alone; its process tree at the kill
    (pid -> command line)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        _wait_for(lambda: ready(_descendants(proc.pid)), 240, f"{cmd[3:5]} to reach the moment to kill it")
        time.sleep(settle_s)
        tree = {p: _cmdline(p) for p in _descendants(proc.pid)}
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        return tree
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _running(module: str):
    return lambda pids: [p for p in pids if module in _cmdline(p)]


@pytest.mark.interpreter
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["KILL", "TERM", "INT"])
def test_killing_verify_while_a_candidate_hangs_leaves_no_process(sig):
    cmd = [sys.executable, "-m", "kerntailor", "verify", str(PROBLEMS / "relu_small.py"),
           str(HERE / "cheat_sleeps.py"), "--device", "cpu", "--timeout", "300"]
    tree = _kill_when(cmd, _running("kerntailor.verify.candidate"), sig, settle_s=3.0)
    assert len([p for p, cmd in tree.items() if any(m in cmd for m in REFEREE_MODULES)]) >= 3  # launcher, judge, cand.
    assert _survivors(tree, 10.0) == []


@pytest.mark.interpreter
def test_killing_a_run_leaves_no_detached_child_of_the_candidate(tmp_path):
    token = "kt-detach-" + secrets.token_hex(6)
    cand = _fill("cheat_detach_hang.py", tmp_path, {"token": token})
    driver = ("import sys; from kerntailor.problem import load_problem; from kerntailor.verify import VerifySettings;"
              "from kerntailor.verify.referee import verify_dynamic;"
              "verify_dynamic(load_problem(sys.argv[1]), sys.argv[2], VerifySettings(device='cpu', timeout_s=300))")
    proc = subprocess.Popen([sys.executable, "-c", driver, str(PROBLEMS / "relu_small.py"), str(cand)], cwd=ROOT,
                            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _pids_with(token), 240, "the candidate's detached child")
        tree = _descendants(proc.pid) | set(_pids_with(token))
        proc.kill()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _survivors(tree | set(_pids_with(token)), 10.0) == []


@pytest.mark.interpreter
@pytest.mark.parametrize("command", ["generate", "bench"])
def test_killing_generate_or_bench_while_judging_leaves_no_process_and_no_kernel(command, tmp_path, monkeypatch):
    out = tmp_path / "out"
    if command == "generate":
        cmd = [sys.executable, "-m", "kerntailor", "generate", str(PROBLEMS / "relu_small.py"), "--target",
               "mi300x", "--out", str(out), "--candidates", "2", "--budget", "5", "--no-store"]
    else:
        suite = tmp_path / "suite"
        suite.mkdir()
        for name in ("relu_small", "softmax_rows"):
            shutil.copy(PROBLEMS / f"{name}.py", suite)
        cmd = [sys.executable, "-m", "kerntailor", "bench", str(suite), "--target", "mi300x", "--out", str(out),
               "--jobs", "2", "--candidates", "2", "--budget", "5"]
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "kt_home"))   # bench uses the store: not the user's
    tree = _kill_when(cmd, _running("kerntailor.verify.candidate"), signal.SIGKILL, settle_s=0.5)
    referee = [p for p, cmd in tree.items() if any(m in cmd for m in REFEREE_MODULES)]
    assert referee, "killed before the referee ran"
    assert _survivors(referee, 10.0) == []
    assert _survivors(tree, 60.0) == []
    assert list(out.rglob("kernel.py")) == []   # killed before any verdict: nothing placed


# --- GPU tier ------------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_sandbox_keeps_the_gpu_and_outputs_come_by_cuda_ipc(planted):
    cand = _fill("sandbox_probe.py", planted["tmp"], planted)
    v = verify_dynamic(load_problem(PROBLEMS / "softmax_rows.py"), cand, VerifySettings(device="cuda"))
    assert v.passed, f"{v.check}: {v.reason}"
    assert v.mode.startswith("gpu cuda") and v.sandbox.startswith("sandboxed:")
    assert not [n for n in v.notes if "CUDA IPC failed" in n], v.notes   # outputs by IPC, not by bytes
    assert planted["listener"].accepted == 0 and not any(Path(planted["canary"]).iterdir())


@pytest.mark.gpu
def test_gpu_a_hostile_candidate_leaves_nothing(planted):
    cand = _fill("cheat_escape.py", planted["tmp"], planted)
    verify_dynamic(load_problem(PROBLEMS / "softmax_rows.py"), cand, VerifySettings(device="cuda"))
    assert _survivors(_pids_with(planted["token"]), 5.0) == []
    assert planted["listener"].accepted == 0 and not any(Path(planted["canary"]).iterdir())


@pytest.mark.gpu
def test_gpu_timing_runs_in_the_sandbox_after_the_verdict():
    """--time: candidate vs eager vs torch.compile timed in the candidate's process (the reference is sent
    only after the verdict), the floors computed by the judge, the GPU's lock held by the judge."""
    from kerntailor.verify import verify_candidate

    v = verify_candidate(load_problem(PROBLEMS / "relu_small.py"), HERE / "ok_relu.py",
                         VerifySettings(device="cuda", time=True))
    assert v.passed and v.checks[-1] == "speed", f"{v.check}: {v.reason} {v.notes}"
    names = [t["name"] for t in v.timing["timings"]]
    assert names[:2] == ["candidate", "eager"] and v.timing["physics_floor_s"] > 0
    assert v.sandbox.startswith("sandboxed:")
