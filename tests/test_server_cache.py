"""The shared result cache gives memory back: bounded by bytes, and by idle time.

Which results are still held is read independently of the cache's own bookkeeping: every
result's array is watched with a weak reference, so an array alive is an array some cache
still keeps (nothing else refers to it).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass

import numpy as np
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace, record_memory
from ui import cache


@dataclass(frozen=True)
class Result:
    values: np.ndarray


ALLOCATED: list[weakref.ref] = []


def allocate(megabytes: int, tag: int) -> Result:
    """A fresh result holding `megabytes` MiB of float64 (its weak reference is recorded)."""
    values = np.full(megabytes * cache.MiB // 8, float(tag))
    ALLOCATED.append(weakref.ref(values))
    return Result(values)


def alive_megabytes() -> float:
    gc.collect()
    return sum(ref().nbytes for ref in ALLOCATED if ref() is not None) / cache.MiB


@pytest.fixture(autouse=True)
def empty_caches():
    cache.small_results.clear()
    cache.large_results.clear()
    cache.derived_results.clear()
    ALLOCATED.clear()
    yield
    cache.small_results.clear()
    cache.large_results.clear()
    cache.derived_results.clear()


def test_many_large_results_stay_within_the_byte_bound():
    bound = cache.large_results.max_bytes / cache.MiB
    for tag in range(40):  # 40 × 30 MB: 1.2 GB if every result were kept
        assert cache.memo(allocate, 30, tag).values[0] == tag
    assert 0 < alive_megabytes() <= bound
    assert cache.large_results.bytes <= cache.large_results.max_bytes


def test_small_results_stay_within_their_own_bound():
    for tag in range(100):  # 100 × 2 MB
        cache.memo(allocate, 2, tag)
    assert 0 < alive_megabytes() <= cache.small_results.max_bytes / cache.MiB


def test_a_result_is_computed_once_while_it_is_held():
    calls = []

    def counted(tag):
        calls.append(tag)
        return allocate(1, tag)

    first = cache.memo(counted, 7)
    assert cache.memo(counted, 7) is first
    assert calls == [7]


def test_idle_results_are_dropped_after_their_time_to_live(monkeypatch):
    now = [1000.0]
    for store in (cache.small_results, cache.large_results):
        monkeypatch.setattr(store, "clock", lambda: now[0])
    cache.memo(allocate, 1, 1)  # small
    cache.memo(allocate, 30, 2)  # large
    assert alive_megabytes() == 31
    now[0] += cache.large_results.ttl + 1
    cache.sweep()  # what the background sweeper does every SWEEP_SECONDS
    assert alive_megabytes() == 1, "the large result, idle beyond its time to live, is gone"
    now[0] += cache.small_results.ttl + 1
    cache.sweep()
    assert alive_megabytes() == 0


def test_a_dropped_trace_s_memory_goes_back_to_the_system_not_to_the_engine_s_keep(monkeypatch):
    """The engine keeps the mappings of dropped records for its next call; on a server, the
    sweeper gives them back to the system when it drops an idle result (and once a minute)."""
    now = [0.0]
    monkeypatch.setattr(cache.large_results, "clock", lambda: now[0])
    settings = ToySettings(text=" ".join(["word"] * 1024), dk=8, seed=0, mask=MaskSpec(causal=True))
    cache.memo(build_toy_trace, settings)  # (1024, 1024) float32 records: mappings of their own
    record_memory.release_kept_memory()
    now[0] += cache.large_results.ttl + 1
    cache.sweep()
    gc.collect()
    assert record_memory.kept_bytes() == 0


def test_a_result_in_use_is_kept_past_its_time_to_live(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(cache.large_results, "clock", lambda: now[0])
    cache.memo(allocate, 30, 3)
    for _ in range(3):
        now[0] += cache.large_results.ttl * 0.6
        cache.memo(allocate, 30, 3)  # asked again: its idle time starts over
        cache.sweep()
    assert alive_megabytes() == 30 and len(ALLOCATED) == 1


def test_a_background_sweeper_runs_without_any_request():
    cache.memo(allocate, 1, 4)
    assert any(thread.name == "result-cache-sweeper" and thread.daemon for thread in threading.enumerate())


def test_a_class_asking_at_once_computes_once():
    calls, started = [], threading.Barrier(8)

    def slow(tag):
        calls.append(tag)
        return allocate(30, tag)

    results = []

    def student():
        started.wait()
        results.append(cache.memo(slow, 5))

    threads = [threading.Thread(target=student) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [5] and all(result is results[0] for result in results)


def _independent_bytes(trace) -> int:
    """The distinct buffers of every array field of a toy trace, summed."""
    arrays = [trace.x_query, trace.x_key, trace.w_q, trace.w_k, trace.w_v]
    attention = trace.attention
    names = ("q", "k", "v", "raw_scores", "scaled_scores", "mask", "masked_scores", "weights", "output")
    arrays += [getattr(attention, name) for name in (*names, "fully_masked_rows")]
    owners = {}
    for array in arrays:
        if array is None:
            continue
        while isinstance(array.base, np.ndarray):
            array = array.base
        owners[id(array)] = array.nbytes
    return sum(owners.values())


def test_a_trace_is_measured_by_its_arrays():
    settings = ToySettings(text=" ".join(f"w{i}" for i in range(300)), mask=MaskSpec(causal=True))
    trace = build_toy_trace(settings)
    measured = cache.result_bytes(trace)
    strings = sum(map(len, trace.query_tokens)) + sum(map(len, trace.key_tokens))
    assert _independent_bytes(trace) <= measured <= _independent_bytes(trace) + strings + 10_000
    assert measured > 4 * 300 * 300 * 4  # at least the four 300 × 300 float32 score and weight matrices


def test_a_figure_spec_is_measured_by_its_numbers_strings_and_arrays():
    array = np.zeros(10)  # 80 bytes, counted once although a view of it is in the spec too
    spec = {
        "z": [[1.0, None, 2.0], [3, 4, 5]],  # five numbers; a masked cell (None) is not one
        "x": ["ab", "c"],
        "colorscale": [(0.0, "#fff"), (1.0, "#000")],
        "flag": True,
        "arr": array,
        "view": array[2:],
    }
    numbers = 5 + 2 + 1  # z, the colour scale's stops, the flag
    characters = len("ab" "c" "#fff" "#000") + len("z" "x" "colorscale" "flag" "arr" "view")
    assert cache.result_bytes(spec) == numbers * cache.PYTHON_NUMBER_BYTES + characters + 80


def test_at_most_two_results_are_computed_at_once():
    running, most, lock = [0], [0], threading.Lock()
    started = threading.Barrier(6)

    def tracked(tag):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            threading.Event().wait(0.2)  # long enough for the others to try
            return allocate(1, tag)
        finally:
            with lock:
                running[0] -= 1

    def student(tag):
        started.wait()
        cache.memo(tracked, tag)

    threads = [threading.Thread(target=student, args=(tag,)) for tag in range(6)]  # six different views
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= most[0] <= cache.COMPUTING_AT_ONCE


def test_after_the_first_run_collections_skip_what_it_left_alive_and_still_free_new_cycles():
    """Streamlit collects garbage after every run; the objects alive after the first run
    (modules, Plotly's validators) are frozen once, so that later collections skip them."""
    from streamlit.testing.v1 import AppTest

    AppTest.from_file(str(cache.PAGES_FOLDER.parent / "app.py"), default_timeout=60).run()
    assert gc.get_freeze_count() > 10_000, "the imported modules' objects are frozen"

    class Node:
        pass

    node = Node()
    node.itself = node  # a cycle: only the collector frees it
    watched = weakref.ref(node)
    del node
    gc.collect()
    assert watched() is None, "a cycle made after the freeze is still collected"


def test_a_warm_rerun_does_not_count_the_frozen_objects(monkeypatch):
    """gc.get_freeze_count() walks the permanent generation (110,000 objects, ~15 ms): the
    freeze is done once per process and remembered, not asked of the collector every run."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(cache.PAGES_FOLDER.parent / "app.py"), default_timeout=60)
    app.run()
    counted = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or 1)
    app.run()
    assert not app.exception
    assert counted == [], "a rerun counted the frozen objects"


HEAPS_AFTER_THREADS = """
import ctypes, re, sys, tempfile, threading
if sys.argv[1] == "import":
    import ui.cache
libc = ctypes.CDLL("libc.so.6")
barrier = threading.Barrier(16)
def allocate():
    blocks = [ctypes.create_string_buffer(200) for _ in range(2000)]  # small blocks: from a thread's heap
    barrier.wait()  # all 16 threads alive at once
threads = [threading.Thread(target=allocate) for _ in range(16)]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile(mode="r", suffix=".xml") as kept:
    report = libc.fopen(kept.name.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(report))
    libc.fclose(ctypes.c_void_p(report))
    print(len(re.findall(r'<heap nr="[0-9]+"', kept.read())))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heaps")
def test_the_servers_threads_share_two_heaps_so_freed_memory_is_not_scattered():
    """Streamlit runs each session's script in its own thread; glibc would give each its own
    heap (16 here, without the cap), where freed blocks linger."""
    def heaps(mode: str) -> int:
        env = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"}
        result = subprocess.run([sys.executable, "-c", HEAPS_AFTER_THREADS, mode], capture_output=True, text=True,
                                cwd=cache.PAGES_FOLDER.parent, env=env, check=True)
        return int(result.stdout.strip())

    assert heaps("import") <= cache.MALLOC_ARENAS < heaps("without"), "the cap applies once ui.cache is imported"


# --- what is built from a cached result (memo_on) -------------------------------------------

BUILDS: list[tuple] = []


def described(result: Result, label: str) -> dict:
    """A stand-in for a figure's spec: a new dict on every call, and the call recorded."""
    BUILDS.append((id(result), label))
    return {"label": label, "first": float(result.values[0]), "numbers": [0.5] * 100}


def test_what_is_built_from_a_cached_result_is_built_once_per_arguments():
    BUILDS.clear()
    result = cache.memo(allocate, 1, 7)
    first = cache.memo_on(result, described, "en")
    assert cache.memo_on(result, described, "en") is first  # kept: the same dict, not built again
    chinese = cache.memo_on(result, described, "zh")
    assert chinese == {**first, "label": "zh"} and chinese is not first
    assert [(id(result), "en"), (id(result), "zh")] == BUILDS
    other = cache.memo(allocate, 1, 8)  # another result, the same arguments: built from it
    assert cache.memo_on(other, described, "en")["first"] == 8.0


def test_what_is_built_from_a_result_made_on_each_run_is_not_kept():
    BUILDS.clear()
    fresh = allocate(1, 3)  # not from memo: a new object on every run (a typed matrix)
    cache.memo_on(fresh, described, "en")
    cache.memo_on(fresh, described, "en")
    assert len(BUILDS) == 2 and len(cache.derived_results) == 0
    pair = cache.memo(divmod, 7, 2)  # from memo, but a tuple has no weak references: not kept either
    assert cache.memo_on(pair, lambda numbers, label: (*numbers, label), "en") == (3, 1, "en")
    assert len(cache.derived_results) == 0


def test_what_is_built_goes_with_the_result_it_was_built_from():
    result = cache.memo(allocate, 1, 5)
    cache.memo_on(result, described, "en")
    cache.memo_on(result, described, "zh")
    kept = cache.memo(allocate, 1, 6)
    cache.memo_on(kept, described, "en")
    assert len(cache.derived_results) == 3
    assert cache.derived_results.bytes >= 3 * 100 * cache.PYTHON_NUMBER_BYTES  # the listed numbers count
    cache.small_results.drop(lambda key: key[1] == (1, 5))  # the cache lets the first result go
    del result
    gc.collect()
    assert len(cache.derived_results) == 1
    assert cache.derived_results.get(next(iter(cache.derived_results._entries)))[1]["first"] == 6.0
