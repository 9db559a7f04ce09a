"""The bug key of a wrong-code finding: which operation of the kernel the pipeline computes
wrong *on its own* (docs/design.md §5 "a signature names a bug, not a case").

A wrong-code signature used to name every operation left in the reduced kernel
(`ops=as:i32,mul,xor`): one bug reached through different surroundings gave a bucket per
surrounding (a seeded "saturating cast lowered as a plain cast" bug: 9 buckets from one
60-second campaign). The key here follows the bug instead of the surface:

1. every operation of the kernel is read with its operand and result types (`TypedOp`:
   `<<` on `u8` by `u32`, `f32 as i32`, `f64::min`) from the checked syntax tree;
2. for each, a *probe* kernel applies just that operation, once per thread, to operands
   drawn from the edge values of their types and uniform bits (`model.inputs.edge_bits`:
   0, ±1, MIN, MAX, width±1, ±0, ±inf, NaN, subnormals...), and runs on the arbiter and on
   the finding's pipeline; a probe whose outputs the oracle calls wrong code marks the
   operation broken on that pipeline (cached per pipeline for the whole campaign);
3. the key is the *family* of each broken operation the kernel holds — operator or method
   with the type class of its operands (`shl:int`, `min:float`, `as:float->int`), so one bug
   on `u8` and `i16` shifts is one key — joined with `+` in name order:
   `wrong-code|<pipeline>|probe=as:float->int`.

A kernel without a broken operation has no key (a bug that needs context: two operations
together, control flow, an optimisation across statements): its finding keeps the
`ops=` signature and the old placement. A probe that is not conclusive (the arbiter
rejects or traps, the pipeline crashes) marks nothing. A plain copy `out[i] = a[i]` is
probed too: when loads or stores themselves are wrong, every probe would fail, and the key
is `probe=copy:<class>` alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from oracles import FindingKind, Policy, judge
from oracles.compare import compare_outputs
from oracles.signature import PROBE_PREFIX, Signature
from rgpu_fuzz.lang import ast
from rgpu_fuzz.lang.features import case_features, case_module, walk
from rgpu_fuzz.model.case import BufferArg, Case, Dist, Launch, Values
from rgpu_fuzz.model.inputs import random_bits
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.base import Pipeline, spec_name
from rgpu_fuzz.pipelines.frontend import prepare

PROBE_THREADS = 256
"""Elements per probe: ~half edge values, half uniform bits per operand (`Dist.EDGES`)."""

PROBE_SEED = 0x5EED
_NAMES = "abc"
_BROKEN_KINDS = frozenset({FindingKind.WRONG_CODE, FindingKind.TRAP_MISMATCH})
_DIVIDES = frozenset({"div", "rem", "wrapping_div", "wrapping_rem"})


SAME_OPERATION: dict[str, str] = {
    "wrapping_add": "add", "wrapping_sub": "sub", "wrapping_mul": "mul",
    "wrapping_neg": "neg", "wrapping_shl": "shl", "wrapping_shr": "shr",
}
"""Methods that are an operator by the language's semantics (docs/language.md: integer `+ - *`
and unary `-` wrap, `<< >>` mask the amount): one family, so one key, for both spellings.
`wrapping_div`/`wrapping_rem` are not here: `MIN / -1` traps for `/` and not for them."""


SAME_IR_OPERATION: dict[str, str] = {"not:int": "xor:int", "not:bool": "xor:bool",
                                     "neg:int": "sub:int"}
"""Operators that are another operator's LLVM instruction: LLVM IR has no integer `not` or
`neg` (LangRef: `not` is `xor x, -1`, `neg` is `sub 0, x`), and our lowering writes exactly
those (`lower/exprs.py` `_unary`). A bug in that instruction is one bug for both spellings,
so they are one family, named after the instruction."""


def type_class(t: Scalar) -> str:
    """`int`, `float` or `bool`: the part of a type a family keeps (widths share a key)."""
    return "float" if t.is_float else "bool" if t is Scalar.BOOL else "int"


@dataclass(frozen=True, slots=True, order=True)
class TypedOp:
    """One operation of a kernel with its types: what a probe kernel applies.

    `template` is the expression with `{0}`, `{1}`... for the operands (`{0} << {1}`,
    `{0}.min({1})`, `{0} as i32`); `operands` their types in that order."""

    family: str
    template: str
    operands: tuple[Scalar, ...]
    result: Scalar

    def expression(self, names: Sequence[str] = _NAMES) -> str:
        """The operation on the i-th elements of the buffers `names` (one per operand)."""
        return self.template.format(*(f"{n}[i]" for n in names[:len(self.operands)]))


def _scalar(node: object) -> Scalar | None:
    ty = getattr(node, "ty", None)
    return ty if isinstance(ty, Scalar) else None


def _binary(op: ast.BinOp, lhs: Scalar, rhs: Scalar, result: Scalar) -> TypedOp:
    return TypedOp(family=f"{op.name.lower()}:{type_class(lhs)}",
                   template=f"{{0}} {op.value} {{1}}", operands=(lhs, rhs), result=result)


def typed_ops(fns: Sequence[ast.Fn]) -> frozenset[TypedOp]:
    """Every scalar operation in the (checked) functions, with its types."""
    found: set[TypedOp] = set()
    for fn in fns:
        for n in walk(fn):
            op = typed_op(n)
            if op is not None:
                found.add(op)
    return frozenset(found)


def typed_op(n: object) -> TypedOp | None:
    """The operation node `n` is, with its types; None for anything else (a name, a
    literal, a plain assignment, a node the checker left untyped)."""
    match n:
        case ast.Binary(op=op, lhs=lhs, rhs=rhs):
            a, b, r = _scalar(lhs), _scalar(rhs), _scalar(n)
            if a and b and r:
                return _binary(op, a, b, r)
        case ast.Assign(op=ast.BinOp() as op, target=target, value=value):
            a, b = _scalar(target), _scalar(value)
            if a and b:
                return _binary(op, a, b, a)
        case ast.Unary(op=op, operand=x):
            a, r = _scalar(x), _scalar(n)
            if a and r:
                family = f"{op.name.lower()}:{type_class(a)}"
                return TypedOp(family=SAME_IR_OPERATION.get(family, family),
                               template=f"{op.value}{{0}}", operands=(a,), result=r)
        case ast.Cast(expr=x, to=to):
            a = _scalar(x)
            if a and a is not to:
                return TypedOp(family=f"as:{type_class(a)}->{type_class(to)}",
                               template=f"{{0}} as {to}", operands=(a,), result=to)
        case ast.MethodCall(receiver=recv, method=m, args=args):
            types = (_scalar(recv), *(_scalar(x) for x in args))
            r = _scalar(n)
            if r and all(types):
                slots = ", ".join(f"{{{k + 1}}}" for k in range(len(args)))
                family = f"{SAME_OPERATION.get(m, m)}:{type_class(types[0])}"  # type: ignore[arg-type]
                return TypedOp(family=family,
                               template=f"{{0}}.{m}({slots})",
                               operands=types, result=r)  # type: ignore[arg-type]
        case ast.AssocCall(scalar=s, name=name, args=args):
            types = tuple(_scalar(x) for x in args)
            r = _scalar(n)
            if r and all(types):
                slots = ", ".join(f"{{{k}}}" for k in range(len(args)))
                return TypedOp(family=f"{name}:{type_class(s)}", template=f"{s}::{name}({slots})",
                               operands=types, result=r)  # type: ignore[arg-type]
    return None


def copy_op(t: Scalar) -> TypedOp:
    """`out[i] = a[i]`: the probe of loads and stores themselves."""
    return TypedOp(family=f"copy:{type_class(t)}", template="{0}", operands=(t,), result=t)


def _operand_bits(op: TypedOp, k: int, n: int) -> tuple[int, ...]:
    t = op.operands[k]
    bits = [int(b) for b in random_bits(PROBE_SEED + k, Dist.EDGES, t, n)]
    if k == 1 and op.family.split(":")[0] in _DIVIDES and t.is_int:
        # Rust traps on a zero divisor and on MIN / -1: such a probe would test the trap,
        # not the operation (the trap path has its own probes: none; see module doc)
        minus_one = (1 << t.bits) - 1
        first = _operand_bits(op, 0, n)
        lo = t.min_value & minus_one if t.is_signed else None
        bits = [1 if b == 0 or (b == minus_one and t.is_signed and first[i] == lo) else b
                for i, b in enumerate(bits)]
    return tuple(bits)


def probe_case(op: TypedOp, threads: int = PROBE_THREADS) -> Case:
    """The kernel that applies `op` once per thread to its operands' i-th elements
    (parameters `a`, `b`, `c`, result in `out`)."""
    return _kernel((op,), threads, lambda _k, name: name)


def batch_case(ops: Sequence[TypedOp], threads: int = PROBE_THREADS) -> Case:
    """One kernel applying every op of `ops` as `probe_case` does, op `k` reading `a<k>`...
    and writing `out<k>`: a group test, one compilation for many operations."""
    return _kernel(tuple(ops), threads, lambda k, name: f"{name}{k}")


def _kernel(ops: tuple[TypedOp, ...], threads: int,
            named: Callable[[int, str], str]) -> Case:
    params: list[str] = []
    body: list[str] = []
    args: list[BufferArg] = []
    for k, op in enumerate(ops):
        names = [named(k, n) for n in _NAMES[:len(op.operands)]]
        out = named(k, "out")
        params += [f"{n}: &[{t}]" for n, t in zip(names, op.operands, strict=True)]
        params.append(f"{out}: &mut [{op.result}]")
        body.append(f"    {out}[i] = {op.expression(names)};\n")
        args += [BufferArg(name=n, elem=t, len=threads, init=Values(_operand_bits(op, j, threads)))
                 for j, (n, t) in enumerate(zip(names, op.operands, strict=True))]
        args.append(BufferArg(name=out, elem=op.result, len=threads,
                              init=Values((0,) * threads)))
    # kernel parameters in declaration order: each op's operands, then its output
    kernel = ("use rgpu::*;\n\n#[kernel]\n"
              f"pub fn k({', '.join(params)}) {{\n"
              "    let i: usize = thread_idx_x() as usize;\n" + "".join(body) + "}\n")
    return Case(entry="k", kernel=kernel, launch=Launch(block=(threads, 1, 1)),
                args=tuple(args))


@dataclass(frozen=True, slots=True)
class ProbeAnswer:
    """What one probe (or group test) said: pipeline `pipeline` computes `op` wrong on its
    own, or not. Plain data: answers travel from the workers that probe to the campaign,
    which keeps them in its store (`store_probes.py`) and hands them to every later job."""

    pipeline: str
    """The pipeline's label."""
    op: TypedOp
    broken: bool


