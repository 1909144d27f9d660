"""The verdict's confusion table: every corpus script rehearsed, each check's hits and misses.

    python bench/verdict.py                 # the whole corpus, two rehearsals at a time
    python bench/verdict.py leader resume   # the scripts whose names start so

A script is a positive for a check when its header expects it (``# expect:``),
a negative otherwise; the check is right when the verdict's findings name it
exactly then. Done means the table is diagonal: no false positive, no false
negative. The scripts are tests/core/local/corpus/; the runs are the corpus
test's own (test_verdict_corpus.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "core" / "local"))
from test_verdict_corpus import CHECKS, cases, rehearse_all  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("prefixes", nargs="*", help="only the scripts whose names start so")
    parser.add_argument("--parallel", type=int, default=2, help="rehearsals at a time")
    opts = parser.parse_args()
    chosen = [
        c
        for c in cases()
        if c.runnable and (not opts.prefixes or c.name.startswith(tuple(opts.prefixes)))
    ]
    skipped = [c.name for c in cases() if not c.runnable]
    with tempfile.TemporaryDirectory(prefix="verdict-corpus-") as folder:
        results = rehearse_all(chosen, Path(folder), opts.parallel)
    print(f"{'check':<11} {'TP':>3} {'FN':>3} {'FP':>3} {'TN':>3}")
    wrong: list[str] = []
    for check in CHECKS:
        counts = {"TP": 0, "FN": 0, "FP": 0, "TN": 0}
        for case in chosen:
            found = results[case.name].found
            hit = found is not None and check in found
            wanted = check in case.expect
            counts[("T" if hit == wanted else "F") + ("P" if hit else "N")] += 1
        print(f"{check:<11} " + " ".join(f"{counts[k]:>3}" for k in ("TP", "FN", "FP", "TN")))
    for case in chosen:
        found = results[case.name].found
        if found is None:
            last = results[case.name].output.strip().splitlines()[-3:]
            wrong.append(f"{case.name}: no verdict; it ended: " + " / ".join(last))
        elif found != case.expect:
            missed, extra = sorted(case.expect - found), sorted(found - case.expect)
            wrong.append(f"{case.name}: missed {missed or '-'}, also found {extra or '-'}")
    print(f"\n{len(chosen) - len(wrong)} of {len(chosen)} scripts got exactly their findings")
    for line in wrong:
        print(f"  {line}")
    if skipped:
        print(f"not run here (a module this interpreter lacks): {', '.join(skipped)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
