"""Errors a user can cause. The CLI turns each into one line and a non-zero exit, never a traceback."""


class KerntailorError(Exception):
    """Base of every error a user can cause; the message says what to do."""

    exit_code = 2


class ProblemError(KerntailorError):
    """A problem file that cannot be loaded: syntax error, missing Model/get_inputs, inputs that fail."""


class TargetError(KerntailorError):
    """An unknown target name, or a GPU that cannot be detected."""


class CaptureError(KerntailorError):
    """A model that torch.export cannot trace, or an op the IR does not support."""


class CandidateError(KerntailorError):
    """A candidate file that cannot be loaded (no ModelNew, syntax error)."""


class ProposerError(KerntailorError):
    """The LLM proposer cannot run: the `llm` extra or an endpoint variable is missing, the endpoint fails."""
