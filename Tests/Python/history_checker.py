"""A checker for recorded histories of operations on a few keys, each key a register.

A history holds client operations and listener events:

- ``Operation``: a ``read`` (the value it returned), a ``write`` (the value it set), a ``cas`` (compare-and-set:
  the value it expected, the value it set, and whether it succeeded) or an ``increment`` (by ``delta``; the
  resulting value when known). Each has its process (client), key, invocation time and completion time. An operation
  whose outcome is unknown (timed out, connection lost, an error answer) has no completion time: it may take effect
  at any moment after its invocation, or never.
- ``ListenerEvent``: a value a listener saw for a key, and when it arrived.
- ``ServerStamp``: a REST ``POST`` of ``{".sv": "timestamp"}`` with its invocation and completion: the push id the
  server named the new child, and the server time it holds (from a read after the run).

``check_history`` proves, for every key:

- **linearizability**: some order of the operations, each placed between its invocation and its completion (or
  after its invocation, or nowhere, when indeterminate), replays on a register (initially null) to the results
  observed. The search is Wing and Gong's: take a pending call whose operation the register state allows, lift it out
  of the history, go on; on reaching a completion whose operation is still not placed, undo the last choice. A
  configuration (set of placed operations, register state) is explored once (memoized). It is bounded by a step
  budget: past it the key's verdict is ``unknown``, never a hang. A violation is narrowed to a smaller sub-history
  that is itself not linearizable (``minimal_violation``).
- **listener order**: every listener saw the key's states in one order, consistent with the acknowledgement order of
  the writes (a write acknowledged before another was invoked comes first), never a value that was not written,
  never a value before its write was invoked, never a write again after another one.
- **nothing lost, nothing applied twice**: every acknowledged write was observed (read, seen by a listener, or
  expected by a successful compare-and-set); on a key changed only by increments, every value read or seen counts
  at least the increments acknowledged before and at most those invoked until then.

and, over the stamps (``check_server_time``), that **server time never goes back** in the namespace's order: each
push id carries the server time its child holds; in push-id order those times never decrease; a stamp acknowledged
before another was invoked has the smaller push id (push ids follow the log); and no acknowledged stamp is missing.
A node whose wall clock jumps back must not break any of it.

The recorder's side of the contract: values are JSON scalars (never booleans); every write and compare-and-set sets
a value no other does, and increments are positive and fewer between two writes of a key than the distance from a
write's value to the next written value (so a state's *origin*, the write it derives from, is the largest written
value not above it); an acknowledged write is observable (its writer listens to the key: a server pushes a write's
event to the writer's listens before its acknowledgement).
"""

from __future__ import annotations

import bisect
import json
import operator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

READ, WRITE, CAS, INCREMENT = "read", "write", "cas", "increment"
KINDS = (READ, WRITE, CAS, INCREMENT)
LINEARIZABLE, VIOLATION, UNKNOWN = "linearizable", "violation", "unknown"
DEFAULT_STEP_BUDGET = 2_000_000
MAX_PREFIX_CUTS_TRIED = 12


class _InitialState:
    """The origin of null and of what increments made of it."""

    def __repr__(self) -> str:
        return "the initial state"


INITIAL = _InitialState()


class HistoryError(ValueError):
    """The history breaks the recorder's contract (not a finding about the system under test)."""


@dataclass(frozen=True)
class Operation:
    """One client operation on one key (see the module's docstring)."""

    process: str
    key: str
    kind: str
    invoked: float
    completed: float | None  # None: indeterminate
    value: Any = None  # read: returned; write, cas: set; increment: resulting value, None when unknown
    expected: Any = None  # cas only
    succeeded: bool | None = None  # cas only; None when indeterminate
    delta: float = 1  # increment only

    @property
    def acknowledged(self) -> bool:
        """A write, or a compare-and-set that succeeded, answered as done."""
        return self.completed is not None and (self.kind == WRITE or (self.kind == CAS and self.succeeded is True))

    @property
    def may_set_value(self) -> bool:
        """A write or compare-and-set that set (or may have set) its value."""
        return self.kind == WRITE or (self.kind == CAS and self.succeeded is not False)

    def describe(self) -> str:
        window = f"[{self.invoked:.3f}, {'?' if self.completed is None else f'{self.completed:.3f}'}]"
        if self.kind == READ:
            what = f"read -> {json.dumps(self.value)}"
        elif self.kind == WRITE:
            what = f"write {json.dumps(self.value)}"
        elif self.kind == CAS:
            outcome = {True: "ok", False: "failed", None: "outcome unknown"}[self.succeeded]
            what = f"cas {json.dumps(self.expected)} -> {json.dumps(self.value)} {outcome}"
        else:
            result = "result unknown" if self.value is None else f"-> {json.dumps(self.value)}"
            what = f"increment by {self.delta:g} {result}"
        return f"{self.process} {window} {what}"


