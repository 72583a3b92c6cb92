#!/usr/bin/env python3
"""Self-checks of collect/scripts/triton_matmul.py's supervision of its timing processes (Python 3 standard
library only, no torch: a fake GPU backend stands for Triton's): a configuration that breaks its process's CUDA
context is skipped for its variant as "crash: ...", its shape goes back to the queue and is written whole by a
fresh process; a process that dies without a report is handled from the shape and configuration it noted; a
shape that crashes outside any configuration is retried, then written with every configuration skipped; an
error that leaves the context working skips that configuration alone; the crash pairs are kept for a later
run; the bookkeeping (Supervision) on its own; the dry run's model follows the timing rules."""
import hashlib
import multiprocessing as mp
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'collect', 'scripts'))

import triton_matmul as tm  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# What the fake GPU does, per (shape key, configuration) (configuration None: the shape's operands):
#   'sticky'  raises a CUDA error that breaks the context (every later call fails)
#   'die'     ends the process at once, with no report (as a segmentation fault does)
#   'error'   raises an error that leaves the context working (a launch refused)
# Forked timing processes inherit it.
PLAN = {}


class FakeBackend:
    """triton_matmul.TritonBackend's interface over numbers hashed from the shape and the configuration."""

    def __init__(self, slow_factor):
        self.slow, self.broken = slow_factor, False

    def load(self, cfg, var, shape=None):
        pass

    def _act(self, key, cfg):
        if self.broken:
            raise RuntimeError('CUDA error: operation not supported on global/shared address space')
        act = PLAN.get((key, cfg))
        if act == 'sticky':
            self.broken = True
            raise RuntimeError('CUDA error: operation not supported on global/shared address space')
        if act == 'die':
            os._exit(11)
        if act == 'error':
            raise RuntimeError('launch refused')

    def operands(self, shape, seed):
        self._act(tm.key_of(shape), None)
        return shape

    def time(self, ops, cfg, best_us):
        self._act(tm.key_of(ops), cfg)
        h = hashlib.sha256(('%s|%s' % (tm.key_of(ops), cfg)).encode()).digest()
        us = 10.0 + int.from_bytes(h[:4], 'little') % 10000 / 100.0
        return (us, 'warmup') if best_us and us > self.slow * best_us else (us, 'batches')

    def context_ok(self):
        return not self.broken


def fake_backend(slow_factor):
    return FakeBackend(slow_factor)


SHAPES = [(64, 64, 48, 'fp16', 'llama3'), (128, 96, 750, 'bf16', 'deepseek_moe'), (32, 64, 64, 'fp16', 'vit'),
          (96, 128, 750, 'bf16', 'mixtral'), (16, 32, 32, 'bf16', 'gpt2'), (48, 48, 750, 'bf16', 'swin'),
          (80, 64, 128, 'fp16', 'phi3'), (64, 80, 750, 'bf16', 'qwen2.5')]
CONFIGS = tm.config_space(12, 0, 227)


def collect(tmp, gpus, plan, failed=None):
    """One run of the timing processes over SHAPES with the fake backend, then the merge: (Supervision,
    {key: [row lines]}, {key: [skip lines]})."""
    PLAN.clear()
    PLAN.update(plan)
    folder = os.path.join(tmp, 'o.d')
    os.makedirs(folder, exist_ok=True)
    log = []
    sup = tm.run_timing(mp.get_context('fork'), fake_backend, gpus, list(range(len(SHAPES))), SHAPES, CONFIGS,
                        dict(failed or {}), folder, '', float('inf'), 5.0, log.append, max_restarts=4)
    tm.write_crashes(folder, {k: v for k, v in sup.failed.items() if v.startswith('crash: ')})
    tm.merge(os.path.join(tmp, 'o'), folder, SHAPES, tm.read_done(folder), 132)
    rows, skips = {}, {}
    for path, table in ((os.path.join(tmp, 'o.csv'), rows), (os.path.join(tmp, 'o.skipped.csv'), skips)):
        with open(path) as f:
            next(f)
            for line in f:
                table.setdefault(','.join(line.split(',')[:4]), []).append(line.rstrip('\n'))
    return sup, rows, skips, log


def cfg_of(line, first):
    return tuple(int(v) for v in line.split(',')[first:first + 6])


def accounted(rows, skips):
    """Every shape written, each configuration once: a row or a skip."""
    for s in SHAPES:
        k = tm.key_of(s)
        got = sorted([cfg_of(r, 5) for r in rows.get(k, [])] + [cfg_of(r, 4) for r in skips.get(k, [])])
        check(got == sorted(CONFIGS), 'shape %s: %d of %d configurations accounted for' % (k, len(got), len(CONFIGS)))


