"""heurist.Model against `heurist predict` on the same problems, one problem against a batch, and its errors."""
import threading
import time

import numpy as np
import pytest

import heurist
from conftest import CONV_KEYS, TABLE_PROBLEMS, predict_ranking, problem_text


def test_a_model_says_what_it_is(conv_model, tune_model, table_model):
    m = heurist.Model.load(conv_model)
    assert m.task == "select" and len(m.kernels) > 1 and m.params == []
    t = heurist.Model.load(tune_model)
    assert t.task == "tune" and t.params[0] == "read_size" and len(t.params) == 8
    g = heurist.Model.load(table_model)
    assert g.kernels[0].startswith("tile_m=")


@pytest.mark.parametrize("key", CONV_KEYS)
def test_rank_orders_the_kernels_as_predict_does(conv_model, key):
    m = heurist.Model.load(conv_model)
    idx, score = m.rank(key, k=3)
    want = predict_ranking(conv_model, key, 3)
    assert [m.kernels[i] for i in idx] == [name for name, _, _ in want]
    assert len(idx) == len(score) == len(want)
    assert list(score) == sorted(score, reverse=True)


@pytest.mark.parametrize("problem", TABLE_PROBLEMS)
def test_a_table_problem_as_a_dict_ranks_as_predict_does(table_model, problem):
    m = heurist.Model.load(table_model)
    idx, score = m.rank(problem, k=5)
    want = predict_ranking(table_model, problem_text(problem), 5)
    assert [m.kernels[i] for i in idx] == [name for name, _, _ in want]
    idx_text, score_text = m.rank(problem_text(problem), k=5)
    assert np.array_equal(idx, idx_text) and np.array_equal(score, score_text)


def test_candidates_as_dicts_are_ranked_in_the_models_order(table_model):
    m = heurist.Model.load(table_model)
    p = TABLE_PROBLEMS[0]
    order, _ = m.rank(p)
    # the model's 2nd, 5th and 1st configurations as dicts (numbers as ints or strings), and one it does not know
    def as_dict(k):
        return dict(f.split("=") for f in m.kernels[order[k]].split(","))
    candidates = [as_dict(1), {c: int(v) for c, v in as_dict(4).items()}, {"tile_m": 3, "tile_n": 3, "tile_k": 3,
                                                                             "split_k": 3}, as_dict(0)]
    assert m.shortlist(p, 2, candidates=candidates) == [3, 0]
    assert m.shortlist(p, 10, candidates=candidates) == [3, 0, 1]
    assert m.shortlist(p, 1) == [int(order[0])]


def test_a_batch_equals_the_single_calls(conv_model, table_model):
    m = heurist.Model.load(conv_model)
    single = [int(m.rank(k, k=1)[0][0]) for k in CONV_KEYS]
    for threads in (1, 2):
        best = m.rank_batch(CONV_KEYS, threads=threads)
        assert best.shape == (len(CONV_KEYS), 1) and best[:, 0].tolist() == single
    g = heurist.Model.load(table_model)
    single = [int(g.rank(p, k=1)[0][0]) for p in TABLE_PROBLEMS]
    assert g.rank_batch(TABLE_PROBLEMS)[:, 0].tolist() == single


def test_tune_predicts_as_predict_does(tune_model):
    from conftest import cli
    m = heurist.Model.load(tune_model)
    rows = []
    for key in CONV_KEYS:
        got = m.tune(key)
        assert list(got) == m.params
        want = cli("predict", "--model", tune_model, "--problem", key).split()[0]
        assert ",".join(str(v) for v in got.values()) == want
        rows.append(list(got.values()))
    assert m.tune_batch(CONV_KEYS, threads=2).tolist() == rows


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
        m.tune(CONV_KEYS[0])
    assert e.value.status == heurist.ESTATE
    g = heurist.Model.load(table_model)
    with pytest.raises(heurist.HeuristError) as e:
        g.rank({"M": 128, "N": 4096, "dtype": "fp16"})
    assert e.value.status == heurist.EINVAL and "'K'" in e.value.message
    m.close()
    with pytest.raises(heurist.HeuristError, match="closed"):
        m.rank(CONV_KEYS[0])


def test_threads_rank_at_once_with_the_gil_released(table_model, monkeypatch):
    m = heurist.Model.load(table_model)
    keys = [problem_text(TABLE_PROBLEMS[i % len(TABLE_PROBLEMS)]) for i in range(40000)]
    want = m.rank_batch(keys[:len(TABLE_PROBLEMS)], threads=1)[:, 0]
    span = {}
    foreign = heurist._lib.lib.heurist_rank_batch

    def timed(*args):  # the foreign call alone, without the batch's conversions in Python
        t0 = time.perf_counter()
        rc = foreign(*args)
        span["call"] = (t0, time.perf_counter())
        return rc

    monkeypatch.setattr(heurist._lib.lib, "heurist_rank_batch", timed)
    worker = threading.Thread(target=lambda: span.setdefault("out", m.rank_batch(keys, threads=1)))
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
        m.rank(TABLE_PROBLEMS[0], k=1)
    worker.join()
    t0, t1 = span["call"]
    # The main thread kept running while the library ranked the batch (ctypes let go of the GIL for the foreign
    # call): its longest pause within the call is a fraction of the call. Holding the GIL would pause it for the
    # whole call but the few milliseconds of a thread switch at either end.
    during = [t0] + [t for t in ticks if t0 < t < t1] + [t1]
    pause = max(b - a for a, b in zip(during, during[1:]))
    assert pause < 0.5 * (t1 - t0), "the main thread paused %.3f s of the %.3f s batch" % (pause, t1 - t0)
    assert (span["out"][:, 0] == np.resize(want, len(keys))).all()