@dataclass(frozen=True)
class ListenerEvent:
    """A value a listener saw for a key, and when it arrived."""

    listener: str
    key: str
    received: float
    value: Any

    def describe(self) -> str:
        return f"listener {self.listener} at {self.received:.3f} saw {json.dumps(self.value)}"


@dataclass(frozen=True)
class ServerStamp:
    """A ``POST`` of a server timestamp: the push id it was answered with (None when unanswered) and the server time
    that child holds (None until read back, or when it was not found)."""

    process: str
    invoked: float
    completed: float | None
    name: str | None
    value: float | None = None

    def describe(self) -> str:
        window = f"[{self.invoked:.3f}, {'?' if self.completed is None else f'{self.completed:.3f}'}]"
        return f"{self.process} {window} stamp {self.name or '(no answer)'} -> {json.dumps(self.value)}"


@dataclass
class History:
    """Everything recorded in one run."""

    operations: list[Operation] = field(default_factory=list)
    events: list[ListenerEvent] = field(default_factory=list)
    stamps: list[ServerStamp] = field(default_factory=list)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"operations": [asdict(op) for op in self.operations],
                                    "events": [asdict(event) for event in self.events],
                                    "stamps": [asdict(stamp) for stamp in self.stamps]}))

    @classmethod
    def load(cls, path: Path) -> "History":
        data = json.loads(path.read_text())
        return cls([Operation(**op) for op in data["operations"]], [ListenerEvent(**e) for e in data["events"]],
                   [ServerStamp(**stamp) for stamp in data.get("stamps", [])])


@dataclass
class Violation:
    """One finding: which check, which key, what is wrong, and the (smallest known) offending sub-history."""

    check: str
    key: str
    message: str
    operations: list[Operation] = field(default_factory=list)
    events: list[ListenerEvent] = field(default_factory=list)
    initial_states: frozenset = frozenset({None})
    stamps: list[ServerStamp] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"[{self.check}] key {self.key}: {self.message}"]
        if self.initial_states != frozenset({None}):
            shown = sorted(map(json.dumps, self.initial_states))
            lines.append(f"  from any of the states {', '.join(shown[:5])}{' …' if len(shown) > 5 else ''}:")
        lines += [f"  {op.describe()}" for op in sorted(self.operations, key=lambda op: op.invoked)]
        lines += [f"  {event.describe()}" for event in sorted(self.events, key=lambda e: e.received)]
        lines += [f"  {stamp.describe()}" for stamp in sorted(self.stamps, key=lambda stamp: stamp.invoked)]
        return "\n".join(lines)


@dataclass
class Report:
    """What ``check_history`` found."""

    operations: int
    events: int
    verdicts: dict[str, str]  # key -> LINEARIZABLE / VIOLATION / UNKNOWN
    violations: list[Violation]
    stamps: int = 0

    @property
    def unknown_keys(self) -> list[str]:
        return [key for key, verdict in self.verdicts.items() if verdict == UNKNOWN]

    def render(self) -> str:
        lines = [f"{self.operations} operations and {self.events} listener events on {len(self.verdicts)} keys: "
                 + ", ".join(f"{key} {verdict}" for key, verdict in sorted(self.verdicts.items()))]
        lines += [violation.render() for violation in self.violations]
        return "\n".join(lines)


