"""deepseek-agent's UI-free core: everything but rendering and input.

Front ends talk to it through one callback, `emit(event, data)` (see `core.protocol`).
"""

__version__ = "0.1.0"
