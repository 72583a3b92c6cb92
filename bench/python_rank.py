#!/usr/bin/python3
"""Per-call time of the Python package's heurist.Model.rank on one problem and of Model.rank_batch over a batch
of 10,000 problems: the package's overhead over the C API's same calls (bench/api_rank.c times those in C).

Single: Model.rank(problem) as text (heurist_predictor_rank: one ctypes call) and as a dict (a table model: the
text made in Python), every configuration or kernel ranked, timed over --calls calls after 1,000 unmeasured ones;
the figure is the least of --rounds rounds' means (the least disturbed by other processes on a shared machine),
the median beside it. Batch: Model.rank_batch of --batch problems, k=1, on --threads threads: the problems of
--problems FILE (one a line, cycled) or --problem repeated; a table's problems go as a values array
(heurist_rank_values_batch), find-db keys as text (heurist_rank_batch). One line of key=value a figure.

usage (from the repository root, after `cmake --build build --target heurist heurist_api`):
  HEURIST_LIBRARY=build/libheurist.so /usr/bin/python3 bench/python_rank.py --model M.h5 --problem TEXT \
      [--problems FILE] [--batch 10000] [--threads 1] [--calls 20000] [--rounds 7]
"""
import argparse
import os
import statistics
import sys
import time

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
    ap.add_argument("--problems", help="a file of problems, one a line, for the batch")
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()

    m = heurist.Model.load(a.model)
    print("model=%s task=%s kernels=%d problem_columns=%d config_columns=%d library=%s" %
          (a.model, m.task, len(m.kernels), len(m.problem_columns), len(m.config_columns), heurist.library_path))
    single = {"text": a.problem}
    if "=" in a.problem:
        single["dict"] = dict(f.split("=", 1) for f in a.problem.split(","))
    for name, problem in single.items():
        rounds_of(lambda: m.rank(problem), 1000, 1)
        r = rounds_of(lambda: m.rank(problem), a.calls, a.rounds)
        print("single_%s_us=%.3f single_%s_median_us=%.3f calls=%d rounds=%d" %
              (name, 1e6 * min(r), name, 1e6 * statistics.median(r), a.calls, a.rounds))

    lines = [a.problem]
    if a.problems:
        with open(a.problems) as f:
            lines = [s.strip() for s in f if s.strip()]
    problems = [lines[i % len(lines)] for i in range(a.batch)]
    batch = m._problems(problems)  # the values array, or None for find-db keys (the batch then goes as text)
    if batch is None:
        batch = problems
    m.rank_batch(batch[:100], threads=a.threads)
    r = rounds_of(lambda: m.rank_batch(batch, threads=a.threads), 1, max(3, a.rounds // 2))
    print("batch_us_per_problem=%.3f batch_median_us_per_problem=%.3f batch=%d threads=%d as=%s" %
          (1e6 * min(r) / a.batch, 1e6 * statistics.median(r) / a.batch, a.batch, a.threads,
           "text" if batch is problems else "values"))


if __name__ == "__main__":
    main()
