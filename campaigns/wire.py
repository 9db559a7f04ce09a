"""Campaign jobs and results as plain data: the one encoding that crosses a process or machine
boundary.

A job (`ChunkJob`, `ReduceJob`, `JudgeJob`) goes to a worker and its result (`ChunkResult`,
`ReduceResult`, `JudgeResult`, with their `Outcome`s and `Verdict`s) comes back as msgpack
of maps, lists, strings, integers, floats and byte strings — never pickle, so a worker on
another machine, another Python or another numpy reads it, and nothing it receives can run
code when decoded.

Rules of the encoding:
* A dataclass is a map of its fields by name plus `"!"`: the class name. Decoding is directed
  by the declared field types (`typing.get_type_hints`), so it only ever builds the classes
  the job and result types name; the tag picks the member of a union of dataclasses
  (`Outcome`) and is checked everywhere else.
* A `Buffer` is its type, its shape and the little-endian bytes of its bit patterns: every
  NaN payload, signalling NaNs and -0.0 come back bit for bit.
* Other floats are IEEE binary64 in msgpack (bit-exact); a numpy float of another width is
  refused rather than widened (widening may quiet a signalling NaN).
* Enums travel as their value, tuples as lists, dicts and Counters as maps, a `Signature`
  as its one text form (so it can key a map).

A field type the codec does not know is a `WireError` at the first encode — in the local
executor too, which goes through this module, so a new field of a job or result that cannot
be sent fails every campaign test rather than only runs on Ray.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import types
import typing
from collections import Counter
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

import msgpack
import numpy as np

from campaigns.jobs import (
    ChunkJob,
    ChunkResult,
    JudgeJob,
    JudgeResult,
    ReduceJob,
    ReduceResult,
)
from oracles.signature import Signature
from rgpu_fuzz.model.errors import HarnessBug
from rgpu_fuzz.model.outcome import Buffer
from rgpu_fuzz.model.scalars import Scalar

T = TypeVar("T")

TAG = "!"
"""The map key that names a dataclass's class."""

Job = ChunkJob | ReduceJob | JudgeJob
Result = ChunkResult | ReduceResult | JudgeResult


class WireError(HarnessBug):
    """A value that cannot be encoded, or bytes that do not decode to the declared type: a
    bug in rgpu-fuzz (or a worker of another version), never the code under test."""


def encode(value: Any) -> bytes:
    """`value` (a job, a result, an outcome...) as msgpack bytes."""
    return msgpack.packb(_plain(value), use_bin_type=True, unicode_errors="surrogatepass")


def decode(data: bytes, kind: Any) -> Any:
    """The value of type `kind` (a class or a union such as `Job`) that `encode` wrote."""
    try:
        plain = msgpack.unpackb(data, raw=False, strict_map_key=False,
                                unicode_errors="surrogatepass")
    except (ValueError, msgpack.UnpackException) as e:
        raise WireError(f"not a wire message: {e}") from None
    return _build(plain, kind, "$")


def encode_job(job: Job) -> bytes:
    return encode(job)


def decode_job(data: bytes) -> Job:
    return typing.cast(Job, decode(data, Job))


def decode_result(data: bytes) -> Result:
    return typing.cast(Result, decode(data, Result))


# ------------------------------------------------------------------ encoding

