"""README's Python example, run as a user would: from a folder holding the shipped datasets."""
import os
import subprocess
import sys
import textwrap

from conftest import REPO


def readme_example():
    lines = (REPO / "README.md").read_text().splitlines()
    start = lines.index("    import heurist")
    block = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        block.append(line)
    return textwrap.dedent("\n".join(block))


def test_the_readme_example_trains_loads_and_ranks(tmp_path):
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-c", readme_example()], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    # the example's lines among those the training prints as the command line does
    top1 = [line for line in r.stdout.splitlines() if line.startswith("held-out top-1: ")]
    assert len(top1) == 1 and 0 <= float(top1[0].split(": ")[1]) <= 1, r.stdout
    ranked = [line.split() for line in r.stdout.splitlines() if "algo_id=" in line]
    assert len(ranked) == 3, r.stdout
    scores = [float(f[0]) for f in ranked]
    assert scores == sorted(scores, reverse=True)
    assert (tmp_path / "gemm.h5").exists()
