"""Being a process on an event loop: run until stopped, background tasks, shutdown.

The daemon (``daemon.app.Daemon``, one board or many) starts its parts, runs until
``stop()`` or a signal, and then ends every task it spawned before closing its
outputs. The choices, written here once:

- a failed link task is started again after a pause (``_spawn_restarting``): one
  board's bug must not stop the other boards, nor, with one board, a game that
  systemd would otherwise restart from its journal;
- any other task that fails is logged; it stops the process (exit code 1, so that
  systemd restarts it) only where ``stop_on_failure`` says so;
- waits at shutdown can be bounded (``bound``: a stuck board must not hang the exit
  of the others).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from daemon.lazy import logger


async def quietly(part: Any, step: str, bound: float | None = None) -> None:
    """``await part.step()``, one step of a shutdown (drain the speech, stop the page):
    its failure, or its taking longer than ``bound`` seconds (None: no limit), must not
    keep the next part from closing."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(getattr(part, step)(), bound)


class Lifecycle:
    """``await run()``: ``start()``, wait for ``stop()``, then ``close()``; the tasks
    made with ``_spawn`` are ended by ``_end_tasks`` (from ``close``)."""

    #: A spawned task that fails stops the process (exit code 1).
    stop_on_failure = True

    def __init__(self) -> None:
        self._stopped = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self.exit_code = 0

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def run(self) -> int:
        await self.start()
        try:
            await self.wait_stopped()
        finally:
            await self.close()
        return self.exit_code

    def stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        """Until ``stop()`` (a signal, a failed task, the caller)."""
        await self._stopped.wait()

    # -- tasks ------------------------------------------------------------------------------

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        task.add_done_callback(self._task_done)
        self._tasks.append(task)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            logger().error("%s stopped: %r", task.get_name(), error, exc_info=error)
            if self.stop_on_failure:
                self.exit_code = 1
                self.stop()  # systemd restarts us (Restart=on-failure); the journal resumes

    def _spawn_restarting(
        self,
        run: Callable[[], Awaitable[Any]],
        name: str,
        on_failure: Callable[[Exception], None],
        pause: float,
    ) -> asyncio.Task[Any]:
        """A task that is started again ``pause`` seconds after it fails, until
        ``stop()``; ``on_failure`` is told each failure (to show it where it matters)."""

        async def restarting() -> None:
            while not self._stopped.is_set():
                try:
                    await run()
                    return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    logger().exception("%s failed; starting it again in %.0f s", name, pause)
                    on_failure(exc)
                    await asyncio.sleep(pause)

        task = asyncio.get_running_loop().create_task(restarting(), name=name)
        self._tasks.append(task)
        return task

    async def _end_tasks(self, bound: float | None = None) -> None:
        """Cancel every spawned task and wait for each to end (at most ``bound``
        seconds each)."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, bound)

    # -- signals ----------------------------------------------------------------------------

    def _handle_signals(self) -> None:
        """SIGTERM (systemd) and SIGINT (Ctrl-C) stop the process cleanly."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)

    def _release_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