# -- the register ------------------------------------------------------------------------------------------------


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def apply(state: Any, op: Operation) -> tuple[bool, Any]:
    """Whether ``op`` can take effect on a register holding ``state``, and the state after it."""
    if op.kind == READ:
        return state == op.value, state
    if op.kind == WRITE:
        return True, op.value
    if op.kind == CAS:
        matches = state == op.expected
        if op.succeeded is False:
            return not matches, state
        return matches, op.value
    new = (state if is_number(state) else 0) + op.delta
    return op.value is None or new == op.value, new


# -- linearizability ---------------------------------------------------------------------------------------------


@dataclass
class SearchOutcome:
    """A search's verdict; with ``every_end_state``, each state a complete linearization can end in; on a violation,
    the operation whose completion the deepest configuration could not pass, and the states it was tried in."""

    verdict: str
    steps: int
    end_states: frozenset = frozenset()
    blocking: Operation | None = None
    blocking_states: frozenset = frozenset()


class _Timeline:
    """The operations' calls and returns in time order as a doubly linked list (entry 0 is the head, -1 the end),
    from which an operation's two entries can be lifted out and put back in stack order."""

    def __init__(self, operations: list[Operation]):
        events = []
        for index, op in enumerate(operations):
            events.append((op.invoked, 0, index))
            if op.completed is not None:
                events.append((op.completed, 1, index))
        # At equal times calls come first: operations that touch in time count as concurrent.
        events.sort()
        count = len(events)
        self.next = list(range(1, count + 1)) + [-1]
        self.prev = [-1] + list(range(count))
        self.op_of = [-1] + [index for _, _, index in events]
        self.is_call = [False] + [kind == 0 for _, kind, _ in events]
        self.call_entry = [0] * len(operations)
        self.return_entry = [-1] * len(operations)
        for entry, (_, kind, index) in enumerate(events, 1):
            if kind == 0:
                self.call_entry[index] = entry
            else:
                self.return_entry[index] = entry

    def _unlink(self, entry: int) -> None:
        after = self.next[entry]
        self.next[self.prev[entry]] = after
        if after != -1:
            self.prev[after] = self.prev[entry]

    def _relink(self, entry: int) -> None:
        after = self.next[entry]
        self.next[self.prev[entry]] = entry
        if after != -1:
            self.prev[after] = entry

    def lift(self, index: int) -> None:
        self._unlink(self.call_entry[index])
        if self.return_entry[index] != -1:
            self._unlink(self.return_entry[index])

    def unlift(self, index: int) -> None:
        if self.return_entry[index] != -1:
            self._relink(self.return_entry[index])
        self._relink(self.call_entry[index])


def searchable(operations: Iterable[Operation]) -> list[Operation]:
    """The operations a search needs: an indeterminate read or failed compare-and-set constrains nothing."""
    return [op for op in operations if op.completed is not None or op.may_set_value or op.kind == INCREMENT]


def search(operations: list[Operation], initial_states: Iterable[Any] = (None,),
           budget: int = DEFAULT_STEP_BUDGET, every_end_state: bool = False) -> SearchOutcome:
    """Wing–Gong search for a linearization of one key's ``operations`` from any of ``initial_states``.

    Stops at the first linearization found, unless ``every_end_state``: then it explores every configuration and
    collects the states in which all determinate operations are placed (indeterminate ones placed or not)."""
    ops = searchable(operations)
    timeline = _Timeline(ops)
    seen: set[tuple[int, Any]] = set()
    end_states: set[Any] = set()
    steps = 0
    deepest, blocking, blocking_states = -1, None, set()
    returns_total = sum(1 for op in ops if op.completed is not None)
    for initial in initial_states:
        state, placed, remaining, stack = initial, 0, returns_total, []
        entry = timeline.next[0]
        while True:
            if remaining == 0:
                if not every_end_state:
                    return SearchOutcome(LINEARIZABLE, steps)
                end_states.add(state)
            if entry != -1 and timeline.is_call[entry]:
                index = timeline.op_of[entry]
                steps += 1
                if steps > budget:
                    return SearchOutcome(UNKNOWN, steps)
                allowed, after = apply(state, ops[index])
                if allowed and (placed | (1 << index), after) not in seen:
                    seen.add((placed | (1 << index), after))
                    stack.append((entry, state))
                    placed |= 1 << index
                    state = after
                    remaining -= timeline.return_entry[index] != -1
                    timeline.lift(index)
                    entry = timeline.next[0]
                else:
                    entry = timeline.next[entry]
                continue
            if entry != -1:  # a return whose operation is not placed: this branch is dead
                if len(stack) > deepest:
                    deepest, blocking, blocking_states = len(stack), ops[timeline.op_of[entry]], set()
                if len(stack) == deepest and ops[timeline.op_of[entry]] is blocking:
                    blocking_states.add(state)
            if not stack:
                break
            entry, state = stack.pop()
            index = timeline.op_of[entry]
            timeline.unlift(index)
            placed &= ~(1 << index)
            remaining += timeline.return_entry[index] != -1
            entry = timeline.next[entry]
    if end_states:
        return SearchOutcome(LINEARIZABLE, steps, frozenset(end_states))
    return SearchOutcome(VIOLATION, steps, blocking=blocking, blocking_states=frozenset(blocking_states))


