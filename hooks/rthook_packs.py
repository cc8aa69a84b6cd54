"""PyInstaller runtime hook, run before the program: the exe's packs become importable
(core/frozen_imports.py)."""

from core.frozen_imports import install

install()
