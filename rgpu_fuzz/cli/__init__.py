"""The `rgpu-fuzz` command (README).

Subcommands live in their own modules and are imported only when used, so `--help` and
`check` start fast. `main(argv) -> int` is what tests call. A user mistake is one line on
stderr (with a file:line:col where there is one) and a non-zero exit; only a bug in
rgpu-fuzz itself prints a traceback (exit 70).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from rgpu_fuzz import __version__
from rgpu_fuzz.model.errors import HarnessBug, RgpuError

EXIT_USAGE = 2
EXIT_BUG = 70

COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("rgpu_fuzz.cli.check", "parse and type-check a kernel file"),
    "run": ("rgpu_fuzz.cli.run", "run case files through pipelines"),
    "gen": ("rgpu_fuzz.cli.gen", "generate random well-defined cases"),
    "pipelines": ("rgpu_fuzz.cli.pipelines", "list the registered pipelines"),
    "bench": ("rgpu_fuzz.bench.command", "measure throughput; JSON out"),
    "campaign": ("rgpu_fuzz.cli.campaign", "run a fuzzing campaign (generate, run, judge, "
                 "reduce, store)"),
    "triage": ("rgpu_fuzz.cli.triage", "list, show, promote and merge bucketed findings"),
    "report": ("rgpu_fuzz.cli.report", "Markdown issue report of a filed case"),
    "reproduce": ("rgpu_fuzz.cli.reproduce", "rerun a filed case; exit 1 while it diverges"),
    "inspect": ("rgpu_fuzz.cli.inspect", "LLVM IR, assembly, code object, kernel descriptor, "
                "metadata and kernarg layout of a kernel on an AMD GPU"),
}


class UserError(RgpuError):
    """A mistake in what the user asked for; `str()` is the one line printed."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, with the arguments of `command` only (None: none), so
    that only the chosen command's module is imported: `--help` imports none of them."""
    parser = argparse.ArgumentParser(
        prog="rgpu-fuzz",
        description="Differential fuzzing of a Rust-on-AMD-GPU compiler stack.",
        epilog="example: rgpu-fuzz run corpus/*.toml --pipelines ref",
    )
    parser.add_argument("--version", action="version", version=f"rgpu-fuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, helptext) in COMMANDS.items():
        if name != command:
            sub.add_parser(name, help=helptext, add_help=False).set_defaults(_module=module)
            continue
        mod = importlib.import_module(module)
        p = sub.add_parser(name, help=helptext, description=mod.__doc__,
                           epilog=f"example: {mod.EXAMPLE}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option (the top-level
    parser has no option that takes a value)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(words))
    args = parser.parse_args(words)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    module = importlib.import_module(args._module)
    try:
        return int(module.execute(args))
    except UserError as e:
        print(f"rgpu-fuzz {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except HarnessBug:
        traceback.print_exc()
        print(f"rgpu-fuzz {args.command}: internal error (a bug in rgpu-fuzz; please report "
              "it with the traceback above)", file=sys.stderr)
        return EXIT_BUG
    except RgpuError as e:  # what the user gave cannot be used: its one line
        line = str(e).splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"rgpu-fuzz {args.command}: error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception:
        traceback.print_exc()
        print(f"rgpu-fuzz {args.command}: internal error (a bug in rgpu-fuzz; please report "
              "it with the traceback above)", file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