def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):   # first: a StrEnum is also a str
        return value.value
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, float):  # np.float64 included: a float subclass, same bits
        return float(value)
    if isinstance(value, Buffer):
        return _plain_buffer(value)
    if isinstance(value, Signature):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {TAG: type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = _plain(getattr(value, f.name))
        return out
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise WireError(f"cannot send a {type(value).__module__}.{type(value).__qualname__} "
                    f"over the wire ({value!r:.80})")


def _plain_buffer(buf: Buffer) -> dict[str, Any]:
    arr = np.ascontiguousarray(buf.values, dtype=buf.ty.dtype)
    bits = arr.view(buf.ty.bits_dtype).astype(buf.ty.bits_dtype.newbyteorder("<"), copy=False)
    return {TAG: "Buffer", "ty": buf.ty.value, "shape": list(arr.shape), "bits": bits.tobytes()}


def _build_buffer(plain: Any, where: str) -> Buffer:
    try:
        ty = Scalar(plain["ty"])
        shape = tuple(int(n) for n in plain["shape"])
        raw = np.frombuffer(plain["bits"], dtype=ty.bits_dtype.newbyteorder("<"))
        values = raw.astype(ty.bits_dtype).view(ty.dtype).reshape(shape).copy()
    except (KeyError, TypeError, ValueError) as e:
        raise WireError(f"{where}: not a Buffer ({e})") from None
    return Buffer(ty, values)


# ------------------------------------------------------------------ decoding

@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    module = sys.modules[cls.__module__]
    return get_type_hints(cls, globalns=vars(module))


def _build(plain: Any, kind: Any, where: str) -> Any:
    if kind is Any:
        return plain
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        return _build_union(plain, get_args(kind), where)
    if kind is type(None):
        _expect(plain is None, where, "None", plain)
        return None
    if kind is Buffer:
        return _build_buffer(plain, where)
    if kind is Signature:
        _expect(type(plain) is str, where, "signature text", plain)
        return Signature.parse(plain)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _build_dataclass(plain, kind, where)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(plain)
        except ValueError:
            raise WireError(f"{where}: {plain!r:.80} is not a {kind.__name__}") from None
    if kind is float:
        _expect(isinstance(plain, (float, int)) and not isinstance(plain, bool), where,
                "float", plain)
        return float(plain)
    if kind in (int, str, bytes, bool):
        _expect(type(plain) is kind, where, kind.__name__, plain)
        return plain
    if origin in (tuple, list):
        _expect(isinstance(plain, list), where, "list", plain)
        args = get_args(kind)
        if origin is list:
            return [_build(v, args[0], f"{where}[{i}]") for i, v in enumerate(plain)]
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(v, args[0], f"{where}[{i}]") for i, v in enumerate(plain))
        _expect(len(plain) == len(args), where, f"{len(args)} items", plain)
        return tuple(_build(v, a, f"{where}[{i}]")
                     for i, (v, a) in enumerate(zip(plain, args, strict=True)))
    if origin in (dict, Counter):
        _expect(isinstance(plain, dict), where, "map", plain)
        key_t, val_t = get_args(kind) if origin is dict else (get_args(kind)[0], int)
        mapping = {_build(k, key_t, f"{where}.key"): _build(v, val_t, f"{where}[{k!r}]")
                   for k, v in plain.items()}
        return Counter(mapping) if origin is Counter else mapping
    raise WireError(f"{where}: the codec does not know the type {kind!r}")


def _build_union(plain: Any, members: tuple[Any, ...], where: str) -> Any:
    if plain is None and type(None) in members:
        return None
    rest = [m for m in members if m is not type(None)]
    if len(rest) == 1:
        return _build(plain, rest[0], where)
    classes = {m.__name__: m for m in rest if isinstance(m, type)}
    if isinstance(plain, dict) and plain.get(TAG) in classes:
        return _build(plain, classes[plain[TAG]], where)
    raise WireError(f"{where}: expected one of {', '.join(sorted(classes))}, got "
                    f"{plain.get(TAG) if isinstance(plain, dict) else type(plain).__name__}")


def _build_dataclass(plain: Any, cls: type, where: str) -> Any:
    _expect(isinstance(plain, dict) and plain.get(TAG) == cls.__name__, where,
            cls.__name__, plain)
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in plain:
            raise WireError(f"{where}: {cls.__name__} without its field {f.name!r} (a worker "
                            "of another rgpu-fuzz version?)")
        kwargs[f.name] = _build(plain[f.name], hints[f.name], f"{where}.{f.name}")
    return cls(**kwargs)


def _expect(ok: bool, where: str, what: str, plain: Any) -> None:
    if not ok:
        shown = plain.get(TAG, "map") if isinstance(plain, dict) else repr(plain)[:80]
        raise WireError(f"{where}: expected {what}, got {shown}")


__all__ = ["TAG", "Job", "Result", "WireError", "decode", "decode_job", "decode_result",
           "encode", "encode_job"]
