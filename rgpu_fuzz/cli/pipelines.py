"""List the registered pipelines (built-in, entry points, --plugin files) and whether each
can run here."""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from rgpu_fuzz.cli.console import make_console
from rgpu_fuzz.pipelines.base import PipelineSpec
from rgpu_fuzz.pipelines.registry import PipelineError, Registry

EXAMPLE = "rgpu-fuzz pipelines --plugin my_compiler.py"
DEFAULT_PIPELINES = "ref,llvm-cpu:O0,llvm-cpu:O3"
"""What `run` compares when no `--pipelines` is given: the arbiter and our lowering through
LLVM unoptimised and optimised (rustc-cpu is left out: it costs a rustc build per case)."""


def add_plugin_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                   help="import a file that defines Pipeline subclasses (repeatable)")


def registry_from(args: argparse.Namespace) -> Registry:
    from rgpu_fuzz.cli import UserError

    reg = Registry()
    for path in args.plugin:
        try:
            reg.load_plugin(path)
        except PipelineError as e:
            raise UserError(str(e)) from None
    return reg


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_plugin_argument(p)


def execute(args: argparse.Namespace) -> int:
    reg = registry_from(args)
    table = Table("pipeline", "available", "options", "description")
    for name in reg.names():
        cls = reg.cls(name)
        reason = cls(PipelineSpec(name)).unavailable_reason()
        available = "yes" if reason is None else f"unavailable ({escape(reason)})"
        table.add_row(name, available, cls.options_text(), cls.description)
    make_console().print(table)
    return 0