def truncated(operations: list[Operation], moment: float) -> list[Operation]:
    """The operations invoked by ``moment``, those completing after it made indeterminate. If the history is
    linearizable, so is this (a linearization restricted to them is one, the later ones never taking effect)."""
    kept = []
    for op in operations:
        if op.invoked > moment:
            continue
        if op.completed is not None and op.completed > moment:
            op = replace(op, completed=None, succeeded=None if op.succeeded else op.succeeded,
                         value=None if op.kind == INCREMENT else op.value)
        kept.append(op)
    return searchable(kept)


def quiescent_cuts(operations: list[Operation]) -> list[float]:
    """Invocation times before which every determinate operation invoked earlier has completed, latest first."""
    cuts, latest_completion = [], float("-inf")
    for op in sorted(operations, key=lambda op: op.invoked):
        if latest_completion < op.invoked:
            cuts.append(op.invoked)
        if op.completed is not None:
            latest_completion = max(latest_completion, op.completed)
    return cuts[::-1]


def minimal_violation(operations: list[Operation], budget: int = DEFAULT_STEP_BUDGET
                      ) -> tuple[list[Operation], frozenset]:
    """A smaller non-linearizable sub-history of a non-linearizable one, and the initial states it starts from;
    each step keeps it a proof that the whole history is not linearizable:

    1. the shortest prefix in invocation time (``truncated``) that is still not linearizable;
    2. from the latest quiescent cut on, with every state the operations before the cut can end in as initial
       states (indeterminate operations from before the cut stay, they may take effect later);
    3. without each read and failed compare-and-set that is not needed (a constraint fewer)."""
    current, initial = searchable(operations), frozenset({None})
    moments = sorted({op.invoked for op in current} | {op.completed for op in current if op.completed is not None})
    low, high = 0, len(moments) - 1
    while low < high:
        middle = (low + high) // 2
        if search(truncated(current, moments[middle]), initial, budget).verdict == VIOLATION:
            high = middle
        else:
            low = middle + 1
    current = truncated(current, moments[high])
    for cut in quiescent_cuts(current)[:MAX_PREFIX_CUTS_TRIED]:
        before = [op for op in current if op.invoked < cut]
        after = [op for op in current if op.invoked >= cut or op.completed is None]
        if not before or len(after) == len(current):
            continue
        ends = search(before, initial, budget, every_end_state=True)
        if ends.verdict == LINEARIZABLE and search(after, ends.end_states, budget).verdict == VIOLATION:
            current, initial = after, ends.end_states
            break
    for op in sorted(current, key=lambda op: op.invoked, reverse=True):
        if op.completed is not None and (op.kind == READ or (op.kind == CAS and op.succeeded is False)):
            fewer = [other for other in current if other is not op]
            if search(fewer, initial, budget).verdict == VIOLATION:
                current = fewer
    return current, initial


