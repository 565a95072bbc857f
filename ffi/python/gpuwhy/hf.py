"""gpuwhy for the Hugging Face ``transformers`` Trainer (an optional import)::

    from gpuwhy.hf import GpuwhyCallback
    trainer = Trainer(..., callbacks=[GpuwhyCallback(output="run.json")])
    trainer.train()          # the report is written when training ends

Each optimizer step is a gpuwhy step: ``data`` from the previous step's end (the Trainer
logs, evaluates, saves and fetches the batch there), ``forward`` from ``on_step_begin``
(forward and backward: the Trainer has no hook between them), ``optimizer`` from
``on_pre_optimizer_step`` where the installed transformers has it. Evaluations and saves are
events. The train DataLoader's settings go into the report.
"""

from typing import Any

try:
    from transformers import TrainerCallback
except ImportError as e:  # pragma: no cover - only where transformers is missing
    raise ImportError("gpuwhy.hf needs transformers (pip install transformers)") from e

from gpuwhy._loop import LoopMarks

__all__ = ["GpuwhyCallback"]


class GpuwhyCallback(TrainerCallback, LoopMarks):  # type: ignore[misc]
    """Marks the Trainer's steps and phases in a gpuwhy session (its own, started when
    training begins and closed, report written to ``output``, when it ends; or ``session``).
    Other keyword arguments go to the session."""

    def __init__(self, session: Any = None, output: Any = "gpuwhy-run.json",
                 **session_args: Any) -> None:
        LoopMarks.__init__(self, session, output, **session_args)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._begin_training(kw.get("train_dataloader"))

    def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._phase("forward")

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._phase("optimizer")

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._end_step()

    def on_evaluate(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._event("eval")

    def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._event("checkpoint")

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self._end_training()
