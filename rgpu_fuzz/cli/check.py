"""Parse and type-check kernel files; print rustc-style diagnostics (exit 1) or nothing (exit 0)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.source import DiagnosticError

EXAMPLE = "rgpu-fuzz check kernel.rs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE.rs", help="kernel source files")


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError

    failed = 0
    for name in args.files:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"{name}: cannot read: {getattr(e, 'strerror', None) or e}") from None
        try:
            check_source(text, name)
        except DiagnosticError as e:
            failed += 1
            for d in e.diagnostics:
                print(d.render(), file=sys.stderr)
                print(file=sys.stderr)
            n = len(e.diagnostics)
            print(f"{name}: {n} error{'s' if n != 1 else ''}", file=sys.stderr)
    return 1 if failed else 0