def check_linearizable(key: str, operations: list[Operation], budget: int = DEFAULT_STEP_BUDGET
                       ) -> tuple[str, Violation | None]:
    """One key's verdict, and the violation (narrowed by ``minimal_violation``) when there is one."""
    outcome = search(operations, budget=budget)
    if outcome.verdict != VIOLATION:
        return outcome.verdict, None
    states = ", ".join(sorted(map(json.dumps, outcome.blocking_states))[:5])
    message = (f"not linearizable: no order of the operations lets {outcome.blocking.describe()} take effect "
               f"(it was tried with the register holding {states})")
    sub_history, initial = minimal_violation(operations, budget)
    return VIOLATION, Violation("linearizability", key, message, sub_history, initial_states=initial)


# -- origins: which write a state derives from ----------------------------------------------------------------------


class Origins:
    """A key's written values and increments: ``of(value)`` is the write a state derives from (``INITIAL`` for null
    and what increments made of it), or None when no write and increments can have made it."""

    def __init__(self, key: str, operations: list[Operation]):
        self.writes: dict[Any, Operation] = {}
        for op in operations:
            if op.may_set_value:
                if op.value in self.writes:
                    raise HistoryError(f"key {key}: the value {json.dumps(op.value)} is written twice "
                                       f"({self.writes[op.value].describe()}; {op.describe()})")
                self.writes[op.value] = op
        self.numbers = sorted(value for value in self.writes if is_number(value))
        self.incremented = sum(op.delta for op in operations if op.kind == INCREMENT)

    def of(self, value: Any) -> Any:
        if value is None:
            return INITIAL
        if value in self.writes:
            return value
        if not is_number(value):
            return None
        position = bisect.bisect_right(self.numbers, value)
        base = self.numbers[position - 1] if position else 0
        origin = self.numbers[position - 1] if position else INITIAL
        return origin if 0 < value - base <= self.incremented else None


# -- listeners ---------------------------------------------------------------------------------------------------


def _first_cycle(edges: dict[Any, list[Any]]) -> list[Any]:
    """A cycle of the directed graph (as a node list, first node repeated last), or [] when it has none."""
    colour: dict[Any, int] = {}
    for root in list(edges):
        if colour.get(root):
            continue
        colour[root] = 1
        path, iterators = [root], [iter(edges.get(root, ()))]
        while path:
            child = next(iterators[-1], None)
            if child is None:
                colour[path.pop()] = 2
                iterators.pop()
            elif colour.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not colour.get(child):
                colour[child] = 1
                path.append(child)
                iterators.append(iter(edges.get(child, ())))
    return []


def _amount(value: Any) -> float:
    """What a state counts as to an increment: its number, 0 for anything else (null)."""
    return value if is_number(value) else 0


def check_listeners(key: str, operations: list[Operation], events: list[ListenerEvent]) -> list[Violation]:
    """Every listener's events of one key: known values, none before its write was invoked, states of one write
    in increasing order, no write seen again after another one, and one order of the writes for all listeners that
    also respects the acknowledgement order (a write acknowledged before another was invoked comes first)."""
    origins = Origins(key, operations)
    violations: list[Violation] = []
    edges: dict[Any, set[Any]] = {}
    witness: dict[tuple[Any, Any], tuple[ListenerEvent, ListenerEvent]] = {}
    by_listener: dict[str, list[ListenerEvent]] = {}
    for event in events:
        by_listener.setdefault(event.listener, []).append(event)
    for listener, seen in by_listener.items():
        seen.sort(key=lambda event: event.received)
        order: list[tuple[Any, ListenerEvent]] = []  # distinct origins, first sighting
        previous: ListenerEvent | None = None
        for event in seen:
            origin = origins.of(event.value)
            if origin is None:
                violations.append(Violation("listener order", key, "a listener saw a value that was never written",
                                            events=[event]))
                continue
            if origin is not INITIAL and origins.writes[origin].invoked > event.received:
                violations.append(Violation("listener order", key, "a listener saw a value before it was written",
                                            [origins.writes[origin]], [event]))
            if previous is not None and previous.value != event.value:
                before = origins.of(previous.value)
                if before == origin and not _amount(event.value) > _amount(previous.value):
                    violations.append(Violation("listener order", key, "a listener saw increments undone",
                                                events=[previous, event]))
                elif before != origin and any(o == origin for o, _ in order):
                    first = next(e for o, e in order if o == origin)
                    violations.append(Violation(
                        "duplicate", key, "a listener saw a write again after another one: applied twice, or out "
                        "of order", [origins.writes[o] for o in (origin, before) if o is not INITIAL],
                        [first, previous, event]))
            if not order or all(o != origin for o, _ in order):
                if order:
                    edges.setdefault(order[-1][0], set()).add(origin)
                    witness.setdefault((order[-1][0], origin), (order[-1][1], event))
                order.append((origin, event))
            previous = event
    violations += _order_cycle(key, origins, edges, witness)
    return violations


