"""Version parsing used to gate patches (kd_compat._versions)."""

import pytest
from kd_compat._versions import in_range, installed_version, release


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.14.0", (1, 14, 0)),
        ("1.14", (1, 14)),
        ("1.15.0rc1", (1, 15, 0)),
        ("1.14.0.dev20260101", (1, 14, 0)),
        ("1.14.0.post1", (1, 14, 0)),
        ("2!1.2.3", (1, 2, 3)),
        ("1.2.3+local.7", (1, 2, 3)),
        ("0.10.2", (0, 10, 2)),
    ],
)
def test_release_is_the_numeric_prefix(version, expected):
    assert release(version) == expected


@pytest.mark.parametrize(
    ("version", "inside"),
    [
        ("1.13.9", False),
        ("1.14", True),
        ("1.14.0", True),
        ("1.14.0.dev1", True),
        ("1.14.7", True),
        ("1.15", False),
        ("1.15.0", False),
        ("1.16.0", False),
    ],
)
def test_in_range_includes_lower_and_excludes_upper(version, inside):
    assert in_range(version, (1, 14, 0), (1, 15, 0)) is inside


def test_installed_version_reads_metadata():
    assert installed_version("pytest") == pytest.__version__


def test_installed_version_of_a_missing_distribution_is_none():
    assert installed_version("kd-compat-no-such-distribution") is None
