"""kd.optim's masks, partial_updates, decay_to_init, ema_params and UseEmaParams (Kauldron's names), checked
against plain optax / numpy references and through a real Trainer run."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import pytest
import train_fixtures as lib

_RNG = np.random.default_rng(0)


def _tree() -> dict:
    """A flax-like param tree: two dense layers (kernel, bias) and a LoRA adapter."""

    def f(*shape: int) -> np.ndarray:
        return _RNG.normal(size=shape).astype(np.float32)

    return {
        "Dense_0": {"kernel": f(3, 4), "bias": f(4)},
        "block": {"Dense_1": {"kernel": f(4, 2), "bias": f(2)}, "lora": {"a": f(4, 1), "b": f(1, 2)}},
        "kernel_scale": f(2),
    }


def _grads(tree: dict, step: int) -> dict:
    rng = np.random.default_rng(100 + step)
    return jax.tree.map(lambda x: rng.normal(size=x.shape).astype(np.float32), tree)


def _selected_paths(mask: dict) -> set[str]:
    flat = jax.tree_util.tree_flatten_with_path(mask)[0]
    return {
        ".".join(str(getattr(k, "key", getattr(k, "idx", None))) for k in path) for path, flag in flat if flag
    }


# ---------------------------------------------------------------------------------------------- select / exclude


def test_select_matches_whole_keys_anywhere_in_the_path():
    tree = {"lora": 0, "notlora": 0, "a": {"lora": {"x": 0}, "loraz": 0}, "lora2": [0, {"lora": 0}]}
    assert kd.optim.select("lora")(tree) == {
        "lora": True,
        "notlora": False,
        "a": {"lora": {"x": True}, "loraz": False},
        "lora2": [False, {"lora": True}],
    }


def test_select_gives_python_bools_with_the_tree_structure():
    mask = kd.optim.select("bias")(_tree())
    assert jax.tree.structure(mask) == jax.tree.structure(_tree())
    assert all(type(flag) is bool for flag in jax.tree.leaves(mask))


def test_dotted_names_match_in_order_and_the_dot_is_literal():
    tree = {"lora": {"more": 0, "x": 0}, "loraxmore": 0, "y": {"lora": {"more": {"z": 0}}}}
    assert _selected_paths(kd.optim.select("lora.more")(tree)) == {"lora.more", "y.lora.more.z"}


def test_regex_patterns_match_whole_keys():
    tree = {"lora00": 0, "lora1": 0, "lora1x": 0, "xx": {"lora": 0, "lora3": {"aa": 0}}}
    assert _selected_paths(kd.optim.select("lora[0-9]+")(tree)) == {"lora00", "lora1", "xx.lora3.aa"}


def test_double_star_glob_selects_exactly_the_kernels():
    assert _selected_paths(kd.optim.select("**.kernel")(_tree())) == {
        "Dense_0.kernel",
        "block.Dense_1.kernel",
    }


def test_single_star_glob_is_one_key_from_the_root():
    assert _selected_paths(kd.optim.select("*.bias")(_tree())) == {"Dense_0.bias"}
    assert _selected_paths(kd.optim.select("block.*.bias")(_tree())) == {"block.Dense_1.bias"}
    assert _selected_paths(kd.optim.select("block.**")(_tree())) == {
        "block.Dense_1.kernel",
        "block.Dense_1.bias",
        "block.lora.a",
        "block.lora.b",
    }


def test_several_patterns_select_the_union():
    mask = kd.optim.select(["lora", "**.bias"])(_tree())
    assert _selected_paths(mask) == {"block.lora.a", "block.lora.b", "Dense_0.bias", "block.Dense_1.bias"}


def test_exclude_is_the_complement_of_select():
    tree = _tree()
    for pattern in ("lora", "**.kernel", ["bias", "kernel_scale"]):
        selected = jax.tree.leaves(kd.optim.select(pattern)(tree))
        excluded = jax.tree.leaves(kd.optim.exclude(pattern)(tree))
        assert excluded == [not flag for flag in selected]
        assert any(selected) and any(excluded)


def test_select_works_on_real_linen_params_and_as_an_optax_mask():
    params = lib.Mlp().init(jax.random.key(0), jnp.zeros((1, 2)))["params"]
    assert _selected_paths(kd.optim.select("**.kernel")(params)) == {"hidden.kernel", "out.kernel"}
    # optax.masked: the kernels are scaled by 0, the biases pass unchanged.
    masked = optax.masked(optax.scale(0.0), kd.optim.select("**.kernel"))
    grads = jax.tree.map(jnp.ones_like, params)
    updates, _ = masked.update(grads, masked.init(params), params)
    assert float(jnp.abs(updates["hidden"]["kernel"]).sum()) == 0.0
    np.testing.assert_array_equal(updates["out"]["bias"], grads["out"]["bias"])


def test_bad_patterns_raise_naming_the_pattern():
    with pytest.raises(TypeError, match=r"pattern must be a string.*got 3"):
        kd.optim.select(["lora", 3])
    with pytest.raises(ValueError, match="empty pattern"):
        kd.optim.exclude("")
    with pytest.raises(ValueError, match=r"'lora\[0-9' is not a valid regular expression"):
        kd.optim.select("lora[0-9")


# ---------------------------------------------------------------------------------------------- partial_updates


def test_partial_updates_freezes_the_others_bit_for_bit_and_trains_the_selected_like_optax():
    params = _tree()
    optimizer = kd.optim.partial_updates(optax.adam(0.1), mask=kd.optim.select("lora"))
    reference = optax.adam(0.1)  # plain adam on the LoRA sub-tree alone
    ref_params = params["block"]["lora"]
    state, ref_state = optimizer.init(params), reference.init(ref_params)
    current = params
    for step in range(5):
        grads = _grads(params, step)
        updates, state = jax.jit(optimizer.update)(grads, state, current)
        current = optax.apply_updates(current, updates)
        ref_updates, ref_state = reference.update(grads["block"]["lora"], ref_state, ref_params)
        ref_params = optax.apply_updates(ref_params, ref_updates)
    for path in ("Dense_0", "kernel_scale"):
        for new, old in zip(jax.tree.leaves(current[path]), jax.tree.leaves(params[path])):
            assert np.asarray(new).tobytes() == old.tobytes()  # bit for bit
    for new, old in zip(
        jax.tree.leaves(current["block"]["Dense_1"]), jax.tree.leaves(params["block"]["Dense_1"])
    ):
        assert np.asarray(new).tobytes() == old.tobytes()
    for ours, ref, old in zip(
        jax.tree.leaves(current["block"]["lora"]),
        jax.tree.leaves(ref_params),
        jax.tree.leaves(params["block"]["lora"]),
    ):
        np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-7)
        assert not np.allclose(ours, old)  # they did train


def test_partial_updates_keeps_no_optimizer_state_for_frozen_params():
    params = _tree()
    state = kd.optim.partial_updates(optax.scale_by_adam(), mask=kd.optim.select("lora")).init(params)
    mu = state.inner_states["train"].inner_state.mu
    assert isinstance(mu["Dense_0"]["kernel"], optax.MaskedNode)
    assert mu["block"]["lora"]["a"].shape == (4, 1)


def test_partial_updates_takes_a_tree_of_bools_as_mask():
    params = {"w": np.ones(2, np.float32), "b": np.ones(2, np.float32)}
    optimizer = kd.optim.partial_updates(optax.sgd(1.0), mask={"w": True, "b": False})
    updates, _ = optimizer.update({"w": np.ones(2), "b": np.ones(2)}, optimizer.init(params), params)
    np.testing.assert_array_equal(updates["w"], -np.ones(2))
    np.testing.assert_array_equal(updates["b"], np.zeros(2))


def test_partial_updates_rejects_a_non_bool_mask_and_an_uncalled_optimizer():
    params = {"w": np.ones(2, np.float32)}
    with pytest.raises(TypeError, match="mask leaves must be bools"):
        kd.optim.partial_updates(optax.sgd(1.0), mask={"w": "train"}).init(params)
    with pytest.raises(TypeError, match="optimizer= must be an optax GradientTransformation"):
        kd.optim.partial_updates(optax.adam, mask={"w": True})


# ---------------------------------------------------------------------------------------------- decay_to_init


def test_decay_to_init_adds_the_scaled_distance_to_the_init():
    init = _tree()
    params = jax.tree.map(lambda x: x + 1.5, init)
    grads = _grads(init, 0)
    transform = kd.optim.decay_to_init(0.3)
    updates, _ = transform.update(grads, transform.init(init), params)
    for u, g, p, p0 in zip(*(jax.tree.leaves(t) for t in (updates, grads, params, init))):
        np.testing.assert_allclose(u, g + 0.3 * (p - p0), rtol=1e-6)


def test_decay_to_init_pulls_the_params_back_towards_the_init_geometrically():
    init = {"w": np.array([1.0, -2.0], np.float32)}
    optimizer = optax.chain(kd.optim.decay_to_init(0.5), optax.sgd(0.4))
    state = optimizer.init(init)
    params = {"w": np.array([3.0, 2.0], np.float32)}  # e.g. after some training away from the init
    zero = {"w": np.zeros(2, np.float32)}
    for step in range(1, 6):
        updates, state = optimizer.update(zero, state, params)
        params = optax.apply_updates(params, updates)
        # Each step keeps 1 - lr * wd = 0.8 of the distance to the init.
        np.testing.assert_allclose(params["w"] - init["w"], np.array([2.0, 4.0]) * 0.8**step, rtol=1e-5)


def test_decay_to_init_with_a_mask_decays_only_the_selected_leaves():
    init = _tree()
    params = jax.tree.map(lambda x: x - 1.0, init)
    grads = _grads(init, 1)
    transform = kd.optim.decay_to_init(2.0, mask=kd.optim.select("**.kernel"))
    updates, _ = transform.update(grads, transform.init(init), params)
    np.testing.assert_allclose(updates["Dense_0"]["kernel"], grads["Dense_0"]["kernel"] - 2.0, rtol=1e-6)
    np.testing.assert_array_equal(updates["Dense_0"]["bias"], grads["Dense_0"]["bias"])
    np.testing.assert_array_equal(updates["block"]["lora"]["a"], grads["block"]["lora"]["a"])


def test_decay_to_init_needs_the_params():
    transform = kd.optim.decay_to_init(0.1)
    params = {"w": np.ones(2, np.float32)}
    with pytest.raises(ValueError, match="decay_to_init: update\\(\\) needs the current params"):
        transform.update(params, transform.init(params))


# ---------------------------------------------------------------------------------------------- ema_params


def _hand_ema(params: dict, lr: float, decay: float, debias: bool, steps: int) -> tuple[dict, dict]:
    """SGD params and their EMA, step by step in float64 numpy."""
    current = jax.tree.map(lambda x: x.astype(np.float64), params)
    ema = current
    for t in range(1, steps + 1):
        grads = jax.tree.map(lambda x: x.astype(np.float64), _grads(params, t))
        current = jax.tree.map(lambda p, g: p - lr * g, current, grads)
        rate = min(decay, (1 + t) / (10 + t)) if debias else decay
        ema = jax.tree.map(lambda e, p, r=rate: r * e + (1 - r) * p, ema, current)
    return current, ema


def _run_ema(params: dict, lr: float, steps: int, **ema_kwargs) -> tuple[dict, optax.OptState]:
    optimizer = kd.optim.named_chain(sgd=optax.sgd(lr), ema=kd.optim.ema_params(**ema_kwargs))
    state, current = optimizer.init(params), params
    for t in range(1, steps + 1):
        updates, state = jax.jit(optimizer.update)(_grads(params, t), state, current)
        current = optax.apply_updates(current, updates)
    return current, state


@pytest.mark.parametrize("debias", [True, False])
def test_ema_params_matches_a_hand_computed_ema(debias):
    params = _tree()
    current, state = _run_ema(params, 0.1, 12, decay=0.8, debias=debias)
    ref_current, ref_ema = _hand_ema(params, 0.1, 0.8, debias, 12)
    assert int(state["ema"].count) == 12
    for ours, ref in zip(jax.tree.leaves(state["ema"].ema_params), jax.tree.leaves(ref_ema)):
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    for ours, ref in zip(jax.tree.leaves(current), jax.tree.leaves(ref_current)):
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    # The average lags behind the params.
    assert not np.allclose(state["ema"].ema_params["Dense_0"]["kernel"], current["Dense_0"]["kernel"])


def test_ema_params_passes_the_updates_unchanged_and_starts_from_the_init():
    params = _tree()
    transform = kd.optim.ema_params(decay=0.9)
    state = transform.init(params)
    for ours, init in zip(jax.tree.leaves(state.ema_params), jax.tree.leaves(params)):
        np.testing.assert_array_equal(ours, init)
    grads = _grads(params, 0)
    updates, _ = transform.update(grads, state, params)
    for u, g in zip(jax.tree.leaves(updates), jax.tree.leaves(grads)):
        np.testing.assert_array_equal(u, g)


def test_ema_params_keeps_the_accumulator_dtype():
    params = {"w": jnp.ones((3,), jnp.bfloat16)}
    transform = kd.optim.ema_params(decay=0.9, accumulator_dtype=jnp.float32)
    state = transform.init(params)
    _, state = transform.update({"w": jnp.full((3,), 0.5, jnp.bfloat16)}, state, params)
    assert state.ema_params["w"].dtype == jnp.float32
    assert kd.optim.ema_params(decay=0.9).init(params).ema_params["w"].dtype == jnp.bfloat16


def test_ema_params_needs_the_params():
    transform = kd.optim.ema_params(decay=0.9)
    params = {"w": np.ones(2, np.float32)}
    with pytest.raises(ValueError, match="ema_params: update\\(\\) needs the current params"):
        transform.update(params, transform.init(params))


# ---------------------------------------------------------------------------------------------- UseEmaParams


def _state(params: dict, opt_state) -> kd.train.TrainState:
    return kd.train.TrainState(step=jnp.asarray(3), params=params, collections={}, opt_state=opt_state)


def test_use_ema_params_puts_the_average_in_place_of_the_params():
    params = _tree()
    current, opt_state = _run_ema(params, 0.1, 4, decay=0.7)
    state = _state(current, opt_state)
    for transform in (kd.optim.UseEmaParams(), kd.optim.UseEmaParams(ema_params_transform="ema")):
        swapped = transform.transform(state)
        for ours, ema in zip(jax.tree.leaves(swapped.params), jax.tree.leaves(opt_state["ema"].ema_params)):
            np.testing.assert_array_equal(ours, ema)
        assert swapped.opt_state is opt_state and swapped.step is state.step


def test_use_ema_params_finds_the_state_inside_a_plain_chain():
    params = {"w": np.ones(2, np.float32)}
    optimizer = optax.chain(optax.sgd(1.0), kd.optim.ema_params(decay=0.5, debias=False))
    opt_state = optimizer.init(params)
    updates, opt_state = optimizer.update({"w": np.ones(2, np.float32)}, opt_state, params)
    swapped = kd.optim.UseEmaParams().transform(_state(optax.apply_updates(params, updates), opt_state))
    np.testing.assert_allclose(swapped.params["w"], [0.5, 0.5])  # 0.5 * 1 + 0.5 * 0
    assert (
        kd.optim.UseEmaParams(ema_params_transform="[1]").transform(_state(params, opt_state)).params["w"][0]
        == 0.5
    )


def test_use_ema_params_without_one_or_with_two_says_what_to_do():
    params = {"w": np.ones(2, np.float32)}
    with pytest.raises(ValueError, match=r"no EmaParamsState.*add kd\.optim\.ema_params"):
        kd.optim.UseEmaParams().transform(_state(params, optax.adam(1.0).init(params)))
    two = kd.optim.named_chain(a=kd.optim.ema_params(decay=0.5), b=kd.optim.ema_params(decay=0.9)).init(
        params
    )
    with pytest.raises(ValueError, match=r"several EmaParamsStates \(\['a', 'b'\]\).*ema_params_transform="):
        kd.optim.UseEmaParams().transform(_state(params, two))
    with pytest.raises(ValueError, match=r"opt_state\.a is a ScaleByAdamState, not the EmaParamsState"):
        opt = kd.optim.named_chain(a=optax.scale_by_adam(), b=kd.optim.ema_params(decay=0.9)).init(params)
        kd.optim.UseEmaParams(ema_params_transform="a").transform(_state(params, opt))


def test_use_ema_params_with_frozen_params_needs_partial_ok():
    params = _tree()
    optimizer = kd.optim.partial_updates(
        kd.optim.named_chain(sgd=optax.sgd(0.1), ema=kd.optim.ema_params(decay=0.5)),
        mask=kd.optim.select("lora"),
    )
    opt_state, current = optimizer.init(params), params
    for t in range(3):
        updates, opt_state = optimizer.update(_grads(params, t), opt_state, current)
        current = optax.apply_updates(current, updates)
    state = _state(current, opt_state)
    with pytest.raises(KeyError, match=r"no EMA value for params\.Dense_0\.bias; set partial_ok=True"):
        kd.optim.UseEmaParams().transform(state)
    swapped = kd.optim.UseEmaParams(partial_ok=True).transform(state)
    np.testing.assert_array_equal(swapped.params["Dense_0"]["kernel"], current["Dense_0"]["kernel"])
    ema = opt_state.inner_states["train"].inner_state["ema"]  # multi_transform's "train" group
    np.testing.assert_array_equal(swapped.params["block"]["lora"]["a"], ema.ema_params["block"]["lora"]["a"])
    assert not np.array_equal(swapped.params["block"]["lora"]["a"], current["block"]["lora"]["a"])


def _mse(params: dict, ds: lib.Regression) -> float:
    """The fixtures' MSE of the Mlp with `params` over `ds`, batch means averaged, in numpy."""
    means = []
    for batch in ds:
        preds = np.asarray(lib.Mlp().apply({"params": params}, batch["x"]), np.float64)
        means.append(((preds - batch["y"]) ** 2).mean())
    return float(np.mean(means))


