"""Docstring parsing for tool and parameter descriptions."""

import pytest

from toolrelay.tools.docstrings import DocstringInfo, parse_docstring

GOOGLE = """Find orders.

    Searches the order database.

    Args:
        customer: The customer id.
        status: Order status,
            one of open or closed.
    """

NUMPY = """Find orders.

Searches the order database.

Parameters
----------
customer : str
    The customer id.
status : str
    Order status,
    one of open or closed.
"""

SPHINX = """Find orders.

Searches the order database.

:param customer: The customer id.
:param status: Order status,
    one of open or closed.
:returns: Matching orders.
"""


@pytest.mark.parametrize("text", [GOOGLE, NUMPY, SPHINX], ids=["google", "numpy", "sphinx"])
def test_styles(text: str) -> None:
    assert parse_docstring(text) == DocstringInfo(
        description="Find orders.\n\nSearches the order database.",
        parameters={
            "customer": "The customer id.",
            "status": "Order status, one of open or closed.",
        },
    )


def test_function_docstring() -> None:
    def f(x: int) -> None:
        """Summary only."""

    assert parse_docstring(f) == DocstringInfo(description="Summary only.")


@pytest.mark.parametrize("text", [None, "", "   \n  "])
def test_missing_docstring(text: str | None) -> None:
    assert parse_docstring(text) == DocstringInfo()


def test_function_without_docstring() -> None:
    def f() -> None:
        pass

    assert parse_docstring(f) == DocstringInfo()


def test_parameters_mapping_is_read_only() -> None:
    info = parse_docstring(GOOGLE)
    with pytest.raises(TypeError):
        info.parameters["x"] = "y"  # type: ignore[index]