def _name(origin: Any) -> str:
    return "null (the initial state)" if origin is INITIAL else json.dumps(origin)


def _order_cycle(key: str, origins: Origins, seen_edges: dict[Any, set[Any]],
                 witness: dict[tuple[Any, Any], tuple[ListenerEvent, ListenerEvent]]) -> list[Violation]:
    """A cycle among the orders listeners saw and the acknowledgement order, as one violation (or none)."""
    graph: dict[Any, list[Any]] = {node: list(targets) for node, targets in seen_edges.items()}
    # The acknowledgement order through a chain of time points (a path A -> B exists when A was acknowledged
    # before B was invoked), so it costs one edge per write instead of one per pair.
    points = [(op.invoked, 0, ("invoked", value)) for value, op in origins.writes.items()]
    points += [(op.completed, 1, ("acknowledged", value)) for value, op in origins.writes.items() if op.acknowledged]
    points.sort(key=lambda point: (point[0], point[1]))
    chain = [("time", position) for position in range(len(points))]
    for position, (_, kind, (_, value)) in enumerate(points):
        if position + 1 < len(points):
            graph.setdefault(chain[position], []).append(chain[position + 1])
        if kind == 0:
            graph.setdefault(chain[position], []).append(value)
        else:
            graph.setdefault(value, []).append(chain[position])
    graph.setdefault(INITIAL, []).extend(origins.writes)
    cycle = _first_cycle(graph)
    if not cycle:
        return []
    writes = [node for node in cycle[:-1] if not isinstance(node, tuple)]
    steps, events = [], []
    for first, second in zip(writes, writes[1:] + writes[:1]):
        if (first, second) in witness:
            seen = witness[(first, second)]
            events += list(seen)
            steps.append(f"{_name(first)} before {_name(second)} (listener {seen[1].listener})")
        else:
            steps.append(f"{_name(first)} before {_name(second)} (acknowledgement order)")
    involved = [origins.writes[write] for write in dict.fromkeys(writes) if write is not INITIAL]
    return [Violation("listener order", key, "no one order of the writes fits what the listeners saw: "
                      + ", ".join(steps), involved, events)]


# -- lost and duplicated writes ------------------------------------------------------------------------------------


def check_lost_and_duplicated(key: str, operations: list[Operation], events: list[ListenerEvent]
                              ) -> list[Violation]:
    """Every acknowledged write observed; on a key changed only by increments, every value read (or seen) within
    what the increments acknowledged before and those invoked until then can have made."""
    origins = Origins(key, operations)
    observed = {origins.of(op.value) for op in operations if op.kind == READ and op.completed is not None}
    observed |= {origins.of(event.value) for event in events}
    observed |= {origins.of(op.expected) for op in operations if op.kind == CAS and op.succeeded is True}
    violations = [Violation("lost write", key, "an acknowledged write was never observed", [op])
                  for op in operations if op.acknowledged and op.value not in observed]
    if any(op.may_set_value for op in operations):
        return violations
    increments = [op for op in operations if op.kind == INCREMENT]
    sightings = [(op.invoked, op.completed, op.value, op) for op in operations
                 if op.kind == READ and op.completed is not None]
    sightings += [(None, event.received, event.value, event) for event in events]
    for invoked, completed, value, source in sightings:
        counted = _amount(value)
        at_least = [op for op in increments if op.completed is not None and invoked is not None
                    and op.completed < invoked]
        at_most = [op for op in increments if op.invoked < completed]
        what = ([source], []) if isinstance(source, Operation) else ([], [source])
        if counted < sum(op.delta for op in at_least):
            violations.append(Violation("lost write", key, f"{counted:g} counts fewer than the "
                                        f"{sum(op.delta for op in at_least):g} acknowledged before", *what))
        elif counted > sum(op.delta for op in at_most):
            violations.append(Violation("duplicate", key, f"{counted:g} counts more than the "
                                        f"{sum(op.delta for op in at_most):g} invoked until then", *what))
    return violations


