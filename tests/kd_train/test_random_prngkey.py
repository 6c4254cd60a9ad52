"""`kd.random.PRNGKey`: the same keys and draws as raw `jax.random`, through jit, vmap and tree maps."""

from __future__ import annotations

import hashlib

import jax
import kd
import ktyping
import numpy as np
import pytest

PRNGKey = kd.random.PRNGKey


def _sha1_uint32(text: str) -> int:
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:4], "big")


def test_int_seed_is_jax_prngkey_of_that_seed():
    np.testing.assert_array_equal(PRNGKey(7).rng, jax.random.PRNGKey(7))


def test_raw_and_numpy_key_data_are_kept_as_the_key():
    raw = jax.random.PRNGKey(3)
    np.testing.assert_array_equal(PRNGKey(raw).rng, raw)
    np.testing.assert_array_equal(PRNGKey(np.asarray(raw)).rng, raw)
    assert PRNGKey(PRNGKey(raw)).rng is raw


def test_fold_in_a_string_folds_in_its_sha1_prefix():
    key = PRNGKey(0)
    expected = jax.random.fold_in(jax.random.PRNGKey(0), _sha1_uint32("dropout"))
    np.testing.assert_array_equal(key.fold_in("dropout").rng, expected)
    # kd.random's two spellings agree.
    np.testing.assert_array_equal(
        key.fold_in("dropout").rng, kd.random.fold_in_str(jax.random.PRNGKey(0), "dropout")
    )


def test_fold_in_an_int_is_jax_fold_in():
    np.testing.assert_array_equal(PRNGKey(1).fold_in(5).rng, jax.random.fold_in(jax.random.PRNGKey(1), 5))


def test_split_and_next_follow_jax_random_split():
    raw = jax.random.PRNGKey(0)
    keys = PRNGKey(0).split(3)
    assert isinstance(keys, PRNGKey)
    np.testing.assert_array_equal(keys.rng, jax.random.split(raw, 3))
    np.testing.assert_array_equal(PRNGKey(0).next().rng, jax.random.split(raw, 1)[0])
    first, second = PRNGKey(0).split()
    np.testing.assert_array_equal(first.rng, jax.random.split(raw)[0])
    np.testing.assert_array_equal(second.rng, jax.random.split(raw)[1])


def test_iteration_and_indexing_give_keys():
    keys = PRNGKey(0).split(4)
    rows = list(keys)
    assert len(rows) == len(keys) == 4
    assert all(isinstance(k, PRNGKey) for k in rows)
    np.testing.assert_array_equal(keys[2].rng, jax.random.split(jax.random.PRNGKey(0), 4)[2])
    np.testing.assert_array_equal(keys[1:3].rng, jax.random.split(jax.random.PRNGKey(0), 4)[1:3])


def test_samplers_draw_what_jax_random_draws_with_the_key():
    key = PRNGKey(4)
    np.testing.assert_array_equal(key.uniform((5,)), jax.random.uniform(key.rng, (5,)))
    np.testing.assert_array_equal(key.normal((2, 3)), jax.random.normal(key.rng, (2, 3)))
    np.testing.assert_array_equal(key.randint((4,), 0, 10), jax.random.randint(key.rng, (4,), 0, 10))


def test_as_seed_is_kd_random_seed_and_fits_uint32():
    key = PRNGKey(11)
    seed = key.as_seed()
    assert seed == kd.random.random_seed(jax.random.PRNGKey(11))
    assert 0 <= seed < 2**32
    assert PRNGKey(12).as_seed() != seed


def test_a_key_passes_through_jit_as_a_key():
    @jax.jit
    def step(key):
        a, b = key.split()
        return a.normal(), b

    value, out_key = step(PRNGKey(0))
    assert isinstance(out_key, PRNGKey)
    a, b = jax.random.split(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(value, jax.random.normal(a))
    np.testing.assert_array_equal(out_key.rng, b)


def test_a_traced_int_is_a_seed_under_jit():
    out = jax.jit(lambda seed: PRNGKey(seed).fold_in("x"))(5)
    assert isinstance(out, PRNGKey)
    np.testing.assert_array_equal(out.rng, jax.random.fold_in(jax.random.PRNGKey(5), _sha1_uint32("x")))


def test_vmap_maps_over_a_batch_of_keys():
    keys = PRNGKey(0).split(4)
    draws = jax.vmap(lambda k: k.uniform())(keys)
    expected = jax.vmap(lambda k: jax.random.uniform(k))(jax.random.split(jax.random.PRNGKey(0), 4))
    np.testing.assert_array_equal(draws, expected)
    out = jax.vmap(lambda k: k.fold_in(1))(keys)
    assert isinstance(out, PRNGKey)
    assert out.shape == (4, 2)


def test_tree_map_sees_the_key_array_as_the_one_leaf():
    keys = PRNGKey(0).split(3)
    assert jax.tree.leaves(keys)[0] is keys.rng
    assert jax.tree.map(lambda x: None, {"k": keys}) == {"k": None}
    same = jax.tree.map(lambda x: x, keys)
    assert isinstance(same, PRNGKey)
    np.testing.assert_array_equal(same.rng, keys.rng)
    as_numpy = jax.tree.map(np.asarray, keys)
    assert isinstance(as_numpy, np.ndarray)
    np.testing.assert_array_equal(np.asarray(keys), as_numpy)


def test_typed_keys_are_wrapped_and_drawn_from():
    typed = jax.random.key(0)
    key = PRNGKey(typed)
    np.testing.assert_array_equal(key.uniform(), jax.random.uniform(typed))
    np.testing.assert_array_equal(
        jax.random.key_data(key.split(2).rng), jax.random.key_data(jax.random.split(typed, 2))
    )


def test_the_key_reads_as_a_prngkey_annotation():
    assert isinstance(PRNGKey(0), ktyping.PRNGKey)
    assert not isinstance(PRNGKey(0).split(3), ktyping.PRNGKey)
    assert isinstance(PRNGKey(0).split(3), ktyping.PRNGKeyArray)
    assert jax.numpy.asarray(PRNGKey(2)).tolist() == jax.random.PRNGKey(2).tolist()


@pytest.mark.parametrize("bad", [1.5, "0", True, None])
def test_a_seed_that_is_no_int_or_key_is_refused(bad):
    with pytest.raises(TypeError, match="seed_or_rng must be an int seed"):
        PRNGKey(bad)


def test_an_array_that_is_no_key_is_refused_with_its_dtype_and_shape():
    with pytest.raises(ValueError, match=r"float32 and shape \(3,\)"):
        PRNGKey(np.zeros(3, np.float32))


def test_impl_with_an_existing_key_is_refused():
    with pytest.raises(ValueError, match="impl='rbg'"):
        PRNGKey(jax.random.PRNGKey(0), impl="rbg")


def test_fold_in_refuses_a_float():
    with pytest.raises(TypeError, match="fold_in: data must be an int or a str; got float"):
        PRNGKey(0).fold_in(1.5)
