"""PyInstaller runtime hook: the exe's packed modules and binaries become importable (core/frozen_imports.py)."""

from core.frozen_imports import install

install()
