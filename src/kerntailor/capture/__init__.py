"""Stage 2: capture. torch.export on meta tensors → core ATen → the project's IR, with costs."""

from kerntailor.capture.capture import Capture, capture_problem

__all__ = ["Capture", "capture_problem"]