def crash_of_a_configuration():
    bad = CONFIGS[5]
    crashed_key = tm.key_of(SHAPES[3])   # bf16, K 750: the variant of shapes 1, 3, 5 and 7
    for gpus in ([0], [0, 1]):
        with tempfile.TemporaryDirectory() as tmp:
            plan = {(crashed_key, bad): 'sticky', (tm.key_of(SHAPES[0]), CONFIGS[2]): 'error'}
            sup, rows, skips, log = collect(tmp, gpus, plan)
            accounted(rows, skips)
            why = [r.split(',', 10)[10] for r in skips.get(crashed_key, []) if cfg_of(r, 4) == bad]
            check(len(why) == 1 and why[0].startswith('crash: ') and 'global/shared address space' in why[0],
                  '%d gpus: the crashing configuration is skipped as a crash on its shape: %s' % (len(gpus), why))
            n = len(rows.get(crashed_key, []))
            check(n == len(CONFIGS) - 1, '%d gpus: the crashed shape is timed again whole: %d rows' % (len(gpus), n))
            check(len(sup.crashes) == 1 and sum(sup.restarts.values()) == 1,
                  '%d gpus: one crash, one fresh process: %s' % (len(gpus), sup.crashes))
            # the other configurations of the crashing shape ran, and the other variants never lost bad
            for s in SHAPES:
                k = tm.key_of(s)
                if tm.variant(s) != tm.variant(SHAPES[3]):
                    check(any(cfg_of(r, 5) == bad for r in rows.get(k, [])), '%s: %s not timed' % (k, bad))
            # an error that leaves the context working skips its configuration alone, with its own reason
            err = [r for r in skips.get(tm.key_of(SHAPES[0]), []) if cfg_of(r, 4) == CONFIGS[2]]
            check(len(err) == 1 and 'launch refused' in err[0] and 'crash' not in err[0], 'a plain error: %s' % err)
            check(any('CUDA context broken' in line for line in log), 'the crash is logged: %s' % log)
            # a later run reads the crash pair back
            again, pair = tm.read_crashes(os.path.join(tmp, 'o.d')), (bad, tm.variant(SHAPES[3]))
            check(list(again) == [pair] and again[pair].startswith('crash: '), 'crashes.txt: %s' % again)


def death_without_report():
    bad = CONFIGS[7]
    key = tm.key_of(SHAPES[6])
    with tempfile.TemporaryDirectory() as tmp:
        sup, rows, skips, _ = collect(tmp, [0, 1], {(key, bad): 'die'})
        accounted(rows, skips)
        why = [r for r in skips.get(key, []) if cfg_of(r, 4) == bad]
        check(len(why) == 1 and 'crash: timing process died with status 11' in why[0],
              'a process that died: its noted configuration is skipped as a crash: %s' % why)
        check(len(rows.get(key, [])) == len(CONFIGS) - 1, 'the shape is timed again whole')


def shape_that_keeps_crashing():
    key = tm.key_of(SHAPES[2])
    with tempfile.TemporaryDirectory() as tmp:
        sup, rows, skips, _ = collect(tmp, [0], {(key, None): 'sticky'})
        accounted(rows, skips)
        check(key not in rows and len(skips.get(key, [])) == len(CONFIGS) and
              all(',crash: ' in r for r in skips[key]), 'a shape crashing outside any configuration is given up')
        check(list(sup.given_up) == [2] and sup.restarts == {0: 2}, 'given up after two crashes: %s %s'
              % (sup.given_up, sup.restarts))


def supervision():
    sup = tm.Supervision(SHAPES, CONFIGS, {}, [0, 1, 2], max_restarts=2, max_shape_crashes=2)
    requeue, new, again = sup.crashed(0, 1, 4, None, 'boom')
    check(requeue == 1 and new == ((CONFIGS[4], tm.variant(SHAPES[1])), 'crash: boom') and again,
          'a configuration crash: the shape again, the pair failed, a fresh process')
    check(sup.failed == {(CONFIGS[4], tm.variant(SHAPES[1])): 'crash: boom'}, 'failed %s' % sup.failed)
    sup.finished(1)
    requeue, new, again = sup.crashed(0, 1, 3, None, 'late')
    check(requeue is None and again, 'a shape already written is not queued again')
    requeue, new, again = sup.crashed(0, -1, 2, ('bf16', 'D', 'N', 'D'), 'while loading')
    check(requeue is None and new[0] == (CONFIGS[2], ('bf16', 'D', 'N', 'D')) and not again,
          'a crash while loading: the pair failed; the third crash of a GPU allowed 2 ends it')
    requeue, new, _ = sup.crashed(1, 2, -1, None, 'operands')
    check(requeue == 2 and new is None and 2 in sup.outstanding, 'a crash outside the configurations: retried')
    requeue, _, _ = sup.crashed(1, 2, -1, None, 'operands')
    check(requeue is None and sup.given_up == {2: 'crash: operands'} and sup.outstanding == {0},
          'the second: given up')


def dry_run_model():
    shapes = [(1738, 14336, 4096, 'bf16', 'mixtral'), (4, 768, 768, 'fp16', 'gpt2')]
    total, longest, load_s = tm.modelled_seconds(shapes, tm.config_space(150, 0, 227))
    check(0.4 < longest < 2.0 and longest < total, 'a large shape models under a second, as measured (2048 x '
          '14336 x 3584 bf16: 0.81 s on an H100, 150 configurations): %.2f' % longest)
    one, _, _ = tm.modelled_seconds(shapes[1:], tm.config_space(150, 0, 227))
    check(0.03 < one < 1.0, 'a small shape: %.2f s' % one)
    check(5.0 < load_s < 15.0, 'loading 600 (configuration, variant) pairs: %.1f s' % load_s)
    check(tm.variant((1, 4096, 750, 'bf16')) == ('bf16', '1', 'N', 'D') and
          tm.variant((304, 260, 784, 'fp16')) == ('fp16', 'D', 'D', 'N'), 'variants by the class of M, K and N')


if __name__ == '__main__':
    supervision()
    crash_of_a_configuration()
    death_without_report()
    shape_that_keeps_crashing()
    dry_run_model()
    for f in failures:
        print('FAIL: %s' % f)
    print('triton_matmul checks: %s' % ('%d failures' % len(failures) if failures else 'ok'))
    sys.exit(1 if failures else 0)
