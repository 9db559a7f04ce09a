"""What the grammar knows while it builds one kernel: names in scope, the kernel's buffers,
helpers and shared arrays, and where in the program it is.

Two kinds of state, kept apart on purpose:
* `Builder` — grows while one case is built (fresh names, scopes, items made so far). It is
  private to one `generate` call and never crosses a stage boundary.
* `Pos` — a frozen description of the current position (inside a loop? in a shared-memory
  write phase? how many times can this statement run?). Each production receives the
  position and derives the one for its children, so the rules that make a kernel
  well-defined are decided in one place per production, not by scanning the tree afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from generators.choice import ChoiceSource
from generators.profile import Profile
from rgpu_fuzz.model.scalars import Scalar


@dataclass(frozen=True, slots=True)
class Var:
    """A scalar local, parameter, `for` variable or const. `assignable` is False for loop
    counters and for `tid`/`gid`, whose values the well-definedness argument relies on."""

    name: str
    ty: Scalar
    assignable: bool = False
    reserved: bool = False      # never shadowed (tid, gid, counters)


@dataclass(frozen=True, slots=True)
class LocalArray:
    name: str
    elem: Scalar
    len: int
    mutable: bool


@dataclass(frozen=True, slots=True)
class Buffer:
    """A slice parameter. Outputs have `slots` elements per thread: thread `gid` owns
    `[gid * slots, (gid + 1) * slots)` and touches no other element."""

    name: str
    elem: Scalar
    len: int
    mutable: bool
    slots: int = 1


@dataclass(frozen=True, slots=True)
class SharedArray:
    """A `#[shared]` array of `threads_per_block * slots` elements; thread `tid` of a block
    writes only `[tid * slots, (tid + 1) * slots)`."""

    name: str
    elem: Scalar
    slots: int
    len: int
    len_const: str | None = None  # the usize const naming the length, if any


@dataclass(frozen=True, slots=True)
class Helper:
    """A helper fn the grammar may call; `cost` is the largest product of loop trip counts
    inside it, so a call in a loop nest stays within the work bound."""

    name: str
    params: tuple[Scalar, ...]
    ret: Scalar | None
    cost: int
    shared: str = ""
    """"read": reads shared arrays, callable only in a read phase; "write": its first
    parameter is the caller's thread index `tid` and it writes that thread's own shared
    slots (a store, then `op=` on the stored element), callable only in a write phase."""

    def callable_at(self, pos: Pos, tid: str | None) -> bool:
        """May be called at `pos` (the shared-memory discipline of the phases)."""
        if self.shared == "read":
            return pos.shared_read
        if self.shared == "write":
            return pos.shared_write and tid is not None
        return True


@dataclass(frozen=True, slots=True)
class Pos:
    """Where a statement or expression is being generated, and what is allowed there."""

    block_depth: int = 0
    loop_depth: int = 0
    work: int = 1               # how many times this code runs per thread, at most
    in_loop: bool = False       # break/continue allowed (the innermost loop is not a barrier loop)
    can_return: bool = False
    ret: Scalar | None = None   # the function's return type (for `return e;`)
    in_kernel: bool = False
    shared_read: bool = False   # a read phase: every shared slot written, nobody writes now
    shared_write: bool = False  # a write phase: own slots may be written, nothing read
    output_access: bool = False  # own output slots may be read and written here

    def nested(self, **changes: object) -> Pos:
        return replace(self, block_depth=self.block_depth + 1, **changes)  # type: ignore[arg-type]


class Builder:
    """Mutable state of one `generate` call: the choice source, the profile, fresh-name
    counters, scopes, and the items built so far."""

    def __init__(self, source: ChoiceSource, profile: Profile) -> None:
        self.src = source
        self.profile = profile
        self.limits = profile.limits
        self.features = profile.features
        self._counters: dict[str, int] = {}
        self.scopes: list[dict[str, Var | LocalArray]] = []
        self.consts: list[Var] = []
        self.helpers: list[Helper] = []
        self.callable_helpers = 0      # helpers[:n] may be called (no recursion)
        self.inputs: list[Buffer] = []
        self.outputs: list[Buffer] = []
        self.shared: list[SharedArray] = []
        self.tid: str | None = None
        # Scalars whose value every thread of a block shares: scalar kernel parameters and
        # counters of uniform loops (generators/barriers.py). A name counts as uniform only
        # while this very `Var` is its visible binding (a `let` may shadow a parameter).
        self.uniform: list[Var] = []
        self.gid: str | None = None
        self.stmts_left = 0
        self.max_work_seen = 1
        self.types = self._types()
        self._type_tables: dict[tuple[bool, bool], dict[Scalar, int]] = {}

    def _types(self) -> dict[Scalar, int]:
        out = {Scalar(k): w for k, w in self.profile.types.items() if w > 0}
        if not self.features.floats:
            out.pop(Scalar.F32, None)
            out.pop(Scalar.F64, None)
        if not any(t.is_int for t in out):
            out[Scalar.U32] = 1
        return out

    # ------------------------------------------------------------- names and scopes

    def fresh(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        self._counters[prefix] = n + 1
        return f"{prefix}{n}"

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def bind(self, v: Var | LocalArray) -> None:
        self.scopes[-1][v.name] = v

    def visible(self) -> Iterator[Var | LocalArray]:
        """Every name in scope, innermost binding of each name only (shadowing)."""
        seen: set[str] = set()
        for scope in reversed(self.scopes):
            for name, v in reversed(scope.items()):
                if name not in seen:
                    seen.add(name)
                    yield v
        for c in self.consts:
            if c.name not in seen:
                yield c

    def scalars(self, ty: Scalar | None = None) -> list[Var]:
        return [v for v in self.visible() if isinstance(v, Var) and (ty is None or v.ty is ty)]

    def arrays(self, mutable: bool = False) -> list[LocalArray]:
        return [v for v in self.visible()
                if isinstance(v, LocalArray) and (v.mutable or not mutable)]

    def shadowable(self) -> list[Var]:
        """Locals a new `let` may shadow: never consts (a `let` of a const's name is a
        pattern in Rust) and never reserved names (tid, gid, loop counters)."""
        consts = {c.name for c in self.consts}
        return [v for v in self.scalars() if not v.reserved and v.name not in consts]

    def assignable(self, ty: Scalar | None = None) -> list[Var]:
        return [v for v in self.scalars(ty) if v.assignable]

    # ------------------------------------------------------------- common choices

    def scalar_type(self, *, allow_bool: bool = True, only_int: bool = False) -> Scalar:
        key = (allow_bool, only_int)
        options = self._type_tables.get(key)
        if options is None:
            options = {t: w for t, w in self.types.items()
                       if (allow_bool or t is not Scalar.BOOL) and (t.is_int or not only_int)}
            self._type_tables[key] = options
        return self.src.weighted(options)

    def int_type(self) -> Scalar:
        return self.scalar_type(allow_bool=False, only_int=True)

    def note_work(self, work: int) -> None:
        """Record how often some code of the current function runs (a helper's `cost`)."""
        self.max_work_seen = max(self.max_work_seen, work)

    def take_stmt(self) -> bool:
        """Spend one statement of the function's budget; False when it is used up."""
        if self.stmts_left <= 0:
            return False
        self.stmts_left -= 1
        return True
