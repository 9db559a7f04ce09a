"""`ask_runtime`: how `hip` and `nvptx-gpu` learn what a GPU runtime offers, in a real child
process; every way the child can fail is one line, never an exception here."""

from __future__ import annotations

from rgpu_fuzz.pipelines.device_probe import ask_runtime


def _ask(script: str, module: str = "json") -> dict[str, object] | str:
    return ask_runtime(module=module, missing="not installed", script=script, runtime="TEST")


def test_missing_package_is_the_given_reason_and_runs_nothing() -> None:
    assert _ask("raise SystemExit(9)", module="no_such_module_rgpu") == "not installed"


def test_answer_is_the_last_json_line() -> None:
    assert _ask("print('noise'); print('{\"archs\": [\"gfx942\"]}')") == {"archs": ["gfx942"]}


def test_reason_from_the_child() -> None:
    assert _ask("print('{\"reason\": \"no AMD GPU visible\"}')") == "no AMD GPU visible"


def test_child_death_is_named() -> None:
    got = _ask("import os, signal, sys; sys.stderr.write('boom\\n'); "
               "os.kill(os.getpid(), signal.SIGSEGV)")
    assert got == "probing TEST ended by SIGSEGV: boom"


def test_no_json_is_one_line() -> None:
    got = _ask("print('[1, 2')")
    assert isinstance(got, str) and got.startswith("probing TEST printed no answer")
    assert _ask("print('[1, 2]')") == "probing TEST printed no answer: '[1, 2]\\n'"
