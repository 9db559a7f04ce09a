"""Check a case's kernel once and match its arguments, for every pipeline that needs the AST.

A case whose kernel does not check, or whose arguments do not fit the kernel, is outside the
language: every pipeline answers `Rejected(invalid-case)` with the first diagnostic.
"""

from __future__ import annotations

from functools import lru_cache

from rgpu_fuzz.casefile import signature_mismatch
from rgpu_fuzz.lang.ast import Fn
from rgpu_fuzz.lang.checker import CheckedModule, check, check_source
from rgpu_fuzz.lang.features import _module_of
from rgpu_fuzz.lang.source import DiagnosticError, SourceFile
from rgpu_fuzz.model.case import Case
from rgpu_fuzz.model.outcome import Rejected, RejectReason


@lru_cache(maxsize=256)
def _checked(kernel: str, name: str) -> CheckedModule | DiagnosticError:
    # The syntax tree features and oracles already parsed (cached on the text; the checker
    # builds a typed copy and leaves it as it is); a kernel that does not parse is parsed
    # again here for its diagnostics under this file name.
    module = _module_of(kernel)
    try:
        if module is None:
            return check_source(kernel, name)
        return check(module, SourceFile(name, kernel))
    except DiagnosticError as e:
        return e


def prepare(case: Case) -> tuple[CheckedModule, Fn] | Rejected:
    """The checked module and the entry kernel, or why the case is not a valid test."""
    checked = _checked(case.kernel, f"<case {case.id}>")
    if isinstance(checked, DiagnosticError):
        first = checked.diagnostics[0].headline() if checked.diagnostics else "invalid kernel"
        return Rejected(reason=RejectReason.INVALID_CASE, detail=first)
    kernel = checked.fns.get(case.entry)
    if kernel is None or not kernel.kernel:
        return Rejected(reason=RejectReason.INVALID_CASE,
                        detail=f"no kernel named `{case.entry}` (kernels: "
                               f"{', '.join(checked.kernels) or 'none'})")
    mismatch = signature_mismatch(case, kernel)
    if mismatch:
        return Rejected(reason=RejectReason.INVALID_CASE, detail=mismatch)
    return checked, kernel


def clear_cache() -> None:
    """Forget every checked kernel (benchmarks measure the cold path with it)."""
    _checked.cache_clear()
