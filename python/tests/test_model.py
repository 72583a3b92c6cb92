"""heurist.Model against `heurist predict` on the same problems, one problem against a batch, problems and
candidates as dicts against values, and its errors."""
import threading
import time

import numpy as np
import pytest

import heurist
from conftest import CONV_KEYS, TABLE_PROBLEMS, cli, predict_ranking, problem_text


def test_a_model_says_what_it_is(conv_model, tune_model, table_model):
    m = heurist.Model.load(conv_model)
    assert m.task == "select" and len(m.kernels) > 1 and m.params == [] and m.config_columns == []
    assert m.problem_columns[0] == "in_c" and "direction" in m.problem_columns
    assert "F" in m.categories("direction") and m.categories(0) == []
    t = heurist.Model.load(tune_model)
    assert t.task == "tune" and t.params[0] == "read_size" and len(t.params) == 8
    g = heurist.Model.load(table_model)
    assert g.problem_columns == ["M", "N", "K", "dtype"]
    assert g.config_columns == ["tile_m", "tile_n", "tile_k", "split_k"]
    assert sorted(g.categories("dtype")) == ["bf16", "fp16"] and g.categories("tile_m") == []
    assert g.kernels[0].startswith("tile_m=")


@pytest.mark.parametrize("key", CONV_KEYS)
def test_rank_orders_the_kernels_as_predict_does(conv_model, key):
    m = heurist.Model.load(conv_model)
    index, score = m.rank(key, k=3)
    want = predict_ranking(conv_model, key, 3)
    assert [m.kernels[i] for i in index] == [name for name, _ in want]
    assert index.dtype == np.int32 and score.dtype == np.float32 and len(index) == len(score) == 3
    assert list(score) == sorted(score, reverse=True)


@pytest.mark.parametrize("problem", TABLE_PROBLEMS)
def test_a_table_problem_as_a_dict_ranks_as_predict_does(table_model, problem):
    m = heurist.Model.load(table_model)
    index, score = m.rank(problem, k=5)
    want = predict_ranking(table_model, problem_text(problem), 5)
    assert [m.kernels[i] for i in index] == [name for name, _ in want]
    assert np.allclose(score, [s for _, s in want], atol=1e-4)
    by_text = m.rank(problem_text(problem), k=5)
    values = np.array([problem["M"], problem["N"], problem["K"], m.categories("dtype").index(problem["dtype"])])
    by_values = m.rank(values, k=5)
    for other in (by_text, by_values):
        assert np.array_equal(index, other[0]) and np.array_equal(score, other[1])


def as_dict(m, kernel):
    return {c: int(v) for c, v in (f.split("=") for f in m.kernels[kernel].split(","))}


def test_candidates_as_dicts_or_values_rank_as_the_models_own_configurations(table_model):
    m = heurist.Model.load(table_model)
    p = TABLE_PROBLEMS[0]
    order, scores = m.rank(p)
    picked = [4, 1, 7, 0]  # positions in the model's ranking
    candidates = [as_dict(m, order[r]) for r in picked]
    index, score = m.rank(p, candidates=candidates)
    assert index.tolist() == [3, 1, 0, 2]
    assert np.allclose(score, [scores[r] for r in sorted(picked)])
    as_values = np.array([[c[col] for col in m.config_columns] for c in candidates], dtype=np.float64)
    assert np.array_equal(m.rank(p, candidates=as_values)[0], index)
    assert m.shortlist(p, 2, candidates=candidates) == [3, 1]
    assert m.shortlist(p, 2, candidates=[{k: str(v) for k, v in c.items()} for c in candidates]) == [3, 1]
    assert m.shortlist(p, 1) == [int(order[0])]


def test_a_batch_equals_the_single_calls(conv_model, table_model):
    m = heurist.Model.load(conv_model)
    single = np.array([m.rank(k, k=2)[0] for k in CONV_KEYS])
    for threads in (1, 2):
        assert m.rank_batch(CONV_KEYS, threads=threads).tolist() == single[:, :1].tolist()
    assert np.array_equal(m.rank_batch(CONV_KEYS, k=2), single)
    g = heurist.Model.load(table_model)
    single = np.array([g.rank(p, k=3)[0] for p in TABLE_PROBLEMS])
    values = np.array([[p["M"], p["N"], p["K"], g.categories("dtype").index(p["dtype"])] for p in TABLE_PROBLEMS])
    for batch in (TABLE_PROBLEMS, [problem_text(p) for p in TABLE_PROBLEMS], values):
        for threads in (1, 2):
            top = g.rank_batch(batch, k=3, threads=threads)
            assert top.shape == (len(TABLE_PROBLEMS), 3) and top.dtype == np.int32
            assert np.array_equal(top, single)
    candidates = [as_dict(g, k) for k in (5, 2, 9)]
    single = np.array([g.rank(p, candidates=candidates)[0] for p in TABLE_PROBLEMS])
    assert np.array_equal(g.rank_batch(TABLE_PROBLEMS, candidates=candidates, k=3), single)
    top = g.rank_batch(TABLE_PROBLEMS, candidates=candidates, k=5)
    assert np.array_equal(top[:, :3], single) and (top[:, 3:] == -1).all()


def test_tune_predicts_as_predict_does(tune_model):
    m = heurist.Model.load(tune_model)
    rows = []
    for key in CONV_KEYS:
        got = m.tune(key)
        assert list(got) == m.params
        want = cli("predict", "--model", tune_model, "--problem", key).split()[0]
        assert ",".join(str(v) for v in got.values()) == want
        rows.append(list(got.values()))
    assert m.tune_batch(CONV_KEYS, threads=2).tolist() == rows


