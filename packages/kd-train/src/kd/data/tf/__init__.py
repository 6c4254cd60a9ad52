"""kd.data.tf: Kauldron's tf.data pipelines are TensorFlow, which kd does not use; each name here says
which kd.data / kd.data.py one to use instead (grain pipelines, NumPy transforms, no TensorFlow).

    kd.data.tf.Tfds  # AttributeError: kd.data.tf.Tfds is not ported ...; use kd.data.py.Tfds
"""

_EQUIVALENTS = {
    "TFDataPipeline": "kd.data.py.PyGrainPipeline",
    "Tfds": "kd.data.py.Tfds",
    "TfdsLegacy": "kd.data.py.Tfds",
    "SampleFromDatasets": "kd.data.py.Mix",
    "ZipDatasets": None,
    "SeqIOMixture": None,
    "SeqIOTask": None,
    "ElementSpecDataset": None,
    "WithShuffleBuffer": None,
    "AddConstants": "kd.data.AddConstants",
    "Elements": "kd.data.Elements",
    "ElementWiseTransform": "kd.data.ElementWiseTransform",
    "TreeFlattenWithPath": "kd.data.TreeFlattenWithPath",
    "ElementWiseRandomTransform": "kd.data.py.ElementWiseRandomTransform",
    "RandomCrop": "kd.data.py.RandomCrop",
    "RandomFlipLeftRight": "kd.data.py.RandomFlipLeftRight",
    "InceptionCrop": None,
    "Cast": "kd.data.Cast",
    "Gather": "kd.data.Gather",
    "Rearrange": "kd.data.Rearrange",
    "ValueRange": "kd.data.ValueRange",
    "CenterCrop": "kd.data.CenterCrop",
    "Resize": "kd.data.Resize",
    "ResizeSmall": "kd.data.Resize (min_size=...)",
    "OneHot": None,
}


class NotPortedError(AttributeError):
    """A name of Kauldron's `kd.data.tf`, which kd does not port (it is TensorFlow)."""


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    use = _EQUIVALENTS.get(name)
    if use is not None:
        hint = f"use {use} (NumPy on the host, in grain pipelines)"
    elif name in _EQUIVALENTS:
        hint = (
            "it has no kd.data.py counterpart yet: write it as a kd.data.MapTransform or a kd.data.py source"
        )
    else:
        import difflib

        near = difflib.get_close_matches(name, list(_EQUIVALENTS), n=1)
        hint = f"Kauldron's kd.data.tf has no {name!r} either" + (
            f"; did you mean {near[0]!r}?" if near else ""
        )
    raise NotPortedError(
        f"kd.data.tf.{name} is not ported: kd.data.tf is Kauldron's tf.data (TensorFlow) pipeline, and kd "
        f"runs without TensorFlow; {hint}"
    )


def __dir__() -> list[str]:
    return sorted(_EQUIVALENTS)
