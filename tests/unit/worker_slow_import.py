"""A job module that takes long to import, like llvmlite on a loaded machine."""

import time

time.sleep(1.5)


def answer(_: object) -> int:
    return 42