def test_a_table_tune_model_names_its_categorical_values_as_predict_does(table_tune_model):
    m = heurist.Model.load(table_tune_model)
    assert m.params == ["tile_m", "tile_n", "tile_k", "split_k", "order"] == m.config_columns
    order = m.categories("order")
    rows = []
    for p in TABLE_PROBLEMS:
        got = m.tune(p)
        lines = cli("predict", "--model", table_tune_model, "--problem", problem_text(p)).splitlines()[1:]
        assert got == {f[0]: int(f[1]) if f[1].isdigit() else f[1] for f in (line.split() for line in lines[:5])}
        assert got["order"] in ("row", "col")
        rows.append([got[c] for c in m.params[:4]] + [order.index(got["order"])])
    assert m.tune_batch(TABLE_PROBLEMS).tolist() == rows


def test_errors_raise_with_the_librarys_message(conv_model, tune_model, table_model):
    with pytest.raises(heurist.HeuristError) as e:
        heurist.Model.load("no/such/model.h5")
    assert e.value.status == heurist.EIO and "no/such/model.h5" in e.value.message
    m = heurist.Model.load(conv_model)
    with pytest.raises(heurist.HeuristError) as e:
        m.rank("not-a-key")
    assert e.value.status == heurist.EINVAL and "not-a-key" in str(e.value)
    with pytest.raises(heurist.HeuristError) as e:
        m.rank_batch([CONV_KEYS[0], "1-2-3", CONV_KEYS[1]])
    assert e.value.status == heurist.EINVAL and "problem 1" in e.value.message
    with pytest.raises(heurist.HeuristError) as e:
        m.rank_batch([CONV_KEYS[0], "1-2-3", CONV_KEYS[1]], k=2)  # parsed to values first
    assert e.value.status == heurist.EINVAL and e.value.message.startswith("problem 1: ")
    with pytest.raises(heurist.HeuristError) as e:
        m.tune(CONV_KEYS[0])
    assert e.value.status == heurist.ESTATE
    g = heurist.Model.load(table_model)
    with pytest.raises(heurist.HeuristError) as e:
        g.rank({"M": 128, "N": 4096, "dtype": "fp16"})
    assert e.value.status == heurist.EINVAL and "'K'" in e.value.message
    with pytest.raises(heurist.HeuristError, match="column 'dtype'.*'fp64'"):
        g.rank({"M": 128, "N": 4096, "K": 64, "dtype": "fp64"})
    with pytest.raises(heurist.HeuristError, match="problem 1: column 'dtype': unknown value 'fp64'"):
        g.rank_batch([TABLE_PROBLEMS[0], dict(TABLE_PROBLEMS[0], dtype="fp64")])
    with pytest.raises(heurist.HeuristError, match="problem 0: column 'K' is missing"):
        g.rank_batch([{"M": 1, "N": 2, "dtype": "fp16"}])
    with pytest.raises(heurist.HeuristError, match="'Q' is not a column"):
        g.rank_batch([dict(TABLE_PROBLEMS[0], Q=1)])
    with pytest.raises(heurist.HeuristError, match=r"candidate 1: column 'split_k' is missing"):
        g.rank(TABLE_PROBLEMS[0], candidates=[as_dict(g, 0), {"tile_m": 64, "tile_n": 64, "tile_k": 32}])
    with pytest.raises(heurist.HeuristError, match=r"an array \(n, 4\)"):
        g.rank_batch(np.zeros((3, 5)))
    with pytest.raises(heurist.HeuristError) as e:
        g.rank(TABLE_PROBLEMS[0], candidates=np.array([[64, 64, 32, np.nan]]))
    assert e.value.status == heurist.EINVAL and "split_k" in e.value.message
    m.close()
    with pytest.raises(heurist.HeuristError, match="closed"):
        m.rank(CONV_KEYS[0])


def test_threads_rank_at_once_with_the_gil_released(table_model, monkeypatch):
    m = heurist.Model.load(table_model)
    problems = np.resize(np.array([[p["M"], p["N"], p["K"], m.categories("dtype").index(p["dtype"])]
                                   for p in TABLE_PROBLEMS], dtype=np.float64), (200000, 4))
    want = m.rank_batch(problems[:len(TABLE_PROBLEMS)], threads=1)[:, 0]
    span = {}
    foreign = heurist._lib.lib.heurist_rank_values_batch

    def timed(*args):  # the foreign call alone
        t0 = time.perf_counter()
        rc = foreign(*args)
        span["call"] = (t0, time.perf_counter())
        return rc

    monkeypatch.setattr(heurist._lib.lib, "heurist_rank_values_batch", timed)
    worker = threading.Thread(target=lambda: span.setdefault("out", m.rank_batch(problems, threads=1)))
    ticks = []
    worker.start()
    while worker.is_alive():  # this thread ranks too, with predictors of its own
        ticks.append(time.perf_counter())
        assert m.rank(TABLE_PROBLEMS[0], k=1)[0][0] == want[0]
    worker.join()
    t0, t1 = span["call"]
    # The main thread kept running while the library ranked the batch (ctypes let go of the GIL for the foreign
    # call): its longest pause within the call is a fraction of the call. Holding the GIL would pause it for the
    # whole call but the few milliseconds of a thread switch at either end.
    during = [t0] + [t for t in ticks if t0 < t < t1] + [t1]
    pause = max(b - a for a, b in zip(during, during[1:]))
    assert pause < 0.5 * (t1 - t0), "the main thread paused %.3f s of the %.3f s batch" % (pause, t1 - t0)
    assert (span["out"][:, 0] == np.resize(want, len(problems))).all()
