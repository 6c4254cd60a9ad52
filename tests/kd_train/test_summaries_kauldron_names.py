"""kd.summaries under Kauldron's names: ShowTexts, ShowDifferenceImages, ShowSegmentations, ShowBoxes,
ShowPointCloud / PointCloud and HistogramSummary — their values, and what TensorBoard reads back of them."""

from __future__ import annotations

import io
import json

import jax
import jax.numpy as jnp
import kd
import matplotlib
import numpy as np
import pytest
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.mesh import plugin_data_pb2

S = kd.summaries
_KEEP_ALL = {"scalars": 0, "images": 0, "histograms": 0, "tensors": 0}


def _computed(summary, **inputs):
    return jax.device_get(summary.get_state(**inputs)).compute()


def _events(folder) -> EventAccumulator:
    events = EventAccumulator(str(folder), size_guidance=_KEEP_ALL)
    events.Reload()
    return events


def _written(tmp_path, step, summaries) -> EventAccumulator:
    writer = kd.writers.TensorBoardWriter(workdir=str(tmp_path))
    writer.write_summaries(step, summaries)
    writer.close()
    return _events(tmp_path / "train")


def _decoded(events, tag) -> np.ndarray:
    [event] = events.Images(tag)
    return np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))


def test_every_kauldron_summary_name_is_exported():
    for name in (
        "Histogram",
        "HistogramSummary",
        "PointCloud",
        "ShowBoxes",
        "ShowDifferenceImages",
        "ShowImages",
        "ShowPointCloud",
        "ShowSegmentations",
        "ShowTexts",
    ):
        assert name in S.__all__ and hasattr(S, name), name


# ---------------------------------------------------------------------------------------------- ShowTexts


def test_show_texts_keeps_the_first_num_texts_across_merges():
    summary = S.ShowTexts(texts="t", num_texts=3)
    state = summary.get_state(texts=["a", "b"]).merge(
        summary.get_state(texts=np.array([["c", "d"], ["e", "f"]]))
    )
    out = state.compute()
    assert out.dtype == object and out.tolist() == ["a", "b", "c"]


def test_show_texts_takes_one_string_and_decodes_bytes():
    summary = S.ShowTexts(texts="t")
    assert summary.get_state(texts="one").merge(summary.get_state(texts=[b"two"])).compute().tolist() == [
        "one",
        "two",
    ]


def test_show_texts_rejects_token_ids_naming_the_argument():
    with pytest.raises(TypeError, match=r"argument texts must hold texts .* got a int"):
        S.ShowTexts(texts="t").get_state(texts=np.array([1, 2]))


def test_show_texts_is_a_text_table_in_tensorboard(tmp_path):
    value = S.ShowTexts(texts="t")(texts=["Some text", "Ünïcode"])
    [event] = _written(tmp_path, 7, {"summaries/samples": value}).Tensors("summaries/samples")
    assert event.step == 7
    assert [d.size for d in event.tensor_proto.tensor_shape.dim] == [2]
    assert [s.decode() for s in event.tensor_proto.string_val] == ["Some text", "Ünïcode"]


# ---------------------------------------------------------------------------------------------- HistogramSummary


def test_histogram_summary_keeps_every_value_of_every_batch_in_jit():
    summary = S.HistogramSummary(tensor="x", num_buckets=7)
    a, b = jnp.arange(6.0).reshape(2, 3), jnp.arange(6.0, 10.0)
    merged = jax.jit(lambda x, y: summary.get_state(tensor=x).merge(summary.get_state(tensor=y)))(a, b)
    value = jax.device_get(merged).compute()
    np.testing.assert_array_equal(value.tensor, np.arange(10.0))
    assert value.tensor is value.values and value.num_buckets == 7


def test_histogram_summary_of_an_empty_tensor_raises():
    with pytest.raises(ValueError, match="HistogramSummary: no values"):
        S.HistogramSummary(tensor="x")(tensor=jnp.zeros((0, 3)))


def test_histogram_summary_is_a_histogram_in_tensorboard(tmp_path):
    value = S.HistogramSummary(tensor="x", num_buckets=5)(tensor=jnp.arange(20.0))
    [event] = _written(tmp_path, 3, {"summaries/h": value}).Histograms("summaries/h")
    h = event.histogram_value
    assert (h.num, h.min, h.max, h.sum) == (20, 0, 19, 190)


# ---------------------------------------------------------------------------------------------- ShowDifferenceImages


