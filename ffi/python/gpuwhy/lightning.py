"""gpuwhy for PyTorch Lightning (an optional import: ``lightning`` or ``pytorch_lightning``)::

    from gpuwhy.lightning import GpuwhyCallback
    trainer = L.Trainer(..., callbacks=[GpuwhyCallback(output="run.json")])
    trainer.fit(model, loader)      # the report is written when fitting ends

Each training batch is a gpuwhy step: ``data`` from the previous batch's end (Lightning
fetches the next batch there), ``forward`` from ``on_train_batch_start``, ``backward`` from
``on_before_backward``, ``optimizer`` from ``on_before_optimizer_step``. Validation runs and
checkpoints are events; the train DataLoader's settings go into the report.
"""

from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError:
    try:
        from pytorch_lightning import Callback
    except ImportError as e:  # pragma: no cover - only where Lightning is missing
        raise ImportError("gpuwhy.lightning needs PyTorch Lightning (pip install lightning)") from e

from gpuwhy._loop import LoopMarks

__all__ = ["GpuwhyCallback"]


def _train_loader(trainer: Any) -> Any:
    loader = getattr(trainer, "train_dataloader", None)
    return loader() if callable(loader) else loader


class GpuwhyCallback(Callback, LoopMarks):  # type: ignore[misc]
    """Marks Lightning's training steps and phases in a gpuwhy session (its own, started
    when fitting starts and closed, report written to ``output``, when it ends; or
    ``session``). Other keyword arguments go to the session."""

    def __init__(self, session: Any = None, output: Any = "gpuwhy-run.json",
                 **session_args: Any) -> None:
        LoopMarks.__init__(self, session, output, **session_args)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self._begin_training(_train_loader(trainer))

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        self._phase("forward")

    def on_before_backward(self, trainer: Any, pl_module: Any, loss: Any) -> None:
        self._phase("backward")

    def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
        self._phase("optimizer")

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        self._end_step()

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        self._event("eval")

    def on_save_checkpoint(self, trainer: Any, pl_module: Any, checkpoint: Any) -> None:
        self._event("checkpoint")

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self._end_training()
