"""heurist.train, cv, compare and evaluate against the command line's jobs on the same data and options."""
import json

import numpy as np
import pytest

import heurist
from conftest import GEMM_T, TABLE_PROBLEMS, cli


def test_train_writes_the_model_the_command_writes(tmp_path):
    options = {"model": "gbdt", "config": {"rounds": 5}, "seed": 3, "threads": 1}
    report = heurist.train(GEMM_T, tmp_path / "api.h5", **options, quiet=True)
    assert report["model"] == "gbdt" and 0 <= report["metrics"]["top1"] <= 1
    cli("train", "--data", GEMM_T, "--model", "gbdt", "--config", '{"rounds": 5}', "--seed", 3, "--threads", 1,
        "--out", tmp_path / "cli.h5", "--report", tmp_path / "cli.json", "--quiet")
    want = json.loads((tmp_path / "cli.json").read_text())
    assert report["metrics"]["top1"] == want["metrics"]["top1"]
    a, b = heurist.Model.load(tmp_path / "api.h5"), heurist.Model.load(tmp_path / "cli.h5")
    for p in TABLE_PROBLEMS:
        ia, sa = a.rank(p)
        ib, sb = b.rank(p)
        assert np.array_equal(ia, ib) and np.array_equal(sa, sb)


def test_cv_compare_and_evaluate_return_their_reports(tmp_path):
    rep = heurist.cv(GEMM_T, model="gbdt", folds=2, config={"rounds": 3}, threads=1, quiet=True)
    assert rep["split"].startswith("groupkfold:2") and len(rep["folds"]) == 2
    rep = heurist.compare(GEMM_T, models=["gbdt", "frequent"], split="random:0.3", config={"gbdt": {"rounds": 3}},
                          threads=1, out=tmp_path / "cmp", quiet=True)
    assert isinstance(rep, list) and {"gbdt", "frequent"} <= {r["model"] for r in rep}
    assert (tmp_path / "cmp" / "report.md").exists()
    heurist.train(GEMM_T, tmp_path / "m.h5", model="gbdt", config={"rounds": 3}, threads=1, quiet=True)
    rep = heurist.evaluate(tmp_path / "m.h5", GEMM_T, quiet=True)
    assert rep["n_train"] == 0 and rep["metrics"]["top1"] >= 0


def test_a_bad_option_raises_the_command_lines_message(tmp_path):
    with pytest.raises(heurist.HeuristError) as e:
        heurist.train(GEMM_T, tmp_path / "m.h5", model="gbdt", no_such_option=1)
    assert e.value.status == heurist.EINVAL and "no-such-option" in e.value.message
    with pytest.raises(heurist.HeuristError) as e:
        heurist.train(tmp_path / "missing.csv", tmp_path / "m.h5", model="gbdt")
    assert "missing.csv" in e.value.message
