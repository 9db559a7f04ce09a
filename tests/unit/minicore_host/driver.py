"""Runs kernels of a host build of the rustc-amdgpu crate (the minicore with `gpu_host.rs`),
one process per batch: reads a JSON job on stdin, prints one JSON line per case.

A trap calls back into `_trapped`, which prints the trap record and ends the process at once
(`os._exit`): the kernel's frames are never unwound, and the caller reruns the cases after it
in a fresh process. Threads of a block run one after another unless the kernel synchronises;
then each is a Python thread (ctypes releases the GIL during the call) and `sync_threads` is
a `threading.Barrier` wait.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from functools import partial
from typing import Any

C_TYPES = {"bool": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
           "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
           "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
           "usize": ctypes.c_uint64, "f32": ctypes.c_uint32, "f64": ctypes.c_uint64}
"""Scalars travel as their bits; floats as same-width integers (the x86-64 C ABI passes
floats in SSE registers, so a float parameter needs the float type)."""
FLOATS = {"f32": ctypes.c_float, "f64": ctypes.c_double}



class Slice(ctypes.Structure):
    """A `&[T]` crossing `extern "C"`: rustc passes it as a (data, len) pair, which the
    x86-64 SysV ABI classifies like this two-field struct (registers, then the stack)."""

    _fields_ = (("data", ctypes.c_void_p), ("len", ctypes.c_size_t))


_current: dict[str, int] = {}


def _trapped(words: ctypes._Pointer) -> None:  # type: ignore[type-arg]
    record = [words[i] for i in range(8)]
    print(json.dumps({"index": _current["index"], "trap": record}), flush=True)
    os._exit(0)


def _run_thread(lib: ctypes.CDLL, kernel: Any, args: list[object], block: list[int],
                grid: list[int], thread: tuple[int, int, int],
                block_idx: tuple[int, int, int]) -> None:
    ids = (ctypes.c_uint32 * 12)(*thread, *block_idx, *block, *grid)
    lib.rgpu_host_set_ids(ids)
    kernel(*args)


def main() -> None:
    job = json.load(sys.stdin)
    lib = ctypes.CDLL(job["lib"])
    barrier_box: list[threading.Barrier] = []
    barrier_cb = ctypes.CFUNCTYPE(None)(lambda: barrier_box[0].wait())
    trapped_cb = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint32))(_trapped)
    cast = ctypes.cast
    lib.rgpu_host_set_hooks(ctypes.c_size_t(cast(barrier_cb, ctypes.c_void_p).value or 0),
                            ctypes.c_size_t(cast(trapped_cb, ctypes.c_void_p).value or 0))
    trap_record = (ctypes.c_uint32 * 8)()
    for case in job["cases"]:
        _current["index"] = case["index"]
        kernel = getattr(lib, case["symbol"])
        argtypes: list[type] = [ctypes.c_void_p]
        args: list[object] = [ctypes.addressof(trap_record)]
        buffers = {}
        for p in case["params"]:
            if p["kind"] == "scalar":
                if p["ty"] in FLOATS:
                    bits_type = C_TYPES[p["ty"]]
                    # the ctypes object itself: its `.value` is a Python float, and widening
                    # an f32 to it would quiet a signalling NaN (semantics case float_bits_exact)
                    value = FLOATS[p["ty"]].from_buffer_copy(bits_type(p["bits"]))
                    argtypes.append(FLOATS[p["ty"]])
                    args.append(value)
                else:
                    argtypes.append(C_TYPES[p["ty"]])
                    args.append(p["bits"] if p["ty"] != "bool" else bool(p["bits"]))
                continue
            data = bytes.fromhex(p["bytes"])
            buf = ctypes.create_string_buffer(data, len(data) or 1)
            buffers[p["name"]] = (buf, len(data))
            argtypes.append(Slice)
            args.append(Slice(ctypes.addressof(buf), p["len"]))
        kernel.argtypes = argtypes
        kernel.restype = None
        grid, block = case["grid"], case["block"]
        run = partial(_run_thread, lib, kernel, args, block, grid)

        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    lds = ctypes.create_string_buffer(max(case["lds"], 1))
                    lib.rgpu_host_set_lds(ctypes.c_size_t(ctypes.addressof(lds)))
                    threads = [(x, y, z) for z in range(block[2]) for y in range(block[1])
                               for x in range(block[0])]
                    if not case["threaded"]:
                        for t in threads:
                            run(t, (bx, by, bz))
                        continue
                    barrier_box[:] = [threading.Barrier(len(threads))]
                    workers = [threading.Thread(target=run, args=(t, (bx, by, bz)), daemon=True)
                               for t in threads]
                    for w in workers:
                        w.start()
                    for w in workers:
                        w.join()
        outputs = {name: buf.raw[:n].hex() for name, (buf, n) in buffers.items()
                   if name in case["outputs"]}
        print(json.dumps({"index": case["index"], "outputs": outputs}), flush=True)


if __name__ == "__main__":
    main()
