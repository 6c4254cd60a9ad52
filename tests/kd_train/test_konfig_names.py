"""`konfig.export` names kd's classes (and optax's functions) by the namespace users import, not the private
module they live in: an exported config still resolves after kd moves a class between its private modules."""

from __future__ import annotations

import json

import konfig
import optax
from kd import ckpts, runtime, train


def test_kd_classes_export_their_public_namespace_not_the_module_they_live_in():
    assert runtime.RngStreams.__module__ == "kd.runtime._rngs"
    assert konfig.export(runtime.RngStreams) == {"__const__": "kd.runtime:RngStreams"}
    assert konfig.export(train.Trainer) == {"__const__": "kd.train:Trainer"}
    assert konfig.export(ckpts.Checkpointer) == {"__const__": "kd.ckpts:Checkpointer"}
    assert konfig.export(optax.adam) == {"__const__": "optax:adam"}  # optax._src.alias


def test_an_exported_kd_object_resolves_back_through_its_public_name():
    streams = runtime.RngStreams(seed=3)  # defined in kd.runtime._rngs (kd.train._rngs before 0.1.0's move)
    exported = konfig.export(streams)

    assert exported["__qualname__"] == "kd.runtime:RngStreams"
    assert konfig.resolve(konfig.from_json(json.dumps(exported))) == streams  # as a file holds it
