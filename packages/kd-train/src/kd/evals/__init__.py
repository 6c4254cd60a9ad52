"""kd.evals: evaluators run by the Trainer on a schedule (Kauldron's names), or on a run's checkpoints.

cfg.evals = {"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(100), num_batches=None)}
values = trainer.evals["eval"].evaluate(state=state, step=100)  # {"losses/<name>": ..., "metrics/<name>": ...}
class MyEval(kd.evals.EvaluatorBase): ...  # Kauldron's base: implement evaluate(state, step), write via self.writer
kd.evals.evaluate_checkpoints(trainer)  # each checkpoint of trainer.workdir, as `kd-train eval` does
"""

from ._base import EvaluatorBase as EvaluatorBase
from ._evaluator import Evaluator as Evaluator
from ._run_strategies import EveryNSteps as EveryNSteps
from ._run_strategies import Final as Final
from ._run_strategies import Once as Once
from ._run_strategies import RunStrategy as RunStrategy
from ._run_strategies import Standalone as Standalone
from ._run_strategies import StandaloneEveryCheckpoint as StandaloneEveryCheckpoint
from ._run_strategies import StandaloneLastCheckpoint as StandaloneLastCheckpoint
from ._standalone import EVAL_METRICS_FILE as EVAL_METRICS_FILE
from ._standalone import evaluate_checkpoints as evaluate_checkpoints

__all__ = [
    "EVAL_METRICS_FILE",
    "Evaluator",
    "EvaluatorBase",
    "EveryNSteps",
    "Final",
    "Once",
    "RunStrategy",
    "Standalone",
    "StandaloneEveryCheckpoint",
    "StandaloneLastCheckpoint",
    "evaluate_checkpoints",
]
