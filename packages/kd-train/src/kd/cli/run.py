"""Kauldron's `run` commands (`kauldron.cli.run`): a train step's shapes, without computing anything.

    kd.cli.run.EvalShape(cfg=cfg)()     # the train state's and the step's context's shapes and dtypes
"""

from __future__ import annotations

import dataclasses

from . import cmd_utils as cu


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvalShape(cu.SubCommand):
    """Runs the state's init and a train step through `jax.eval_shape` and prints what they hold."""

    def __call__(self) -> None:
        self.print_config_origin()
        trainer = self.trainer
        with cu.timed("jax.eval_shape(trainer.init_state)"):
            state_spec = trainer.state_specs
        with cu.timed("jax.eval_shape(trainer.trainstep.step)"):
            context_spec = trainer.context_specs
        print("state_specs: ", end="")
        cu.print_spec(state_spec)
        print("context_specs: ", end="")
        cu.print_spec(context_spec)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Run(cu.CommandGroup):
    """`run eval_shape`."""

    sub_command: EvalShape
