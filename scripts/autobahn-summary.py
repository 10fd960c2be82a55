"""Summarises an Autobahn|Testsuite index.json: counts per outcome and per case group.

Usage: autobahn-summary.py INDEX_JSON [MARKDOWN_OUT]
Exits 1 when any case is FAILED or UNIMPLEMENTED (or the report has no cases).
"""
import collections
import datetime
import json
import sys

ACCEPTED = {"OK", "NON-STRICT", "INFORMATIONAL"}


def main():
    with open(sys.argv[1]) as handle:
        index = json.load(handle)
    results = next(iter(index.values()))
    per_group = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    bad = []
    for case_id, result in results.items():
        behaviour = result["behavior"]
        close = result.get("behaviorClose", "OK")
        outcome = behaviour if behaviour != "OK" or close in ACCEPTED else close
        group = case_id.split(".")[0]
        per_group[group][outcome] += 1
        totals[outcome] += 1
        if outcome not in ACCEPTED:
            bad.append("%s: %s (close %s)" % (case_id, behaviour, close))
    outcomes = sorted(totals)
    lines = ["| group | cases | " + " | ".join(outcomes) + " |", "|---|---|" + "---|" * len(outcomes)]
    for group in sorted(per_group, key=int):
        counts = per_group[group]
        lines.append("| %s | %d | " % (group, sum(counts.values())) + " | ".join(str(counts[o]) for o in outcomes) + " |")
    lines.append("| **all** | %d | " % sum(totals.values()) + " | ".join(str(totals[o]) for o in outcomes) + " |")
    table = "\n".join(lines)
    print(table)
    for line in bad:
        print("NOT ACCEPTED " + line)
    passed = sum(totals[o] for o in ACCEPTED)
    print("autobahn: %d passed, %d failed" % (passed, len(bad)))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as out:
            out.write("# Autobahn|Testsuite results\n\n")
            out.write("`scripts/autobahn` (fuzzingclient, cases 1-13) against `canopy serve --echo-path /echo`, "
                      "run %s on a 2-core Linux machine.\n\n" % datetime.date.today().isoformat())
            out.write(table + "\n\n")
            out.write("OK, NON-STRICT and INFORMATIONAL are accepted outcomes; any other outcome fails the script.\n")
    sys.exit(1 if bad or not results else 0)


main()
