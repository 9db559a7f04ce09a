"""lit configuration for the committed `report --upstream` outputs: the tools and features
of docs/llvm-bugs/lit.cfg.py, the tests of this folder (`lit docs/upstream-examples`)."""

# ruff: noqa: F821  (lit provides `config` and `lit_config` to this file)

import os

_here = os.path.dirname(os.path.abspath(__file__))
lit_config.load_config(config, os.path.join(_here, "..", "llvm-bugs", "lit.cfg.py"))
config.name = "rgpu-fuzz upstream examples"
config.test_source_root = _here
config.test_exec_root = _here
config.excludes = ["README.md", "issue.md"]
