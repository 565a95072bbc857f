"""What the framework callbacks (gpuwhy.hf, gpuwhy.lightning) share: a session they own or
are given, and the marks a training loop's hooks turn into steps and phases."""

from typing import Any, Optional


def _new_session(output: Optional[str], session_args: Any) -> Any:
    """A gpuwhy.torch.Session where torch is, else a plain gpuwhy.Session."""
    try:
        import gpuwhy.torch as torch_side
    except ImportError:
        import gpuwhy
        return gpuwhy.Session(output=output, **session_args)
    return torch_side.Session(output=output, **session_args)


class LoopMarks:
    """Steps and phases from a framework's hooks.

    A step begins with its ``data`` phase when the previous step ends (the framework then
    logs, evaluates, checkpoints and fetches the next batch, so all of that is in ``data``;
    evaluations and checkpoints are also marked as events), ``forward`` when the batch is
    in hand, ``backward`` and ``optimizer`` where the framework says so. The session is the
    one given, or one this object starts at the beginning of training and closes at its end
    (its report written to ``output``).
    """

    def __init__(self, session: Any = None, output: Optional[str] = "gpuwhy-run.json",
                 **session_args: Any) -> None:
        self.session = session
        self._own = session is None
        self._output, self._args = output, session_args
        self._in_step = False

    def _begin_training(self, loader: Any = None) -> None:
        if self.session is None:
            self.session = _new_session(self._output, self._args)
        if self.session._state == "new":
            self.session.start()
        # The framework calls its hooks on the training thread.
        self.session.set_main_thread()
        if loader is not None:
            from gpuwhy.torch import loader_settings
            settings = loader_settings(loader)
            if settings:
                self.session.set_data_loader(**settings)
        self._next_step()

    def _next_step(self) -> None:
        self.session.phase("data")
        self._in_step = True

    def _phase(self, name: str) -> None:
        if self.session is not None:
            self.session.phase(name)
            self._in_step = True

    def _end_step(self, more: bool = True) -> None:
        if self.session is None:
            return
        if self._in_step:
            self.session.step_end()
            self._in_step = False
        if more:
            self._next_step()

    def _drop_step(self) -> None:
        """Drops the step begun after the last one (training ended instead)."""
        if self._in_step:
            self.session.step_discard()
            self._in_step = False

    def _event(self, name: str) -> None:
        if self.session is not None:
            self.session.event(name)

    def _end_training(self) -> None:
        if self.session is None:
            return
        self._drop_step()
        if self._own:
            self.session.close()