def test_an_evaluator_with_use_ema_params_reports_the_metric_of_the_ema_params():
    eval_ds = lib.Regression(num_epochs=1, num_batches=2, seed=3)

    def evaluator(**fields) -> kd.evals.Evaluator:
        return kd.evals.Evaluator(run=kd.evals.EveryNSteps(4), ds=eval_ds, **fields)

    trainer = lib.make_trainer(
        optimizer=kd.optim.named_chain(adam=optax.adam(5e-2), ema=kd.optim.ema_params(decay=0.6)),
        evals={"ema": evaluator(init_transform=kd.optim.UseEmaParams()), "raw": evaluator()},
    )
    state, _ = trainer.train()
    assert int(state.step) == 4
    ema_params = jax.device_get(state.opt_state["ema"].ema_params)
    reported = dict(trainer.writer.scalars["ema/losses/l2"])[4]
    raw = dict(trainer.writer.scalars["raw/losses/l2"])[4]
    np.testing.assert_allclose(reported, _mse(ema_params, eval_ds), rtol=1e-5)
    np.testing.assert_allclose(raw, _mse(jax.device_get(state.params), eval_ds), rtol=1e-5)  # state untouched
    assert abs(reported - raw) > 1e-4


def test_an_evaluator_needs_an_init_transform_with_a_transform_method():
    assert kd.evals.Evaluator().init_transform == kd.ckpts.NoopTransform()
    with pytest.raises(TypeError, match=r"Evaluator\.init_transform: expected an init transform"):
        kd.evals.Evaluator(init_transform=lambda state: state)


def test_use_ema_params_goes_into_a_multi_transform_and_a_non_transform_is_still_refused():
    combined = kd.ckpts.MultiTransform(ema=kd.optim.UseEmaParams())
    assert list(combined.transforms) == ["ema"]
    with pytest.raises(TypeError, match=r"MultiTransform\(bad=...\): expected a kd.ckpts.InitTransform"):
        kd.ckpts.MultiTransform(bad=object())


def test_kauldron_regexes_with_a_star_keep_their_meaning():
    every = _selected_paths(kd.optim.select(".*")(_tree()))
    assert every == _selected_paths(kd.optim.select("**")(_tree())) and len(every) > 2
    assert _selected_paths(kd.optim.select("block.*")(_tree())) == {
        p for p in every if p.startswith("block.")
    }
