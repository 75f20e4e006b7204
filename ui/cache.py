"""Caching: the engine's results computed once per distinct small arguments and shared,
within a bound on memory.

One 2,048-token trace holds about 51 MB of arrays (72 MB with a mask), so a cache bounded
by entries alone (128 of them: about 9 GB) would take the server down long before it is
full. `ResultCache` bounds the bytes it holds (the sum of the arrays of every kept result,
plus the text of its key) and forgets a result nobody asked for within its time to live,
so that a server's memory comes back once the class has gone. Small results (a 16-token
trace is a few kilobytes) live long in a generous cache; large ones in a small cache with
a short life, which costs little: the engine recomputes a 2,048-token trace in well under
a second.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import gc
import itertools
import os
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import streamlit as st

from attention_core import MAX_TEXT_CHARS, InputError, ToySettings, ToyTrace, build_toy_trace, record_memory

from .language import t
from .notices import notice_once

T = TypeVar("T")

MiB = 1024 * 1024
PYTHON_NUMBER_BYTES = 32
"""A Python int or float in a list: the object (24 bytes) and the list's pointer to it."""


_NUMBERS = (int, float)  # a bool is an int
_PLAIN_NUMBERS = frozenset({int, float, bool, type(None)})
_TEXT = (str, bytes, bytearray)
_CONTAINERS = (tuple, list, set, frozenset)
MAX_DEPTH = 12
"""Containers nested deeper than this are not looked into (no cached value is that deep)."""