@dataclass(frozen=True, slots=True)
class ProbeStats:
    """What the keys of one campaign cost: probes run and seconds spent in them."""

    probes: int
    seconds: float


class BugKeys:
    """The bug keys of wrong-code findings on `pipelines` (the campaign's own objects).

    Invariants: a probe's answer is cached per (pipeline label, typed operation) for the life
    of this object, so each operation is probed at most once per pipeline; "broken" is only
    ever the answer of an operation's own probe kernel. Operations not yet known are first
    group-tested, up to `BATCH` to a kernel (`batch_case`): those whose outputs all agree
    with the arbiter's are not broken, the others get their own probe. A batch that does
    not finish `Ok` on both sides decides nothing (each op is then probed alone)."""

    BATCH = 16

    def __init__(self, pipelines: Sequence[Pipeline], policy: Policy) -> None:
        self.policy = policy
        self.by_label = {p.label: p for p in pipelines}
        arbiter = spec_name(policy.arbiter)
        self.arbiter = next((p for p in pipelines if p.spec.name == arbiter), None)
        self._broken: dict[tuple[str, TypedOp], bool] = {}
        self._fresh: list[ProbeAnswer] = []
        self._probes = 0
        self._seconds = 0.0

    @property
    def stats(self) -> ProbeStats:
        return ProbeStats(self._probes, round(self._seconds, 3))

    def learn(self, answers: Sequence[ProbeAnswer]) -> None:
        """Take answers probed elsewhere (another worker, an earlier session) as known;
        an answer already known here is kept (probes are deterministic)."""
        for a in answers:
            self._broken.setdefault((a.pipeline, a.op), a.broken)

    def take_fresh(self) -> list[ProbeAnswer]:
        """The answers this object probed itself since the last call (to be kept)."""
        fresh, self._fresh = self._fresh, []
        return fresh

    def _answer(self, label: str, op: TypedOp, broken: bool) -> None:
        self._broken[(label, op)] = broken
        self._fresh.append(ProbeAnswer(label, op, broken))

    def broken(self, label: str, op: TypedOp) -> bool:
        """Whether pipeline `label` computes `op` wrong on its own (cached)."""
        got = self._broken.get((label, op))
        if got is None:
            got = self._probe(self.by_label[label], op)
            self._answer(label, op, got)
        return got

    def _probe(self, pipeline: Pipeline, op: TypedOp) -> bool:
        assert self.arbiter is not None
        started = time.perf_counter()
        case = probe_case(op)
        features = case_features(case)
        ref = self.arbiter.run(case, features)
        broken = False
        if isinstance(ref, Ok):
            outcomes = {self.arbiter.label: ref, pipeline.label: pipeline.run(case, features)}
            verdict = judge(case, outcomes, self.policy, case_module(case))
            broken = any(f.kind in _BROKEN_KINDS and pipeline.label in f.pipelines
                         for f in verdict.findings)
        self._probes += 1
        self._seconds += time.perf_counter() - started
        return broken

    def _group_test(self, pipeline: Pipeline, ops: Sequence[TypedOp]) -> None:
        """Mark the ops of `ops` not broken when a batch of them agrees with the arbiter
        everywhere; a batch with any differing output is split in two and each half tested
        again. Only a batch that agrees *throughout* proves anything: a bug that hits one
        instruction of a module (the seeded `xor2or` rewrites the first `xor` only) leaves
        the other ops of a differing batch agreeing though each is wrong alone, and taking
        those agreements as "not broken" left such findings without a key."""
        for at in range(0, len(ops), self.BATCH):
            self._test_batch(pipeline, ops[at:at + self.BATCH])

    def _test_batch(self, pipeline: Pipeline, group: Sequence[TypedOp]) -> None:
        assert self.arbiter is not None
        if len(group) < 2:
            return  # one op: its own probe decides (`broken`)
        started = time.perf_counter()
        case = batch_case(group)
        features = case_features(case)
        ref = self.arbiter.run(case, features)
        got = pipeline.run(case, features) if isinstance(ref, Ok) else None
        self._probes += 1
        self._seconds += time.perf_counter() - started
        if not (isinstance(ref, Ok) and isinstance(got, Ok)):
            return
        agree = []
        for k, op in enumerate(group):
            name = f"out{k}"
            if name not in ref.outputs or name not in got.outputs:
                return
            _, differ = compare_outputs({name: ref.outputs[name]}, {name: got.outputs[name]},
                                        loose_zero=False, max_diffs=0)
            if not differ:
                agree.append(op)
        if len(agree) == len(group):
            for op in group:
                self._answer(pipeline.label, op, False)
            return
        half = len(group) // 2
        self._test_batch(pipeline, group[:half])
        self._test_batch(pipeline, group[half:])

    def families(self, label: str, case: Case) -> frozenset[str] | None:
        """The families of the kernel's operations that `label` computes wrong on their own;
        None when the key cannot be computed (no arbiter, unknown pipeline, bad kernel)."""
        if self.arbiter is None or label not in self.by_label:
            return None
        prepared = prepare(case)
        if not isinstance(prepared, tuple):
            return None
        checked, _ = prepared
        ops = typed_ops(tuple(checked.fns.values()))
        copies = {copy_op(a.elem) for a in case.args if isinstance(a, BufferArg)}
        self._group_test(self.by_label[label], [op for op in sorted(ops | copies)
                                                if (label, op) not in self._broken])
        broken_copies = {c.family for c in sorted(copies) if self.broken(label, c)}
        if broken_copies:
            return frozenset(broken_copies)
        return frozenset(op.family for op in sorted(ops) if self.broken(label, op))

    def key(self, signature: str, case: Case, *, attribute: bool = False) -> str | None:
        """The probe signature of a wrong-code finding (`wrong-code|P|probe=f+g`), or None
        when the finding is not wrong code or no operation of its kernel is broken alone.
        `attribute`: a kernel with several broken families is keyed by the one it still
        shows wrong code with when the others are knocked out (`shown`; for findings no
        reduction will narrow)."""
        sig = Signature.parse(signature)
        if sig.kind != FindingKind.WRONG_CODE:
            return None
        families = self.families(sig.pipeline, case)
        if not families:
            return None
        if attribute and len(families) > 1 and not any(f.startswith("copy:") for f in families):
            # (broken loads or stores are no operation a knock-out could remove)
            families = self.shown(sig.pipeline, case, families)
        return str(Signature(kind=sig.kind, pipeline=sig.pipeline,
                             detail=PROBE_PREFIX + "+".join(sorted(families))))

    def shown(self, label: str, case: Case, families: frozenset[str]) -> frozenset[str]:
        """Of the broken `families` of the kernel, the first (in name order) that alone
        still gives wrong code on `label` with every operation of the others knocked out
        (`triage/knockout.py`); when several do, each bug shows on its own and the finding
        fits a bucket of either, so one name decides, whatever the order of the campaign's
        cases. When none does (the bugs act together, or a knock-out changed too much),
        all of `families`."""
        from triage.knockout import knock_out  # knockout needs `typed_op`

        assert self.arbiter is not None
        pipeline = self.by_label[label]
        for family in sorted(families):
            started = time.perf_counter()
            alone = knock_out(case, families - {family}, typed_op, avoid=families)
            shows = False
            if alone is not None:
                features = case_features(alone)
                # the arbiter at the pipeline's wave size (`oracles.waves`)
                arbiter = self.arbiter.with_wave_size(pipeline.wave_size) or self.arbiter
                ref = arbiter.run(alone, features)
                if isinstance(ref, Ok):
                    outcomes = {arbiter.label: ref, label: pipeline.run(alone, features)}
                    verdict = judge(alone, outcomes, self.policy, case_module(alone))
                    shows = any(f.kind is FindingKind.WRONG_CODE and label in f.pipelines
                                for f in verdict.findings)
            self._probes += 1
            self._seconds += time.perf_counter() - started
            if shows:
                return frozenset({family})
        return families


def probe_families(signature: str) -> frozenset[str] | None:
    """The families of a probe signature; None for any other signature."""
    return Signature.parse(signature).probe


__all__ = ["BugKeys", "ProbeAnswer", "ProbeStats", "TypedOp", "batch_case", "copy_op", "probe_case",
           "probe_families", "type_class", "typed_op", "typed_ops"]
