"""References: `cfg.ref.x`, lazy operators, ref_fn, ref_copy, placeholders."""

import operator

import konfig
import pytest

with konfig.imports():
    import fake_lib as fl


def test_ref_follows_a_later_change_of_its_target():
    cfg = konfig.ConfigDict(steps=10)
    cfg.trainer = fl.Trainer(steps=cfg.ref.steps)
    cfg.steps = 20
    assert konfig.resolve(cfg).trainer.steps == 20


def test_ref_to_a_nested_field():
    cfg = konfig.ConfigDict(data={"sizes": [1, 2, 3]})
    cfg.second = cfg.ref.data.sizes[1]
    assert konfig.resolve(cfg).second == 2


BINARY = [
    (operator.add, 7, 2),
    (operator.sub, 7, 2),
    (operator.mul, 7, 2),
    (operator.truediv, 7, 2),
    (operator.floordiv, 7, 2),
    (operator.mod, 7, 2),
    (operator.pow, 7, 2),
    (operator.lt, 7, 2),
    (operator.le, 7, 2),
    (operator.gt, 7, 2),
    (operator.ge, 7, 2),
    (operator.eq, 7, 7),
    (operator.ne, 7, 7),
    (operator.and_, True, False),
    (operator.or_, True, False),
    (operator.xor, 6, 3),
]


@pytest.mark.parametrize("op, a, b", BINARY)
def test_binary_operator_is_evaluated_lazily(op, a, b):
    cfg = konfig.ConfigDict(a=0, b=b)
    cfg.left = op(cfg.ref.a, b)
    cfg.right = op(a, cfg.ref.b)
    cfg.a = a
    resolved = konfig.resolve(cfg)
    assert resolved.left == op(a, b)
    assert resolved.right == op(a, b)


@pytest.mark.parametrize("op", [operator.neg, operator.pos, operator.abs, operator.invert])
def test_unary_operator_is_evaluated_lazily(op):
    cfg = konfig.ConfigDict(x=0)
    cfg.y = op(cfg.ref.x)
    cfg.x = -5
    assert konfig.resolve(cfg).y == op(-5)


def test_ref_attribute_of_a_built_object():
    cfg = konfig.ConfigDict()
    cfg.model = fl.Model(encoder=None, num_layers=3)
    cfg.depth = cfg.ref.model.depth
    assert konfig.resolve(cfg).depth == 30


def test_ref_to_a_node_gives_the_same_built_object():
    cfg = konfig.ConfigDict()
    cfg.model = fl.Model(encoder=None)
    cfg.trainer = fl.Trainer(model=cfg.ref.model)
    resolved = konfig.resolve(cfg)
    assert resolved.trainer.model is resolved.model


def test_ref_item_and_method_call_are_lazy():
    cfg = konfig.ConfigDict(name="abc")
    cfg.upper = cfg.ref.name.upper()
    cfg.first = cfg.ref.name[0]
    cfg.name = "xyz"
    resolved = konfig.resolve(cfg)
    assert (resolved.upper, resolved.first) == ("XYZ", "x")


def test_ref_fn_inline_calls_the_function_at_resolve():
    cfg = konfig.ConfigDict(parts=["a", "b"])
    cfg.joined = konfig.ref_fn("/".join, cfg.ref.parts)
    cfg.parts = ["c", "d"]
    assert konfig.resolve(cfg).joined == "c/d"


def test_ref_fn_as_decorator_with_keyword_refs():
    @konfig.ref_fn
    def scale(x, factor):
        return x * factor

    cfg = konfig.ConfigDict(x=2, f=3)
    cfg.y = scale(cfg.ref.x, factor=cfg.ref.f)
    assert konfig.resolve(cfg).y == 6


def test_bool_of_a_ref_names_the_path_and_suggests_alternatives():
    cfg = konfig.ConfigDict(model={"width": 3})
    with pytest.raises(konfig.RefControlFlowError, match=r"cfg\.ref\.model\.width.*`&` / `\|`.*ref_fn"):
        if cfg.ref.model.width:
            pass


