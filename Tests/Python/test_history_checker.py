"""The history checker (history_checker.py) against hand-written histories: good ones it must accept, and bad ones
(a stale read, a lost write, a write applied twice, a compare-and-set pair that cannot both succeed, listeners that
saw two orders, an increment counted twice, a value never written) it must reject with the right check and a small
offending sub-history. Times are in seconds; each history is on key ``x`` unless it says otherwise."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from history_checker import (CAS, INCREMENT, LINEARIZABLE, PUSH_ID_ALPHABET, READ, UNKNOWN, VIOLATION, WRITE, History,
                             HistoryError, ListenerEvent, Operation, ServerStamp, check_history, minimal_violation,
                             push_id_time, search)


def read(process: str, invoked: float, completed: float | None, value, key: str = "x") -> Operation:
    return Operation(process, key, READ, invoked, completed, value=value)


def write(process: str, invoked: float, completed: float | None, value, key: str = "x") -> Operation:
    return Operation(process, key, WRITE, invoked, completed, value=value)


def cas(process: str, invoked: float, completed: float | None, expected, value, succeeded: bool | None,
        key: str = "x") -> Operation:
    return Operation(process, key, CAS, invoked, completed, value=value, expected=expected, succeeded=succeeded)


def increment(process: str, invoked: float, completed: float | None, result=None, key: str = "x") -> Operation:
    return Operation(process, key, INCREMENT, invoked, completed, value=result)


def seen(listener: str, *values_at: tuple[float, object], key: str = "x") -> list[ListenerEvent]:
    return [ListenerEvent(listener, key, at, value) for at, value in values_at]


def checks_failed(report) -> set[str]:
    return {violation.check for violation in report.violations}


# -- good histories ------------------------------------------------------------------------------------------------


def test_sequential_writes_and_reads_are_linearizable():
    history = History([write("a", 0, 1, 1000), read("b", 2, 3, 1000), write("b", 4, 5, 2000),
                       read("a", 6, 7, 2000)], seen("a", (0.5, None), (0.9, 1000), (4.9, 2000)))
    report = check_history(history)
    assert report.violations == [] and report.verdicts == {"x": LINEARIZABLE}


def test_concurrent_writes_may_take_effect_in_either_order():
    # 2000 is written while 1000 is still in flight: a read may see 2000, then 1000 once the slower one lands.
    history = History([write("a", 0, 10, 1000), write("b", 1, 9, 2000), read("c", 2, 3, 2000), read("c", 4, 11, 1000)],
                      seen("a", (3, 2000), (8, 1000)) + seen("b", (2.5, None), (9.5, 1000)))
    assert check_history(history).violations == []


def test_a_chain_of_compare_and_sets_with_a_loser():
    history = History([write("a", 0, 1, 1000), cas("b", 2, 4, 1000, 2000, True), cas("c", 2, 5, 1000, 3000, False),
                       read("a", 6, 7, 2000)], seen("b", (3, 2000)) + seen("a", (0.5, 1000)))
    assert check_history(history).violations == []


def test_an_indeterminate_write_may_land_late_or_never():
    late = History([write("a", 0, 1, 1000), write("b", 2, None, 2000), read("c", 3, 4, 1000),
                    read("c", 50, 51, 2000)], seen("a", (0.5, 1000)))
    never = History([write("a", 0, 1, 1000), write("b", 2, None, 2000), read("c", 50, 51, 1000)],
                    seen("a", (0.5, 1000)))
    assert check_history(late).violations == [] and check_history(never).violations == []


def test_increments_with_unknown_results_and_one_indeterminate():
    history = History([increment("a", 0, 1), increment("b", 2, 3), increment("a", 4, 8), increment("b", 5, None),
                       read("c", 5, 6, 2), read("c", 9, 10, 4)], seen("a", (0, None), (1, 1), (7, 3), (9, 4)))
    assert check_history(history).violations == []


def test_increments_on_a_written_value_and_a_known_result():
    history = History([write("a", 0, 1, 1000), increment("b", 2, 3, result=1001), increment("a", 4, 5),
                       read("b", 6, 7, 1002)], seen("a", (0.5, 1000), (4.5, 1002)))
    assert check_history(history).violations == []


def test_operations_that_touch_in_time_count_as_concurrent():
    # Clocks of one resolution: a read invoked at the instant a write completed may have been placed before it.
    history = History([write("a", 0, 1, 1000), read("b", 1, 2, None)], seen("a", (0.5, 1000)))
    assert check_history(history).violations == []


def test_listeners_may_miss_states_but_not_reorder_them():
    writes = [write("a", 0, 1, 1000), write("b", 2, 3, 2000), write("a", 4, 5, 3000)]
    history = History(writes, seen("a", (0.5, 1000), (4.5, 3000)) + seen("b", (2.5, 2000), (5.5, 3000)))
    assert check_history(history).violations == []


# -- bad histories -------------------------------------------------------------------------------------------------


def test_a_stale_read_after_an_acknowledged_write():
    history = History([write("a", 0, 1, 1000), write("b", 2, 3, 2000), read("c", 4, 5, 1000)],
                      seen("a", (0.5, 1000)) + seen("b", (2.5, 2000)))
    report = check_history(history)
    assert report.verdicts == {"x": VIOLATION} and checks_failed(report) == {"linearizability"}
    (violation,) = report.violations
    assert "read -> 1000" in violation.message
    # Narrowed: after the quiet moment at 4, the register can only hold 2000, and the read alone contradicts it.
    assert violation.operations == [history.operations[2]] and violation.initial_states == {2000}


def test_a_lost_write_read_as_null():
    history = History([write("a", 0, 1, 1000), read("b", 2, 3, None)])
    assert checks_failed(check_history(history)) == {"linearizability", "lost write"}


def test_a_lost_write_that_only_observations_reveal():
    # Linearizable (1000 may have been overwritten at once), but its writer's own listener never saw it: lost.
    history = History([write("a", 0, 1, 1000), write("b", 2, 3, 2000), read("c", 4, 5, 2000)],
                      seen("a", (0.5, None), (3.5, 2000)) + seen("b", (2.5, 2000)))
    report = check_history(history)
    assert checks_failed(report) == {"lost write"}
    assert report.violations[0].operations == [history.operations[0]]


def test_a_write_applied_twice():
    writes = [write("a", 0, 1, 1000), write("b", 2, 3, 2000)]
    by_listener = History(writes, seen("a", (0.5, 1000), (2.5, 2000), (6, 1000)))
    by_reads = History(writes + [read("c", 4, 5, 2000), read("c", 6, 7, 1000)], seen("a", (0.5, 1000)))
    assert "duplicate" in checks_failed(check_history(by_listener))
    assert checks_failed(check_history(by_reads)) == {"linearizability"}


def test_two_compare_and_sets_on_one_value_cannot_both_succeed():
    history = History([write("a", 0, 1, 1000), cas("b", 2, 4, 1000, 2000, True), cas("c", 2, 4, 1000, 3000, True)],
                      seen("a", (0.5, 1000), (3, 2000), (3.5, 3000)))
    report = check_history(history)
    assert checks_failed(report) == {"linearizability"}
    assert report.violations[0].operations == history.operations[1:] and report.violations[0].initial_states == {1000}


def test_a_compare_and_set_that_failed_on_a_matching_value():
    history = History([write("a", 0, 1, 1000), cas("b", 2, 3, 1000, 2000, False)], seen("a", (0.5, 1000)))
    assert checks_failed(check_history(history)) == {"linearizability"}


def test_two_listeners_that_saw_two_orders():
    writes = [write("a", 0, 5, 1000), write("b", 0, 5, 2000)]
    history = History(writes, seen("a", (1, 1000), (2, 2000)) + seen("b", (1, 2000), (2, 1000)))
    report = check_history(history)
    assert checks_failed(report) == {"listener order"}
    assert "listener a" in report.violations[0].message and "listener b" in report.violations[0].message


def test_a_listener_that_saw_writes_against_their_acknowledgement_order():
    writes = [write("a", 0, 1, 1000), write("b", 2, 3, 2000)]
    history = History(writes, seen("a", (3.5, 2000), (4, 1000)))
    report = check_history(history)
    assert checks_failed(report) == {"listener order"}
    assert "acknowledgement order" in report.violations[0].message


def test_an_increment_counted_twice():
    incremented = [increment("a", 0, 1), increment("b", 2, 3), increment("a", 10, 11)]
    by_read = History(incremented + [read("c", 4, 5, 3)])
    by_listener = History(incremented, seen("a", (1, 1), (3.5, 3)))
    assert checks_failed(check_history(by_read)) == {"linearizability", "duplicate"}
    assert checks_failed(check_history(by_listener)) == {"duplicate"}


def test_an_increment_with_a_wrong_known_result():
    history = History([write("a", 0, 1, 1000), increment("b", 2, 3, result=1002)], seen("a", (0.5, 1000)))
    assert checks_failed(check_history(history)) == {"linearizability"}


def test_a_listener_that_saw_increments_undone():
    history = History([write("a", 0, 1, 1000), increment("b", 2, 3), increment("b", 4, 5)],
                      seen("a", (0.5, 1000), (4.5, 1002), (6, 1001)))
    report = check_history(history)
    assert checks_failed(report) == {"listener order"} and "undone" in report.violations[0].message


def test_an_increment_lost():
    history = History([increment("a", 0, 1), increment("b", 2, 3), read("c", 4, 5, 1)])
    assert checks_failed(check_history(history)) == {"linearizability", "lost write"}


def test_a_value_never_written():
    history = History([write("a", 0, 1, 1000), read("b", 2, 3, 4242)], seen("a", (0.5, 1000), (2.5, 4242)))
    report = check_history(history)
    assert checks_failed(report) == {"linearizability", "listener order"}
    assert any("never written" in violation.message for violation in report.violations)


def test_a_value_seen_before_its_write_was_invoked():
    history = History([write("a", 10, None, 2000), read("b", 2, 3, 2000)], seen("c", (1, 2000)))
    assert checks_failed(check_history(history)) == {"linearizability", "listener order"}


# -- bounds, narrowing, the file -------------------------------------------------------------------------------------


def test_the_step_budget_gives_unknown_instead_of_a_hang():
    concurrent = [write(f"p{i}", 0, 10, 1000 * (i + 1)) for i in range(12)] + [read("r", 11, 12, 1000)]
    assert search(concurrent, budget=5).verdict == UNKNOWN
    assert search(concurrent).verdict == LINEARIZABLE
    listener = seen("l", *((0.5 + i / 2, 1000 * (12 - i)) for i in range(12)))
    report = check_history(History(concurrent, listener), budget=5)
    assert report.unknown_keys == ["x"] and report.violations == []


def test_a_violation_is_narrowed_to_the_operations_after_the_last_quiet_moment():
    good = []
    for step in range(200):
        good += [write("a", 4 * step, 4 * step + 1, 1000 * (step + 1)), read("b", 4 * step + 2, 4 * step + 3,
                                                                             1000 * (step + 1))]
    stale = read("c", 802, 803, 199_000)  # after 200,000 was acknowledged and read
    operations = good + [stale]
    report = check_history(History(operations))
    (violation,) = report.violations
    assert stale in violation.operations and len(violation.operations) <= 3
    assert search(violation.operations, violation.initial_states).verdict == VIOLATION
    narrowed, initial = minimal_violation(operations)
    assert narrowed == violation.operations and initial == violation.initial_states


def test_values_written_twice_break_the_contract():
    with pytest.raises(HistoryError):
        check_history(History([write("a", 0, 1, 1000), write("b", 2, 3, 1000)]))


def test_a_history_survives_its_file(tmp_path):
    history = History([write("a", 0, 1, 1000), cas("b", 2, None, 1000, 2000, None), increment("c", 3, 4, 1001)],
                      seen("a", (0.5, 1000)))
    path = tmp_path / "history.json"
    history.save(path)
    assert History.load(path) == history


# -- server time ---------------------------------------------------------------------------------------------------

T0 = 1_795_000_000_000  # milliseconds since the epoch


def push_id(milliseconds: int, sequence: int) -> str:
    """A push id as the server makes one: the time in characters 1–8, the log sequence in characters 9–20."""
    digits = []
    for value, count in ((milliseconds, 8), (sequence, 12)):
        part = []
        for _ in range(count):
            part.append(PUSH_ID_ALPHABET[value % 64])
            value //= 64
        digits += reversed(part)
    return "".join(digits)


def stamp(process: str, invoked: float, completed: float | None, milliseconds: int | None, sequence: int = 0,
          value: float | None = None) -> ServerStamp:
    """A stamp answered with the push id of (``milliseconds``, ``sequence``) whose child holds ``value`` (by default
    the same time); ``milliseconds`` None: unanswered."""
    if milliseconds is None:
        return ServerStamp(process, invoked, completed, None)
    return ServerStamp(process, invoked, completed, push_id(milliseconds, sequence),
                       milliseconds if value is None else value)


def test_push_ids_carry_their_time():
    assert push_id_time(push_id(T0, 7)) == T0 and push_id_time("not a push id") is None


def test_server_time_that_stands_still_or_moves_on_is_accepted():
    # The same millisecond twice (the log's time held while a node's clock was behind), concurrent stamps in either
    # order, and an unanswered one.
    history = History(stamps=[stamp("a", 0, 1, T0, 1), stamp("b", 2, 3, T0, 2), stamp("a", 4, 6, T0 + 90, 4),
                              stamp("b", 5, 5.5, T0 + 50, 3), stamp("c", 7, None, None)])
    assert check_history(history).violations == []


def test_server_time_that_goes_back_in_push_id_order_is_caught():
    # A node whose clock jumped back an hour stamped its child with its own clock instead of the log's time.
    history = History(stamps=[stamp("a", 0, 1, T0, 1), stamp("b", 2, 3, T0 + 10, 2, value=T0 - 3_600_000)])
    report = check_history(history)
    assert checks_failed(report) == {"server time"} and report.stamps == 2
    assert "the push id's time is not the server time" in report.render()


def test_a_push_id_from_an_earlier_time_after_a_later_acknowledged_one_is_caught():
    # The second stamp was invoked after the first was answered, yet its id and time (from a clock that went back)
    # sort first. In push-id order the times do not fall: only the real-time order shows it.
    history = History(stamps=[stamp("a", 0, 1, T0, 5), stamp("b", 2, 3, T0 - 3_600_000, 6)])
    report = check_history(history)
    assert [violation.message for violation in report.violations] == [
        "a stamp acknowledged before another was invoked has the larger push id"]
    assert checks_failed(report) == {"server time"}


def test_an_acknowledged_stamp_missing_afterwards_is_lost():
    history = History(stamps=[stamp("a", 0, 1, T0, 1), ServerStamp("b", 2, 3, push_id(T0, 2))])
    assert checks_failed(check_history(history)) == {"lost write"}


def test_stamps_survive_the_file(tmp_path):
    history = History([write("a", 0, 1, 1000)], stamps=[stamp("a", 0, 1, T0, 1), stamp("b", 2, None, None)])
    path = tmp_path / "history.json"
    history.save(path)
    assert History.load(path) == history


# -- a real history ------------------------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent.parent / "Fixtures" / "Histories"


def test_a_recorded_split_after_a_nats_leader_pause_is_caught(tmp_path):
    """``scripts/chaos 6 60 --seed 2811``, run 4 (seed 2814), on def5d70: right after the NATS stream leader's 4.7 s
    pause ended (48.5 s), two groups of clients saw two states of the same keys for about 3.5 s: compare-and-sets
    succeeded on both sides, and reads of the counter lagged its acknowledged increments (docs/reliability.md).
    The checker must find every key violated, with linearizability and lost writes, all inside that window."""
    history_file = tmp_path / "history.json"
    history_file.write_bytes(gzip.decompress((FIXTURES / "chaos-2814-history.json.gz").read_bytes()))
    report = check_history(History.load(history_file))
    assert report.operations == 4236
    assert report.verdicts == {"a": VIOLATION, "b": VIOLATION, "c": VIOLATION, "counter": VIOLATION}
    assert checks_failed(report) == {"linearizability", "lost write"}
    for violation in report.violations:
        assert all(48.4 < operation.invoked < 53.0 for operation in violation.operations), violation.render()