def result_bytes(value: Any) -> int:
    """The memory a cached value keeps alive: its arrays' buffers (each counted once, views
    through their base), strings and bytes, and PYTHON_NUMBER_BYTES per plain number (a
    figure's numbers sent as JSON lists), found through dataclasses, tuples, lists, sets and
    dicts. Small Python objects around them are not counted (they are tiny beside the arrays).

    One loop over a stack, not a call per item: a figure's spec is walked each time one is
    kept, on the rerun after every change.
    """
    seen: set[int] = set()
    total = 0
    stack = [(value, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, _NUMBERS):
            total += PYTHON_NUMBER_BYTES
        elif isinstance(value, _TEXT):
            total += len(value)
        elif value is None or depth > MAX_DEPTH or id(value) in seen:
            continue
        elif isinstance(value, np.ndarray):
            owner = value
            while isinstance(owner.base, np.ndarray):
                owner = owner.base
            if id(owner) not in seen:
                seen.add(id(owner))
                total += int(owner.nbytes)
        elif isinstance(value, dict):
            seen.add(id(value))
            stack.extend((item, depth + 1) for pair in value.items() for item in pair)
        elif isinstance(value, _CONTAINERS):
            seen.add(id(value))
            kinds = set(map(type, value))
            if kinds <= _PLAIN_NUMBERS:  # a figure's row of numbers, None for a masked cell
                nones = value.count(None) if isinstance(value, (tuple, list)) else int(None in value)
                total += (len(value) - nones) * PYTHON_NUMBER_BYTES
            else:
                stack.extend((item, depth + 1) for item in value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            seen.add(id(value))
            stack.extend((getattr(value, field.name), depth + 1) for field in dataclasses.fields(value))
    return total


@dataclasses.dataclass
class _Entry:
    value: Any
    size: int
    last_used: float


class ResultCache:
    """A thread-safe least-recently-used cache bounded by entries, bytes and idle time.

    A value is dropped when it has not been asked for within `ttl` seconds, or to make room
    (the least recently used first) when the entries or bytes would exceed their bounds.
    A value larger than `max_bytes` is returned but not kept. `clock` is for tests.
    """

    def __init__(self, max_entries: int, max_bytes: int, ttl: float, clock: Callable[[], float] = time.monotonic):
        self.max_entries, self.max_bytes, self.ttl, self.clock = max_entries, max_bytes, ttl, clock
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        """The bytes held now (the sum of `result_bytes` of every kept value and its key)."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> tuple[bool, Any]:
        """(True, value) if `key` is held (and refreshes its time), else (False, None)."""
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            entry.last_used = self.clock()
            self._entries.move_to_end(key)
            return True, entry.value

    def put(self, key: Hashable, value: Any, size: int) -> bool:
        """Keep `value` (of `size` bytes) under `key`, dropping others to make room;
        False if it alone exceeds the byte bound (then it is not kept)."""
        if size > self.max_bytes:
            return False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old.size
            while self._entries and (len(self._entries) >= self.max_entries or self.bytes + size > self.max_bytes):
                _, dropped = self._entries.popitem(last=False)
                self.bytes -= dropped.size
            self._entries[key] = _Entry(value, size, self.clock())
            self.bytes += size
            return True

    def drop(self, unwanted: Callable[[Hashable], bool]) -> int:
        """Drop every value whose key is `unwanted`; returns how many."""
        with self._lock:
            keys = [key for key in self._entries if unwanted(key)]
            for key in keys:
                self.bytes -= self._entries.pop(key).size
            return len(keys)

    def expire(self) -> int:
        """Drop every value idle for longer than the time to live; returns how many."""
        with self._lock:
            return self._expire()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def _expire(self) -> int:
        now, dropped = self.clock(), 0
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if now - entry.last_used <= self.ttl:
                break  # ordered by last use: the rest are fresher
            del self._entries[key]
            self.bytes -= entry.size
            dropped += 1
        return dropped


SMALL_RESULT_BYTES = 4 * MiB
"""Results up to this size (a trace of up to about 400 tokens) go to the small-results cache."""
small_results = ResultCache(max_entries=256, max_bytes=64 * MiB, ttl=3600)
"""Many small results, kept for an hour of disuse: page switches and reruns are instant."""
large_results = ResultCache(max_entries=8, max_bytes=192 * MiB, ttl=60)
"""A few large results (two or three 2,048-token traces), forgotten after a minute of disuse."""
derived_results = ResultCache(max_entries=512, max_bytes=48 * MiB, ttl=600)
"""What is built from a cached result and sent again on later reruns, such as a figure's final
spec (`memo_on`): dropped with the result it was built from."""
SWEEP_SECONDS = 10
"""How often idle results are dropped even when nobody asks for anything."""

COMPUTING_AT_ONCE = 2
"""Results computed at the same time, whatever the number of sessions: each 2,048-token
trace needs its 72 MB while it is built, and two cores gain nothing from more at once.
(The engine's functions do not call `memo` themselves, so a slot is never awaited by its holder.)"""
_computing_slots = threading.BoundedSemaphore(COMPUTING_AT_ONCE)
_computing: dict[Hashable, threading.Lock] = {}
_computing_lock = threading.Lock()
_sweeper: threading.Thread | None = None


def memo(function: Callable[..., T], *args: Hashable) -> T:
    """function(*args), computed once per distinct small, hashable arguments and shared
    between sessions, within the caches' bounds.

    For the engine's pure functions only (their results are immutable records, shared
    without copying). Sessions asking for the same result at once compute it once (a class
    opening the teacher's link together). Exceptions are not cached.
    """
    _start_sweeper()
    _note_page(value := _memo(function, args))
    return value


def _memo(function: Callable[..., T], args: tuple[Hashable, ...]) -> T:
    key = (f"{function.__module__}.{function.__qualname__}", args)
    for cache in (small_results, large_results):
        found, value = cache.get(key)
        if found:
            return value
    with _computing_lock:
        lock = _computing.setdefault(key, threading.Lock())
    with lock:
        try:
            for cache in (small_results, large_results):  # computed by another session meanwhile?
                found, value = cache.get(key)
                if found:
                    return value
            with _computing_slots:
                value = function(*args)
            _name_result(value)  # before another session can find it
            size = result_bytes(value) + result_bytes(args)
            (small_results if size <= SMALL_RESULT_BYTES else large_results).put(key, value, size)
            return value
        finally:
            with _computing_lock:
                _computing.pop(key, None)


_result_names: dict[int, int] = {}
"""The number of each result `memo` computed, by the result's id, while the result lives
(`memo_on`'s key for it: a number is never reused, an id may be once its object is gone)."""
_next_name = itertools.count()


def _name_result(value: Any) -> None:
    """Give a result `memo` computed a number of its own; when the result is freed, its number
    and what `memo_on` built from it are dropped."""
    name = next(_next_name)  # one call of a C iterator: atomic under the interpreter lock
    try:
        forget = weakref.finalize(value, _forget_result, id(value), name)
    except TypeError:  # a value without weak references (a tuple): nothing is built on it
        return
    forget.atexit = False  # nothing to drop when the server stops
    _result_names[id(value)] = name


def _forget_result(identity: int, name: int) -> None:
    _result_names.pop(identity, None)
    derived_results.drop(lambda key: key[1] == name)


def memo_on(result: Any, function: Callable[..., T], *args: Hashable) -> T:
    """function(result, *args), computed once per (`result`, args) while `result` lives, for a
    `result` that `memo` computed (a trace): a figure built from it is sent again on a later
    rerun without being built again. Shared between sessions, like `result`; the caller must not
    change the value. For any other `result` (made anew on each run) it is simply computed.
    """
    name = _result_names.get(id(result))
    if name is None:
        return function(result, *args)
    key = (f"{function.__module__}.{function.__qualname__}", name, args)
    found, value = derived_results.get(key)
    if not found:
        value = function(result, *args)
        derived_results.put(key, value, result_bytes(value) + result_bytes(args))
    return value


# --- what a session keeps after its run ---------------------------------------------------
#
# A page's top-level names live in the page's module dictionary, and every function the page
# defines refers to that dictionary. Streamlit keeps a session's widget callbacks (a page's
# `on_click=_move`) as long as the session, and a closed tab's session for at least
# `server.disconnectedSessionTTL` (it is only dropped when the server next touches its
# sessions): so `trace = trace_or_stop(settings)` at a page's top level would keep a 72 MB
# trace per session, whatever the cache's bounds. After each run, `release_page_results`
# (called by app.py) turns such names into weak references: a callback can still read
# them while the cache holds them, and the session itself keeps only its small settings.

PAGES_FOLDER = Path(__file__).resolve().parents[1] / "pages"
_run = threading.local()


def _note_page(result: Any) -> None:
    """Remember that the page running in this thread (the nearest caller in pages/) was
    handed `result`; outside a page (tests, scripts) nothing is remembered."""
    frame = sys._getframe(2)
    while frame is not None and not str(frame.f_globals.get("__file__", "")).startswith(str(PAGES_FOLDER)):
        frame = frame.f_back
    if frame is None:
        return
    if getattr(_run, "page_globals", None) is not frame.f_globals:
        _run.results, _run.page_globals = {}, frame.f_globals
    _run.results[id(result)] = result


def release_page_results() -> int:
    """After a page's run: its top-level names holding a cached result now hold a weak
    reference instead (see above); returns how many. Call once at the end of every run."""
    results, page_globals = getattr(_run, "results", {}), getattr(_run, "page_globals", None)
    _run.results, _run.page_globals = {}, None
    released = 0
    for name, value in list((page_globals or {}).items()):
        if id(value) in results and value is results[id(value)]:
            try:
                page_globals[name] = weakref.proxy(value)
            except TypeError:  # a value without weak references (a tuple): dropped instead
                del page_globals[name]
            released += 1
    return released


def sweep() -> int:
    """Drop the results idle beyond their time to live and give freed memory back to the
    system; returns how many were dropped."""
    dropped = small_results.expire() + large_results.expire() + derived_results.expire()
    if dropped:
        _release_free_memory()
    return dropped


def _release_free_memory() -> None:
    """Give freed memory back to the system: the engine's kept record mappings (it keeps those
    of dropped records for its next call, up to `record_memory.KEPT_BYTES`), and the heap pages
    glibc holds (many smaller arrays; a no-op elsewhere)."""
    record_memory.release_kept_memory()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


MALLOC_ARENAS = 2
"""Heaps glibc keeps for the server's threads. By default each new thread may get its own (up
to 8 per core), and Streamlit runs every session's script in a thread of its own: freed
blocks then stay scattered over many heaps, and a server that served 20 long links held
1.13–1.44 times its warm memory three minutes after the sessions closed (`benchmarks/memory.py`;
with two heaps: 1.18 times capped here, 1.05 times capped from the start by MALLOC_ARENA_MAX=2).
The interpreter lock lets one thread allocate at a time anyway."""
_M_ARENA_MAX = -8  # glibc's malloc.h


def _limit_malloc_arenas() -> None:
    """Cap glibc's heaps at MALLOC_ARENAS, unless the environment sets MALLOC_ARENA_MAX. Does
    nothing elsewhere. Threads started later share the heaps that exist."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


_limit_malloc_arenas()  # once, when the first run imports this module

TRIM_EVERY_SWEEPS = 6
"""Besides after every drop, free heap pages are given back once a minute: closed sessions
and finished reruns free many medium-sized blocks (figure JSON, protobuf messages) that
glibc would otherwise keep for the process."""


def _sweep_forever() -> None:
    for count in itertools.count(1):
        time.sleep(SWEEP_SECONDS)
        if not sweep() and count % TRIM_EVERY_SWEEPS == 0:
            _release_free_memory()


def _start_sweeper() -> None:
    global _sweeper
    if _sweeper is None:
        with _computing_lock:
            if _sweeper is None:
                _sweeper = threading.Thread(target=_sweep_forever, name="result-cache-sweeper", daemon=True)
                _sweeper.start()


# --- the garbage collector after each run ------------------------------------------------
#
# Streamlit runs a full garbage collection after every script run (`runner.postScriptGC`),
# so that figures and other objects in reference cycles are freed at once. A full
# collection visits every object the process tracks: after the imports (Streamlit, Plotly
# and its validators, pandas) that is some 130,000 objects and about 90 ms on this machine,
# paid by every rerun of every session while it holds the interpreter lock.
# `freeze_long_lived_objects` moves what the first run left alive into the collector's
# permanent generation, so that later collections visit only what was made since.

def freeze_long_lived_objects() -> None:
    """Once per process, after its first run: collect, then exempt every object still alive
    (modules, Plotly's validators, caches) from later collections. Reference counting still
    frees them if they are dropped; only a cycle among them would be kept. (Two first runs
    at once may both freeze: the second finds little to add.)

    Whether it is done is kept in a flag: gc.get_freeze_count() counts the frozen objects one
    by one, about 15 ms for the 110,000 of a warm server, on every rerun."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


_frozen = False
"""Whether this process has frozen its long-lived objects (`freeze_long_lived_objects`)."""


def trace_or_stop(settings: ToySettings) -> ToyTrace:
    """The cached trace for `settings`; on input the user must fix, explain and stop the page."""
    ignored = max(len(settings.text), len(settings.query_text)) - MAX_TEXT_CHARS
    if ignored > 0:  # said first: it may be why the text below is not what the user expects
        notice_once(t("notice.characters", limit=MAX_TEXT_CHARS, ignored=ignored))
    try:
        with st.spinner(t("working")):
            trace = memo(build_toy_trace, settings)
    except InputError as problem:
        st.info(t(f"error.{problem.code}", **problem.details))
        st.stop()
    if trace.dropped_tokens:
        notice_once(t("notice.truncated", limit=settings.max_tokens, dropped=trace.dropped_tokens))
    return trace



# ---------------------------------------------------------------------------- the decoder page

DECODER_RUNS = 3
"""Decoder runs kept (a run of 256 tokens holds about 110 MB of records; 64 tokens, 14 MB)."""


@st.cache_resource(max_entries=1, show_spinner=False)
def decoder_checkpoint(path: str):
    """SmolLM2-135M read, SHA-256 checked and dequantized once per server process (about
    540 MB of read-only float32 arrays), shared by every session."""
    from attention_core.decoder import load_decoder

    return load_decoder(path)


@st.cache_resource(max_entries=DECODER_RUNS, ttl=3600, show_spinner=False)
def decoder_run(path: str, text: str, max_tokens: int):
    """The decoder's forward pass on `text`, every layer and head recorded, shared by sessions."""
    from attention_core.decoder import encode_prompt, run_decoder

    checkpoint = decoder_checkpoint(path)
    return run_decoder(checkpoint, encode_prompt(checkpoint, text, max_tokens))


@st.cache_resource(max_entries=32, ttl=3600, show_spinner=False)
def decoder_greedy(path: str, text: str, steps: int, max_tokens: int):
    """`steps` greedy next tokens after `text` (small: token ids and probabilities only)."""
    from attention_core.decoder import greedy_continuation

    return greedy_continuation(decoder_checkpoint(path), text, steps, max_tokens)


@st.cache_resource(max_entries=1, show_spinner=False)
def decoder_head_scores(path: str):
    """The head finder's scores on the repeated random sequence, and that sequence's run's
    encoding and weights of every head (computed once per process)."""
    from attention_core.decoder import encode_ids, head_scores, repeated_random_ids, run_decoder
    from attention_core.decoder.finder import DEFAULT_PERIOD

    checkpoint = decoder_checkpoint(path)
    ids = repeated_random_ids(checkpoint.config.vocab_size, DEFAULT_PERIOD)
    run = run_decoder(checkpoint, encode_ids(checkpoint, ids))
    return head_scores(run.weights, DEFAULT_PERIOD), run