def test_comparison_of_refs_is_lazy_and_not_a_bool():
    cfg = konfig.ConfigDict(x=1)
    with pytest.raises(konfig.RefControlFlowError, match=r"cfg\.ref\.x > 0"):
        bool(cfg.ref.x > 0)


def test_ref_is_not_iterable():
    cfg = konfig.ConfigDict(x=[1])
    with pytest.raises(TypeError, match="not iterable"):
        list(cfg.ref.x)


def test_ref_repr_shows_the_expression():
    cfg = konfig.ConfigDict(x=1, y=2)
    assert repr((cfg.ref.x + 1) * cfg.ref.y) == "(cfg.ref.x + 1) * cfg.ref.y"


def test_ref_copy_follows_the_original():
    train = konfig.ConfigDict(src={"split": "train"}, batch_size=32)
    test = konfig.ref_copy(train)
    train.batch_size = 128
    assert konfig.resolve(test).batch_size == 128


def test_ref_copy_changes_do_not_reach_the_original():
    train = konfig.ConfigDict(src={"split": "train"}, shuffle=True)
    test = konfig.ref_copy(train)
    test.src.split = "test"
    test.shuffle = False
    assert konfig.resolve(train) == {
        "src": {"split": "train"},
        "shuffle": True,
    }


def test_ref_copy_keeps_node_targets():
    train = konfig.ConfigDict(model=fl.Dense(features=4))
    test = konfig.ref_copy(train)
    train.model.features = 9
    assert konfig.resolve(test).model.features == 9


def test_placeholder_resolves_to_its_default_until_set():
    cfg = konfig.ConfigDict(workdir=konfig.placeholder(str))
    cfg.trainer = fl.Trainer(workdir=cfg.ref.workdir)
    assert konfig.resolve(cfg).trainer.workdir is None
    cfg.workdir = "/tmp/run"
    assert konfig.resolve(cfg).trainer.workdir == "/tmp/run"


def test_required_values_unset_are_all_named():
    cfg = konfig.ConfigDict(workdir=konfig.required(str))
    cfg.model = fl.Dense(features=konfig.required(int))
    with pytest.raises(konfig.MissingValueError, match=r"cfg\.workdir \(str\), cfg\.model\.features \(int\)"):
        konfig.resolve(cfg)


def test_required_value_once_set_resolves():
    cfg = konfig.ConfigDict(n=konfig.required(int))
    cfg.n = 3
    assert konfig.resolve(cfg).n == 3


def test_ref_to_a_positional_argument_by_parameter_name():
    cfg = konfig.ConfigDict()
    cfg.layer = fl.Dense(4)
    cfg.double = cfg.ref.layer.features * 2
    cfg.layer.features = 5
    assert konfig.resolve(cfg).double == 10


def test_ref_copy_follows_a_replaced_sub_config():
    train = konfig.ConfigDict(src={"name": "mnist", "split": "train"})
    test = konfig.ref_copy(train)
    test.src.split = "test"
    train.src = {"name": "imagenet", "split": "train"}
    assert konfig.resolve(test).src == {"name": "imagenet", "split": "test"}


def test_required_value_reached_only_through_a_ref_is_named():
    cfg = konfig.ConfigDict(num_classes=konfig.required(int), unused=konfig.required(str))
    cfg.head = fl.Dense(features=cfg.ref.num_classes + 1)
    with pytest.raises(konfig.MissingValueError, match=r"not set: cfg\.num_classes \(int\)\. "):
        konfig.resolve(cfg.head)


def test_formatting_a_ref_into_a_string_is_refused_instead_of_freezing_its_text():
    cfg = konfig.ConfigDict(steps=10)
    with pytest.raises(TypeError, match=r"`cfg\.ref\.steps` has no value until `konfig\.resolve`.*ref_fn"):
        cfg.name = f"run_{cfg.ref.steps}"


def test_a_lazily_formatted_string_follows_the_ref():
    cfg = konfig.ConfigDict(steps=10)
    cfg.name = konfig.ref_fn(lambda steps: f"run_{steps}", cfg.ref.steps)
    cfg.steps = 20
    assert konfig.resolve(cfg).name == "run_20"
