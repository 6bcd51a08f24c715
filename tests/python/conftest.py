"""Shared fixtures of the Python binding's tests: the sample data of the checkout."""

import os

import pytest

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")


@pytest.fixture
def data():
    """The path of a file under data/."""
    return lambda *parts: os.path.join(DATA, *parts)