def test_difference_images_are_the_channel_mean_of_the_absolute_difference_scaled_to_min_max():
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4, 5, 3), np.float32), rng.random((3, 4, 5, 3), np.float32)
    out = _computed(S.ShowDifferenceImages(images1="a", images2="b", num_images=2), images1=a, images2=b)
    diff = np.abs(a[:2] - b[:2]).mean(-1)
    expected = (diff - diff.min()) / (diff.max() - diff.min())
    assert out.shape == (2, 4, 5, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.repeat(expected[..., None], 3, -1), atol=1e-6)


def test_difference_images_with_vrange_map_minus_to_plus_range_onto_the_colormap():
    a = np.array([0.0, 1.0, 0.5, 3.0], np.float32).reshape(1, 1, 4, 1)
    b = np.array([0.0, 0.0, 1.5, -1.0], np.float32).reshape(1, 1, 4, 1)
    out = _computed(
        S.ShowDifferenceImages(images1="a", images2="b", num_images=1, vrange=(0.0, 2.0)),
        images1=a,
        images2=b,
    )
    # clipped to [0, 2] and scaled to [0, 1]: |0-0|, |.5-0|, |.25-.75|, |1-0| = 0, .5, .5, 1; shown over [-2, 2].
    np.testing.assert_allclose(out[0, 0, :, 0], (np.array([0, 0.5, 0.5, 1.0]) + 2) / 4, atol=1e-6)


def test_difference_images_colormap_matches_matplotlib():
    a = np.linspace(0, 1, 16, dtype=np.float32).reshape(1, 4, 4, 1)
    out = _computed(
        S.ShowDifferenceImages(images1="a", images2="b", num_images=1, cmap="viridis"),
        images1=a,
        images2=np.zeros_like(a),
    )
    expected = matplotlib.colormaps["viridis"](a[..., 0])[..., :3]
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_difference_images_rearrange_merges_time_into_the_batch():
    a = np.ones((2, 3, 4, 4, 1), np.float32)
    summary = S.ShowDifferenceImages(
        images1="a", images2="b", num_images=5, rearrange="b t h w c -> (b t) h w c"
    )
    assert _computed(summary, images1=a, images2=a * 0).shape == (5, 4, 4, 3)


def test_difference_images_of_different_shapes_are_rejected():
    with pytest.raises(ValueError, match=r"same shape .* got \(1, 2, 2, 1\) and \(1, 2, 3, 1\)"):
        S.ShowDifferenceImages(images1="a", images2="b", num_images=1).get_state(
            images1=jnp.zeros((1, 2, 2, 1)), images2=jnp.zeros((1, 2, 3, 1))
        )


# ---------------------------------------------------------------------------------------------- ShowSegmentations


def _srgb_to_oklab_reference(rgb):
    """Oklab of sRGB via Ottosson's linear-sRGB -> LMS matrix (an independent route: no XYZ step)."""
    lin = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    m1 = np.array(
        [
            [0.4122214708, 0.5363325363, 0.0514459929],
            [0.2119034982, 0.6806995451, 0.1073969566],
            [0.0883024619, 0.2817188376, 0.6299787005],
        ]
    )
    m2 = np.array(
        [
            [0.2104542553, 0.7936177850, -0.0040720468],
            [1.9779984951, -2.4285922050, 0.4505937099],
            [0.0259040371, 0.7827717662, -0.8086757660],
        ]
    )
    return np.cbrt(lin @ m1.T) @ m2.T


def test_integer_segments_get_distinct_colours_of_evenly_spaced_oklab_hues_from_blue():
    seg = np.array([0, 1, 2, 3], np.int32).reshape(1, 1, 4, 1)
    out = _computed(S.ShowSegmentations(segmentations="s"), segmentations=seg)
    assert out.shape == (1, 1, 4, 3) and out.dtype == np.float32
    colours = out[0, 0].astype(np.float64)
    assert len({tuple(np.round(c, 3)) for c in colours}) == 4
    lab = _srgb_to_oklab_reference(colours)
    hues = np.arctan2(lab[:, 2], lab[:, 1])
    wanted = 1.5 * np.pi + np.arange(4) * np.pi / 2  # out of gamut, clipping to sRGB moves hues a little
    np.testing.assert_allclose(np.angle(np.exp(1j * (hues - wanted))), 0.0, atol=0.35)


def test_soft_masks_mix_their_colours_in_oklab():
    palette = ((0.8, 0.3, 0.3), (0.3, 0.5, 0.8))
    masks = np.array([0.25, 0.75], np.float32).reshape(1, 1, 1, 2)
    out = _computed(S.ShowSegmentations(segmentations="s", palette=palette), segmentations=masks)
    mixed = 0.25 * _srgb_to_oklab_reference(np.array(palette[0])) + 0.75 * _srgb_to_oklab_reference(
        np.array(palette[1])
    )
    np.testing.assert_allclose(_srgb_to_oklab_reference(out[0, 0, 0].astype(np.float64)), mixed, atol=2e-3)


