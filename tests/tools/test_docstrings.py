"""Docstring parsing for tool and parameter descriptions."""

import pytest

from toolrelay.tools._docstrings import DocstringInfo, parse_docstring

GOOGLE = """Find orders.

    Searches the order database.

    Args:
        customer: The customer id.
        status: Order status,
            one of open or closed.

    Returns:
        list[str]: Matching orders.
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

Returns
-------
list[str]
    Matching orders.
"""

SPHINX = """Find orders.

Searches the order database.

:param customer: The customer id.
:param status: Order status,
    one of open or closed.
:returns: Matching orders.
:rtype: list[str]
"""


@pytest.mark.parametrize("text", [GOOGLE, NUMPY, SPHINX], ids=["google", "numpy", "sphinx"])
def test_styles(text: str) -> None:
    assert parse_docstring(text) == DocstringInfo(
        description="Find orders.\n\nSearches the order database.",
        parameters={
            "customer": "The customer id.",
            "status": "Order status, one of open or closed.",
        },
        returns="Matching orders.",
    )
    assert parse_docstring(text).tool_description == (
        "Find orders.\n\nSearches the order database.\n\nReturns: Matching orders."
    )


def test_a_docstring_may_start_with_its_args_section() -> None:
    info = parse_docstring(
        """
        Args:
            customer: The customer id.
        """
    )
    assert info == DocstringInfo(parameters={"customer": "The customer id."})
    assert info.tool_description is None


def test_a_returns_section_alone_is_the_description() -> None:
    info = parse_docstring(
        """
        Returns:
            str: Matching orders.
        """
    )
    assert info == DocstringInfo(returns="Matching orders.")
    assert info.tool_description == "Returns: Matching orders."


def test_a_section_title_without_a_blank_line_is_still_a_section() -> None:
    info = parse_docstring(
        """Find orders.
        Args:
            customer: The customer id.
        """
    )
    assert info == DocstringInfo(
        description="Find orders.", parameters={"customer": "The customer id."}
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


def test_a_function_whose_docstring_starts_with_args() -> None:
    def f(customer: str) -> None:
        """
        Args:
            customer: The customer id.
        """

    assert parse_docstring(f) == DocstringInfo(parameters={"customer": "The customer id."})
