"""{{ description }}"""


def add(left: int, right: int) -> int:
    """Adds two numbers."""
    return left + right
