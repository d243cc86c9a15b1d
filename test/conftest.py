"""Shared by every pytest suite under test/."""


def pytest_configure(config):
    # tools/test.sh (what CI runs) deselects these; `tools/test.sh --slow`
    # runs only them. A plain `pytest test/...` runs everything.
    config.addinivalue_line(
        "markers", "slow: a long test of a path a faster CI test also covers "
                   "(tools/test.sh --slow runs them)")
