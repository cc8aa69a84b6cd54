"""Developer tools, not part of the product and not test support: a local llama.cpp model server
(devtools/local_model.py) and a reader of what a one-file exe carries (devtools/exe_archive.py).
Tests, benchmarks and people use them; nothing in core/, ui/, agent.py or tui.py imports them, so
neither the wheel nor the exe carries them."""
