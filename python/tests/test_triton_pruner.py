"""heurist.triton.pruner over fake Triton configs (objects with .kwargs, .num_warps, .num_stages) and fake tensors
(.dtype, .data_ptr): the mapping of configs and kernel arguments to the model's columns, the k configs it keeps
against `heurist predict`'s ranking of the same model (an independent reference), what becomes of configs the
model cannot map, and that importing heurist.triton imports neither triton nor torch. The model is a gbdt trained
here on tests/fixtures/triton/triton_mm_small.csv (8 bf16 shapes x 40 configurations of datasets/h100/triton)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import heurist
import heurist.triton as ht
from conftest import REPO, cli, predict_ranking, problem_text

TABLE = REPO / "tests" / "fixtures" / "triton" / "triton_mm_small.csv"
COLUMNS = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages"]


class FakeConfig:
    """What the pruner reads of a triton.Config."""

    def __init__(self, bm, bn, bk, gm, warps, stages, **extra):
        self.kwargs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, **extra)
        self.num_warps, self.num_stages, self.num_ctas = warps, stages, 1

    def values(self):
        return [self.kwargs["BLOCK_M"], self.kwargs["BLOCK_N"], self.kwargs["BLOCK_K"], self.kwargs["GROUP_M"],
                self.num_warps, self.num_stages]


class FakeTensor:
    def __init__(self, dtype):
        self.dtype = dtype

    def data_ptr(self):
        return 4096


def table_configs():
    """The fixture's configurations, in file order."""
    out, seen = [], set()
    with open(TABLE) as f:
        head = f.readline().rstrip("\n").split(",")
        at = [head.index(c) for c in COLUMNS]
        for line in f:
            w = line.split(",")
            c = tuple(int(w[i]) for i in at)
            if c not in seen:
                seen.add(c)
                out.append(FakeConfig(*c))
    return out


def args(m, n, k, dtype="torch.bfloat16"):
    """A matmul kernel's named arguments as Triton passes them to early_config_prune."""
    return {"a_ptr": FakeTensor(dtype), "b_ptr": FakeTensor(dtype), "c_ptr": FakeTensor(dtype), "M": m, "N": n, "K": k,
            "stride_am": k, "stride_ak": 1, "stride_bk": n, "stride_bn": 1, "stride_cm": n, "stride_cn": 1}


def name(values):
    return ",".join("%s=%s" % (c, v) for c, v in zip(COLUMNS, values))


def assert_top(kept, reference, k):
    """kept (configs) are reference's k best (heurist predict's [(name, probability, score)], best first): the
    same names in order, or where scores tie, configs of the same scores."""
    got = [name(c.values()) for c in kept]
    want = [row[0] for row in reference[:k]]
    if got != want and all(row[2] is not None for row in reference):
        score = {row[0]: row[2] for row in reference}
        assert all(g in score for g in got), got
        assert [score[g] for g in got] == [row[2] for row in reference[:k]], (got, want)
    else:
        assert got == want


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("triton") / "triton_mm.h5"
    cli("train", "--data", TABLE, "--model", "gbdt", "--config", '{"rounds":20,"objective":"rank"}', "--threads",
        "1", "--out", path, "--quiet")
    m = heurist.Model.load(path)
    yield m
    m.close()


def test_import_does_not_import_triton_or_torch():
    code = "import sys, heurist.triton; print('triton' in sys.modules, 'torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                       cwd=str(REPO / "python"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


def test_mapping_of_configs_and_arguments(model):
    assert model.config_columns == COLUMNS and model.problem_columns == ["M", "N", "K", "dtype"]
    c = FakeConfig(128, 64, 32, 8, 4, 3)
    assert ht.config_values(c, COLUMNS, {}) == ({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8,
                                                 "num_warps": 4, "num_stages": 3}, None)
    missing = FakeConfig(128, 64, 32, 8, 4, 3)
    del missing.kwargs["GROUP_M"]
    assert ht.config_values(missing, COLUMNS, {}) == (None, "GROUP_M")
    assert ht.problem_values(args(4, 57344, 8192), model.problem_columns) == {"M": 4, "N": 57344, "K": 8192,
                                                                               "dtype": "bf16"}
    assert ht.problem_values(args(64, 64, 64, "torch.float16"), ["dtype"]) == {"dtype": "fp16"}
    with pytest.raises(ValueError, match="'Q'"):
        ht.problem_values(args(1, 2, 3), ["Q"])


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("shape", [(4, 57344, 8192), (1738, 14336, 4096), (12608, 768, 3072), (300, 5000, 1000)])
def test_keeps_the_models_top_k(model, shape, k):
    configs = table_configs()
    kept = ht.pruner(model, k)(configs, args(*shape))
    problem = problem_text({"M": shape[0], "N": shape[1], "K": shape[2], "dtype": "bf16"})
    assert_top(kept, predict_ranking(model.path, problem, len(configs)), k)
    assert all(any(c is x for x in configs) for c in kept)


def test_a_candidate_subset_and_unmapped_configs(model):
    configs = table_configs()[5:17]
    problem = problem_text({"M": 625, "N": 37888, "K": 3584, "dtype": "bf16"})
    names = {name(c.values()) for c in configs}
    reference = [row for row in predict_ranking(model.path, problem, 40) if row[0] in names]
    odd = FakeConfig(64, 64, 64, 8, 4, 3)
    del odd.kwargs["BLOCK_K"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        prune = ht.pruner(model, 3)
        kept = prune([odd] + configs, args(625, 37888, 3584))
        assert_top(kept, reference, 3)
        assert len(seen) == 1 and "BLOCK_K" in str(seen[0].message)
        few = prune([odd, configs[0]], args(625, 37888, 3584))
    assert few[0] is configs[0] and few[1] is odd
    assert len(seen) == 1, "one warning a pruner"


def test_problem_override_and_unknown_dtype(model):
    configs = table_configs()
    prune = ht.pruner(model, 2, problem=lambda a: {"M": a["rows"], "N": a["cols"], "K": a["depth"], "dtype": "bf16"})
    kept = prune(configs, {"x": FakeTensor("torch.float32"), "rows": 1738, "cols": 14336, "depth": 4096})
    assert kept == ht.pruner(model, 2)(configs, args(1738, 14336, 4096))
    with pytest.raises(heurist.HeuristError):
        ht.pruner(model, 2)(configs, args(64, 64, 64, "torch.float32"))
    with pytest.raises(ValueError):
        ht.pruner(model, 0)


def test_model_rank_over_candidate_dicts_matches_the_value_matrix(model):
    # Model.rank builds the candidate matrix from dicts; that matrix must stay alive through the foreign call
    # (its freed memory is reused by the allocations around the call and the ranking then reads garbage)
    m = model
    cols = m.config_columns
    dicts = [dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages"), c.values()))
             for c in table_configs()]
    dicts = [{col: d[col] for col in cols} for d in dicts]
    values = np.array([[d[col] for col in cols] for d in dicts], dtype=np.float64)
    problem = {"M": 512, "N": 4096, "K": 4096, "dtype": "bf16"}
    expected = m.rank(problem, candidates=values)[0].tolist()
    for _ in range(300):
        assert m.rank(problem, candidates=dicts)[0].tolist() == expected
