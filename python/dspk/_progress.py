"""Progress bars for dspk's passes: tqdm when it is installed and stderr is a terminal."""

from __future__ import annotations

import sys
import threading
from typing import Optional


class _TqdmProgress:
    """A callable receiving dspk progress events that draws one tqdm bar (bytes, or whatever
    unit the events count in)."""

    def __init__(self, what: str, tqdm_class) -> None:
        self._what = what
        self._tqdm = tqdm_class
        self._bar = None
        self._lock = threading.Lock()

    def __call__(self, event) -> None:
        with self._lock:
            if self._bar is None:
                scale = event.unit == "bytes"
                self._bar = self._tqdm(
                    total=event.total or None,
                    desc=self._what,
                    unit="B" if scale else event.unit,
                    unit_scale=scale,
                    leave=False,
                )
            self._bar.n = event.done
            self._bar.refresh()

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()


def default_progress(what: str, force: bool = False) -> Optional[_TqdmProgress]:
    """A tqdm progress callable when tqdm is installed and stderr is a terminal (or ``force``),
    else ``None``."""
    if not force and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _TqdmProgress(what, tqdm)
