"""kd.evals: evaluators run by the Trainer on a schedule (Kauldron's names).

cfg.evals = {"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(100), num_batches=None)}
"""

from ._evaluator import Evaluator as Evaluator
from ._run_strategies import EveryNSteps as EveryNSteps
from ._run_strategies import Final as Final
from ._run_strategies import Once as Once
from ._run_strategies import RunStrategy as RunStrategy

__all__ = ["Evaluator", "EveryNSteps", "Final", "Once", "RunStrategy"]