def test_a_given_palette_colours_hard_segments_exactly():
    palette = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0))
    masks = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], np.float32).reshape(1, 1, 2, 3)
    out = _computed(S.ShowSegmentations(segmentations="s", palette=palette, hard=True), segmentations=masks)
    np.testing.assert_allclose(out[0, 0], [[1, 0, 0], [0, 1, 0]])


def test_entropy_darkens_uncertain_pixels_to_black():
    masks = np.array([[0.5, 0.5], [1.0, 0.0]], np.float32).reshape(1, 1, 2, 2)
    out = _computed(S.ShowSegmentations(segmentations="s", entropy=True), segmentations=masks)
    np.testing.assert_allclose(out[0, 0, 0], 0.0, atol=1e-6)  # entropy 1 bit of 1: black
    plain = _computed(S.ShowSegmentations(segmentations="s"), segmentations=masks)
    np.testing.assert_allclose(out[0, 0, 1], plain[0, 0, 1], atol=1e-4)  # certain: unchanged


def test_edges_set_the_border_between_segments_to_edge_lightness():
    seg = np.zeros((1, 6, 6, 1), np.int32)
    seg[:, :, 3:] = 1
    out = _computed(S.ShowSegmentations(segmentations="s", edges=True, edge_lightness=0.0), segmentations=seg)
    plain = _computed(S.ShowSegmentations(segmentations="s"), segmentations=seg)
    np.testing.assert_allclose(out[0, :, 2:4], 0.0, atol=1e-6)  # the two border columns (np.gradient's)
    blurred = out[0, :, 0] / plain[0, :, 0]  # two pixels away: darkened by the blurred edge, not black
    assert np.all((blurred > 0.5) & (blurred < 1.0))
    np.testing.assert_allclose(blurred, blurred[0, 0])


def test_float_segmentation_of_one_channel_is_rejected():
    with pytest.raises(ValueError, match=r"one channel are ambiguous"):
        S.ShowSegmentations(segmentations="s").get_state(segmentations=jnp.zeros((1, 2, 2, 1)))


def test_segmentation_state_is_made_under_jit():
    summary = S.ShowSegmentations(segmentations="s", num_images=2)
    state = jax.jit(lambda s: summary.get_state(segmentations=s))(jnp.zeros((3, 4, 4, 1), jnp.int32))
    assert jax.device_get(state).compute().shape == (2, 4, 4, 3)


# ---------------------------------------------------------------------------------------------- ShowBoxes


def test_boxes_are_one_pixel_outlines_at_truncated_corners():
    images = jnp.zeros((1, 5, 9, 3))
    boxes = jnp.array([[[0.25, 0.25, 0.75, 0.75]]])  # rows trunc(.25*4)=1..3, cols trunc(.25*8)=2..6
    out = _computed(S.ShowBoxes(images="i", boxes="b", num_colors=1), images=images, boxes=boxes)
    expected = np.zeros((5, 9))
    expected[1, 2:7] = expected[3, 2:7] = 1
    expected[1:4, 2] = expected[1:4, 6] = 1
    np.testing.assert_array_equal(out[0, ..., 0], expected)  # the first hue is red: (1, 0, 0)
    np.testing.assert_array_equal(out[0, ..., 1:], 0)


def test_boxes_cycle_through_uniform_hues_and_skip_masked_boxes():
    images = jnp.full((1, 8, 8, 3), 0.5)
    boxes = jnp.array([[[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0, 0, 1, 1]]])
    mask = jnp.array([[[True], [True], [False]]])
    out = _computed(
        S.ShowBoxes(images="i", boxes="b", boxes_mask="m", num_colors=3),
        images=images,
        boxes=boxes,
        boxes_mask=mask,
    )
    np.testing.assert_allclose(out[0, 0, 0], [1, 0, 0])  # box 0: hue 0
    np.testing.assert_allclose(out[0, 7, 7], [0, 1, 0])  # box 1: hue 1/3
    np.testing.assert_allclose(out[0, 0, 7], [0.5, 0.5, 0.5])  # box 2 masked out: not drawn


def test_boxes_in_vrange_rescales_the_images():
    out = _computed(
        S.ShowBoxes(images="i", boxes="b", in_vrange=(-1.0, 1.0)),
        images=jnp.zeros((1, 4, 4, 1)),
        boxes=jnp.zeros((1, 0, 4)),
    )
    np.testing.assert_allclose(out, 0.5)


