"""The one error of the code-object layer.

A code object that cannot be read (truncated, not ELF, not AMDGPU, a malformed note) is a fact
about the bytes under test, so callers turn `CodeObjectError` into a value at their boundary
(an outcome, a CLI line); it is never a harness bug. pyelftools' and msgpack's own exceptions
are converted to it in exactly one place each (`elf.py`, `notes.py`).
"""

from __future__ import annotations

from rgpu_fuzz.model.errors import RgpuError

__all__ = ["CodeObjectError"]


class CodeObjectError(RgpuError):
    """Bytes that are not a readable AMDGPU code object; `str()` is one line."""
