"""The parts of the full-screen front end (`tui.py`): one job per module.

    render      Rich renderables → prompt_toolkit fragments, off-screen, with a style cache
    markdown    incremental Markdown: finished blocks cached, only the open tail re-rendered
    blocks      what the transcript is made of (user, answer, reasoning, tool, banner)
    transcript  the scrolling control that draws only the visible lines
    state       the event → blocks/status model, fed from a thread-safe queue
    status      the one-line status bar
    inputbox    the input box: keys, history, paste placeholders, / and @ completion
    dialogs     the approval modal
    clipboard   /copy and /export
    app         the Application: layout, key bindings, the worker thread, slash commands
"""