# ---------------------------------------------------------------------------------------------- ShowPointCloud


def test_point_cloud_concatenates_batches_keeping_num_points_each():
    summary = S.ShowPointCloud(point_clouds="p", point_colors="c", num_points=2)
    p1, p2 = jnp.arange(9.0).reshape(3, 3), jnp.arange(9.0, 15.0).reshape(2, 3)
    state = summary.get_state(point_clouds=p1, point_colors=p1 / 20).merge(
        summary.get_state(point_clouds=p2, point_colors=p2 / 20)
    )
    cloud = jax.device_get(state).compute()
    assert isinstance(cloud, S.PointCloud)
    np.testing.assert_array_equal(cloud.point_clouds, np.concatenate([p1[:2], p2]))
    np.testing.assert_allclose(cloud.point_colors, cloud.point_clouds / 20)
    assert cloud.configs["material"] == {"cls": "PointsMaterial", "size": 0.03}


def test_point_cloud_rearrange_and_configs():
    summary = S.ShowPointCloud(
        point_clouds="p", rearrange="b n d -> (b n) d", configs={"material": {"size": 0.1}}
    )
    cloud = summary(point_clouds=jnp.zeros((2, 4, 3)))
    assert cloud.point_clouds.shape == (8, 3) and cloud.point_colors is None
    assert cloud.configs == {"material": {"size": 0.1}}


def test_point_cloud_rejects_points_not_n_by_3():
    with pytest.raises(ValueError, match=r"argument point_clouds must be float \(n, 3\).* shape \(4, 2\)"):
        S.ShowPointCloud(point_clouds="p").get_state(point_clouds=jnp.zeros((4, 2)))


def test_point_cloud_is_a_mesh_in_tensorboard(tmp_path):
    points = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], np.float32)
    cloud = S.ShowPointCloud(point_clouds="p", point_colors="c")(
        point_clouds=points, point_colors=np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]], np.float32)
    )
    events = _written(tmp_path, 4, {"summaries/cloud": cloud})
    by_type = {}
    for tag in events.Tags()["tensors"]:
        meta = plugin_data_pb2.MeshPluginData.FromString(events.SummaryMetadata(tag).plugin_data.content)
        [event] = events.Tensors(tag)
        by_type[meta.content_type] = (meta, event)
    vertex_meta, vertices = by_type[plugin_data_pb2.MeshPluginData.VERTEX]
    _, colors = by_type[plugin_data_pb2.MeshPluginData.COLOR]
    assert vertex_meta.name == "summaries/cloud" and vertices.step == 4
    np.testing.assert_allclose(np.array(vertices.tensor_proto.float_val).reshape(1, 2, 3), points[None])
    np.testing.assert_allclose(
        np.array(colors.tensor_proto.float_val).reshape(2, 3), [[255, 0, 128], [0, 255, 0]]
    )
    assert json.loads(vertex_meta.json_config)["camera"]["cls"] == "PerspectiveCamera"
    assert plugin_data_pb2.MeshPluginData.FACE not in by_type


# ---------------------------------------------------------------------------------------------- the image summaries in TensorBoard


def test_image_summaries_are_images_in_tensorboard(tmp_path):
    a = np.linspace(0, 1, 2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 1)
    values = {
        "summaries/diff": S.ShowDifferenceImages(images1="a", images2="b", num_images=1)(
            images1=a, images2=np.zeros_like(a)
        ),
        "summaries/seg": S.ShowSegmentations(segmentations="s", palette=((0, 0, 1.0), (1.0, 1.0, 0)))(
            segmentations=np.array([[0, 1, 1]] * 3, np.int32).reshape(1, 3, 3, 1)
        ),
        "summaries/boxes": S.ShowBoxes(images="i", boxes="b")(
            images=jnp.zeros((1, 3, 3, 3)), boxes=jnp.array([[[0.0, 0.0, 1.0, 1.0]]])
        ),
    }
    events = _written(tmp_path, 2, values)
    diff = _decoded(events, "summaries/diff")
    np.testing.assert_array_equal(diff[..., 0], np.round(np.linspace(0, 1, 9).reshape(3, 3) * 255))
    seg = _decoded(events, "summaries/seg")
    np.testing.assert_array_equal(seg[0], [[0, 0, 255], [255, 255, 0], [255, 255, 0]])
    boxes = _decoded(events, "summaries/boxes")
    assert boxes[1, 1].tolist() == [0, 0, 0] and boxes[0, 0].tolist() == [255, 0, 0]