# -- server time -----------------------------------------------------------------------------------------------------

STAMPS = "stamps"
PUSH_ID_ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"


def push_id_time(name: str) -> int | None:
    """The milliseconds in a push id's first 8 characters, None when ``name`` is not a push id."""
    if len(name) != 20 or any(char not in PUSH_ID_ALPHABET for char in name):
        return None
    value = 0
    for char in name[:8]:
        value = value * 64 + PUSH_ID_ALPHABET.index(char)
    return value


def check_server_time(stamps: list[ServerStamp]) -> list[Violation]:
    """Server time never goes back in the namespace's order (see the module's docstring)."""
    violations = [Violation("lost write", STAMPS, "an acknowledged stamp is not in the namespace", stamps=[stamp])
                  for stamp in stamps if stamp.name is not None and stamp.value is None]
    known = sorted((stamp for stamp in stamps if stamp.name is not None and stamp.value is not None),
                   key=operator.attrgetter("name"))
    for stamp in known:
        if push_id_time(stamp.name) != stamp.value:
            violations.append(Violation("server time", STAMPS, "the push id's time is not the server time its "
                                        "child holds", stamps=[stamp]))
    for earlier, later in zip(known, known[1:]):
        if later.value < earlier.value:
            violations.append(Violation("server time", STAMPS, f"server time went back by "
                                        f"{earlier.value - later.value:g} ms in push-id order",
                                        stamps=[earlier, later]))
    # Real time: a stamp acknowledged before another was invoked has the smaller push id.
    answered = sorted((stamp for stamp in stamps if stamp.name is not None), key=operator.attrgetter("completed"))
    done, latest = 0, None
    for stamp in sorted(answered, key=operator.attrgetter("invoked")):
        while done < len(answered) and answered[done].completed < stamp.invoked:
            if latest is None or answered[done].name > latest.name:
                latest = answered[done]
            done += 1
        if latest is not None and latest.name > stamp.name:
            violations.append(Violation("server time", STAMPS, "a stamp acknowledged before another was invoked "
                                        "has the larger push id", stamps=[latest, stamp]))
    return violations


# -- everything ----------------------------------------------------------------------------------------------------


def check_history(history: History, budget: int = DEFAULT_STEP_BUDGET) -> Report:
    """Every check on every key of ``history``."""
    for op in history.operations:
        if op.kind not in KINDS:
            raise HistoryError(f"unknown kind {op.kind!r}")
        if op.completed is not None and op.completed < op.invoked:
            raise HistoryError(f"completed before invoked: {op.describe()}")
        if op.kind == CAS and (op.succeeded is None) != (op.completed is None):
            raise HistoryError(f"a completed cas needs its outcome (only then): {op.describe()}")
        if op.kind == INCREMENT and not op.delta > 0:
            raise HistoryError(f"increments must be positive: {op.describe()}")
        if isinstance(op.value, bool) or isinstance(op.expected, bool):
            raise HistoryError(f"booleans compare equal to numbers; use other values: {op.describe()}")
    keys = sorted({op.key for op in history.operations} | {event.key for event in history.events})
    verdicts, violations = {}, []
    for key in keys:
        operations = [op for op in history.operations if op.key == key]
        events = [event for event in history.events if event.key == key]
        verdicts[key], violation = check_linearizable(key, operations, budget)
        found = ([violation] if violation else []) + check_listeners(key, operations, events) \
            + check_lost_and_duplicated(key, operations, events)
        if found:
            verdicts[key] = VIOLATION
        violations += found
    violations += check_server_time(history.stamps)
    return Report(len(history.operations), len(history.events), verdicts, violations, len(history.stamps))
