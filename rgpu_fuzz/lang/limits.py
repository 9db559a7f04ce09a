"""The documented size limits of kernels and cases (docs/language.md "Limits").

One table, read by the parser, the checker and the case-file reader, so that input past a
limit is refused up front with one line, before any stage spends time or memory on it. Each
limit is far above what the generators produce and what a hand-written reproducer needs, and
low enough that the largest accepted case runs in seconds on the reference interpreter.
"""

from __future__ import annotations

from typing import Final

MAX_SOURCE_BYTES: Final = 256 * 1024
"""Kernel source text, UTF-8 bytes. Checking is linear; 256 KiB takes about a second."""

MAX_NESTING: Final = 128
"""Nested blocks, expressions and types in a kernel, counted by the parser."""

MAX_LOCAL_ARRAY_LEN: Final = 4096
"""Elements of one local array `[T; N]` (private memory, one copy per thread)."""

MAX_SHARED_BYTES: Final = 64 * 1024
"""All `#[shared]` statics of a kernel file together: the LDS one workgroup can allocate on
gfx90a/gfx942 (AMDGPUUsage, "Memory Spaces": 64 KiB of LDS per work-group)."""

MAX_THREADS_PER_BLOCK: Final = 1024
"""`block` x*y*z: the largest work-group size on AMDGPU (and CUDA)."""

MAX_LAUNCH_THREADS: Final = 1 << 22
"""Threads of one launch, `grid` x*y*z times `block` x*y*z."""

MAX_BUFFER_LEN: Final = 1 << 24
"""Elements of one buffer argument."""

MAX_BUFFER_BYTES: Final = 1 << 28
"""All buffer arguments of a case together, bytes (256 MiB)."""

MAX_CASE_BYTES: Final = 16 * 1024 * 1024
"""A case file, bytes (a kernel at its limit plus `values` initialisers)."""

MAX_TOML_NESTING: Final = 32
"""Nested arrays and inline tables in a case file (a case needs 2)."""
