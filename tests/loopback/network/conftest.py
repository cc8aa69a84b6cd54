from tests.support.sandbox_fixtures import backend, layout

__all__ = ["backend", "layout"]
