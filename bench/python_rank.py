#!/usr/bin/python3
"""Per-call time of the Python package's heurist.Model.rank on one problem and of Model.rank_batch over a batch
of 10,000 problems: the package's overhead over the same calls of the C API, which bench/api_rank.c times in C
with the same arguments.

Single: Model.rank(problem, k=8) with the problem as text (heurist_predictor_rank), as values
(heurist_predictor_rank_values) and, for a table model, as a dict (made into text in Python), timed over --calls
calls after a warm-up; each figure is the least of --rounds (batch: --batch-rounds) rounds' means (the least disturbed by other processes
on a shared machine), the median beside it. Batch: Model.rank_batch of --batch problems as a values array, k=8, on
--threads threads (heurist_rank_values_batch): the problem's values with its first numeric column scaled by
1..8, as api_rank makes them. One line of key=value a figure.

usage (from the repository root, after `cmake --build build --target heurist_api api_rank`):
  HEURIST_LIBRARY=build/libheurist.so /usr/bin/python3 bench/python_rank.py --model M.h5 --problem TEXT \
      [--k 8] [--batch 10000] [--threads 1] [--calls 20000] [--rounds 7] [--batch-rounds 3]
  build/api_rank M.h5 TEXT --calls 20000 --k 8 --batch 10000 --threads 1     # the C API's figures
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import heurist  # noqa: E402 (the repository's package, beside this folder)


def rounds_of(fn, calls, rounds):
    """Each round's mean seconds per call of fn()."""
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--problem", required=True, help="one problem as text (a find-db key or column=value,...)")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch-rounds", type=int, default=3)
    a = ap.parse_args()

    m = heurist.Model.load(a.model)
    print("model=%s task=%s kernels=%d problem_columns=%d config_columns=%d library=%s" %
          (a.model, m.task, len(m.kernels), len(m.problem_columns), len(m.config_columns), heurist.library_path))
    values = m._problems([a.problem])[0]
    single = {"text": a.problem, "values": values}
    if "=" in a.problem:
        single["dict"] = dict(f.split("=", 1) for f in a.problem.split(","))
    for name, problem in single.items():
        rounds_of(lambda: m.rank(problem, k=a.k), 1000, 1)
        r = rounds_of(lambda: m.rank(problem, k=a.k), a.calls, a.rounds)
        print("single_%s_us=%.3f single_%s_median_us=%.3f calls=%d rounds=%d k=%d" %
              (name, 1e6 * min(r), name, 1e6 * statistics.median(r), a.calls, a.rounds, a.k))

    col = next((j for j in range(len(m.problem_columns)) if not m.categories(j)), None)
    batch = np.tile(values, (a.batch, 1))
    if col is not None:
        batch[:, col] *= 1 + np.arange(a.batch) % 8
    m.rank_batch(batch[:100], k=a.k, threads=a.threads)
    r = rounds_of(lambda: m.rank_batch(batch, k=a.k, threads=a.threads), 1, a.batch_rounds)
    print("batch_us_per_problem=%.3f batch_median_us_per_problem=%.3f batch=%d k=%d threads=%d" %
          (1e6 * min(r) / a.batch, 1e6 * statistics.median(r) / a.batch, a.batch, a.k, a.threads))


if __name__ == "__main__":
    main()
