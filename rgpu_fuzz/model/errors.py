"""The root of rgpu-fuzz's own exceptions.

A failure of the code under test is never an exception: it is an `Outcome` value. What is
left are two kinds of exception, both below one root so the command line can tell them apart:

* `RgpuError` itself (and its subclasses other than `HarnessBug`): something the user gave
  cannot be used — a pipeline spec, a plugin file, a policy, a case file. `str()` is one line,
  with a location where there is one; the command prints it and exits 2.
* `HarnessBug`: rgpu-fuzz broke its own invariant. Nothing below the command line catches it;
  the command prints the traceback and exits 70.
"""

from __future__ import annotations


class RgpuError(Exception):
    """An error of the harness, not of the code under test; `str()` is one line."""


class HarnessBug(RgpuError):
    """A bug in rgpu-fuzz itself: never caught below the command line (exit 70)."""


__all__ = ["HarnessBug", "RgpuError"]
