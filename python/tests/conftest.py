"""Fixtures of the Python package's tests: models trained once per run by the `heurist` command beside the library
under test (HEURIST_LIBRARY's folder, else the repository's build/), whose `heurist predict` is the independent
reference the package's answers are checked against."""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MIOPEN = REPO / "datasets" / "miopen"
H100 = REPO / "datasets" / "h100"
GEMM_T = REPO / "tests" / "fixtures" / "repro" / "gemm_t.csv"

CONV_KEYS = [
    "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F", "256-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-B",
    "64-56-56-3x3-64-56-56-16-1x1-1x1-1x1-0-NCHW-FP16-F", "128-28-28-3x3-128-28-28-8-1x1-1x1-1x1-0-NCHW-FP32-W",
    "512-7-7-1x1-2048-7-7-64-0x0-1x1-1x1-0-NCHW-BF16-F", "3-224-224-7x7-64-112-112-4-3x3-2x2-1x1-0-NCHW-FP32-F",
]

# problems of tests/fixtures/repro/gemm_t.csv
TABLE_PROBLEMS = [
    {"M": 128, "N": 4096, "K": 64, "dtype": "fp16"}, {"M": 1024, "N": 128, "K": 64, "dtype": "bf16"},
    {"M": 512, "N": 4096, "K": 1024, "dtype": "fp16"}, {"M": 64, "N": 1024, "K": 1024, "dtype": "bf16"},
    {"M": 2048, "N": 64, "K": 4096, "dtype": "fp16"},
]


def problem_text(p):
    return ",".join("%s=%s" % kv for kv in p.items())


def heurist_command():
    lib = os.environ.get("HEURIST_LIBRARY")
    build = Path(lib).resolve().parent if lib else REPO / "build"
    return str(build / "heurist")


def cli(*args):
    """`heurist ARGS`: its stdout, or the test fails with its stderr."""
    r = subprocess.run([heurist_command(), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, "heurist %s: %s" % (" ".join(map(str, args)), r.stderr)
    return r.stdout


def predict_ranking(model, problem, top):
    """`heurist predict`'s ranking: [(kernel name, score or None)], best first (a row is its rank, a probability
    "NN.NN%" where printed, a score where printed, and the kernel's name)."""
    out = cli("predict", "--model", model, "--problem", problem, "--top", top)
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit() and line.startswith(" "):
            scores = [float(x) for x in f[1:-1] if not x.endswith("%")]
            rows.append((f[-1], scores[0] if scores else None))
    return rows


@pytest.fixture(scope="session")
def table_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "table.h5"
    cli("train", "--data", GEMM_T, "--model", "gbdt", "--config", '{"rounds":10}', "--threads", "1", "--out", path,
        "--quiet")
    return str(path)


@pytest.fixture(scope="session")
def conv_model(tmp_path_factory):
    """gbdt on the H100 cuDNN find-db's repeat timings (the smallest shipped find-db: a model in a second)."""
    path = tmp_path_factory.mktemp("models") / "conv.h5"
    cli("train", "--data", H100 / "h100_cudnn_conv.noise.fdb.txt.bz2", "--task", "select", "--model", "gbdt",
        "--config", '{"rounds":3}', "--split", "random:0.5", "--threads", "1", "--out", path, "--quiet")
    return str(path)


@pytest.fixture(scope="session")
def tune_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "tune.h5"
    cli("train", "--data", MIOPEN / "gfx906_60.db.bz2", "--task", "tune", "--solver", "ConvAsm1x1U", "--model",
        "gbdt", "--config", '{"rounds":2}', "--threads", "1", "--out", path, "--quiet")
    return str(path)


@pytest.fixture(scope="session")
def table_tune_model(tmp_path_factory):
    """A tune model of gemm_t.csv with a categorical configuration column added ("order": row where split_k is
    1, else col)."""
    d = tmp_path_factory.mktemp("table_tune")
    lines = GEMM_T.read_text().splitlines()
    out = [lines[0].replace("split_k,", "split_k,order,")]
    for line in lines[1:]:
        f = line.split(",")
        out.append(",".join(f[:8] + ["row" if f[7] == "1" else "col"] + f[8:]))
    (d / "t.csv").write_text("\n".join(out) + "\n")
    (d / "t.schema.json").write_text(
        '{"problem": ["M","N","K","dtype"], "kernel": ["tile_m","tile_n","tile_k","split_k","order"], '
        '"categorical": ["dtype","order"], "measure": "time_us", "better": "lower"}')
    cli("train", "--data", d / "t.csv", "--task", "tune", "--model", "gbdt", "--config", '{"rounds":3}', "--threads",
        "1", "--out", d / "t.h5", "--quiet")
    return str(d / "t.h5")
