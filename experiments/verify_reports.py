"""What the GEMM verify-report experiments (gemm_pick_runs.py, gemm_shortlist_compare.py) share: a report's rows
read by column name (heurist-collect verify --table writes them tab-separated; gzip-compressed reports read as they
are; '#' summary lines skipped), and the 95% bootstrap interval of a mean (the values resampled with replacement,
seeded). Python 3 standard library only."""
import csv
import gzip
import random
import sys


def read_rows(path, need, what):
    """[(line number, {column: value})] of a report's rows; exits naming the report and the first column of `need`
    it lacks (`what` says which report the script expects)."""
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        lines = [line for line in f if not line.startswith('#')]
    reader = csv.DictReader(lines, delimiter='\t')
    for c in need:
        if c not in (reader.fieldnames or []):
            sys.exit('%s: no column %s (%s)' % (path, c, what))
    return list(enumerate(reader, 2))


def mean_interval(x, resamples, seed):
    """The 2.5th and 97.5th percentiles of the mean of x over `resamples` draws of len(x) values with replacement."""
    rng = random.Random(seed)
    n = len(x)
    means = sorted(sum(x[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]
